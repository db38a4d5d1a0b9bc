import { once } from "node:events";
import { lstatSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openEngine } from "../../src/engine/client.js";
import { enginePlace } from "../../src/engine/place.js";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { processesOf, startServe, stopEngines } from "../helpers/engine.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

let home: string;
let env: NodeJS.ProcessEnv;

function umbra(args: string[]) {
  return umbraSync(env, args);
}

function status(): { running: boolean; pid?: number; clients?: number; calls?: number } {
  return JSON.parse(umbra(["serve", "--status", "--json"]).stdout) as { running: boolean; pid?: number };
}

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("serve-home");
  env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await stopEngines(env);
  await cleanup(home);
});

describe("umbra serve", () => {
  it("runs one engine per user: a second one exits saying so; --status and --stop reach it", async () => {
    const none = umbra(["serve", "--status"]);
    expect([none.code, none.stdout]).toEqual([1, "no engine running\n"]);
    expect(umbra(["serve", "--stop"]).stdout).toBe("no engine running\n");

    const child = await startServe(env, ["--idle-minutes", "0"]);
    const second = umbra(["serve"]);
    expect(second.code).toBe(2);
    expect(second.stderr).toBe(
      `umbra: an engine already runs (pid ${child.pid}); umbra serve --stop stops it\n`,
    );
    expect(status()).toMatchObject({ running: true, pid: child.pid, clients: 0, calls: 0 });
    expect(umbra(["serve", "--status"]).stdout).toMatch(
      new RegExp(`^engine running: pid ${child.pid}, 0 client\\(s\\), 0 call\\(s\\), up \\d+s\\n`),
    );

    const exited = once(child, "exit");
    const stop = umbra(["serve", "--stop"]);
    expect([stop.code, stop.stdout]).toEqual([0, `stopped the engine (pid ${child.pid})\n`]);
    expect(await exited).toEqual([0, null]);
    expect(() => lstatSync(enginePlace(env).socket)).toThrow(/ENOENT/);
    expect(status()).toMatchObject({ running: false });
  });

  it("replaces the socket an engine that crashed left behind", async () => {
    const crashed = await startServe(env);
    const exited = once(crashed, "exit");
    crashed.kill("SIGKILL");
    await exited;
    expect(lstatSync(enginePlace(env).socket).isSocket()).toBe(true);
    expect(umbra(["serve", "--status"]).code).toBe(1);

    const next = await startServe(env);
    expect(status()).toMatchObject({ running: true, pid: next.pid });
  });

  it("starts one engine for clients that race to start it, detached, its output in engine.log", async () => {
    const root = await copyExamples();
    try {
      const clients = await Promise.all(
        Array.from({ length: 4 }, (_, i) => openEngine({ name: `racer-${i}`, env })),
      );
      const answers = await Promise.all(clients.map((client) => client.call("status", { root })));
      const pids = new Set(answers.map((answer) => answer.engine.pid));
      expect(pids.size).toBe(1);
      expect(status()).toMatchObject({ running: true, pid: [...pids][0], clients: 4 });
      // the engines that lost the race have exited
      await waitUntil(
        () => processesOf(env.UMBRA_HOME ?? "").filter((pid) => !pids.has(pid)).length === 0,
        "the engines that lost to exit",
      );
      for (const client of clients) await client.close();
      await waitUntil(() => status().clients === 0, "the clients to be gone");
      expect(readFileSync(enginePlace(env).log, "utf8")).toMatch(/listening on/);
      expect(lstatSync(enginePlace(env).log).mode & 0o777).toBe(0o600);
    } finally {
      await cleanup(join(root, ".."));
    }
  });

  it("stops by itself when idle: after --idle-minutes, else after engine.idleMinutes of the user's config", async () => {
    const flagged = await startServe(env, ["--idle-minutes", "0.005"]);
    const [code] = await once(flagged, "exit");
    expect(code).toBe(0);

    await mkdir(join(home, "config", "umbra"), { recursive: true });
    await writeFile(
      join(home, "config", "umbra", "config.json"),
      JSON.stringify({ engine: { idleMinutes: 0.005 } }),
    );
    const configured = await startServe(env);
    let stderr = "";
    configured.stderr?.on("data", (data: Buffer) => {
      stderr += data.toString("utf8");
    });
    expect(await once(configured, "exit")).toEqual([0, null]);
    expect(stderr).toMatch(/stopped \(idle\)/);

    const bad = umbra(["serve", "--idle-minutes", "soon"]);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      "umbra: --idle-minutes must be a number from 0 to 1000000, got soon\n",
    ]);
  });
});
