import { spawn } from "node:child_process";
import { once } from "node:events";
import { lstatSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openEngine } from "../../src/engine/client.js";
import { enginePlace } from "../../src/engine/place.js";
import { CLI, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { NO_HOOKS, processesOf, startServe, stopEngines } from "../helpers/engine.js";
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
        Array.from({ length: 4 }, (_, i) => openEngine({ name: `racer-${i}`, hooks: NO_HOOKS, env })),
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

  it("is out of reach of sandboxed commands, and with a socket path the kernel would not take, not started", async () => {
    // a data folder outside /tmp (the sandbox's /tmp is its own): the socket shows there, and is covered
    const data = await mkdtemp(join(homedir(), ".umbra-test-engine-"));
    const root = await copyExamples();
    const outside = { ...env, UMBRA_HOME: data };
    try {
      await startServe(outside);
      const probe = `require("node:net").connect(${JSON.stringify(enginePlace(outside).socket)}).on("connect", () => process.exit(0)).on("error", (e) => { console.log(e.code); process.exit(3); })`;
      const run = umbraSync(outside, ["run", "--root", root, "--", process.execPath, "-e", probe]);
      expect([run.code, run.stdout.trim()]).toEqual([3, "EACCES"]);
    } finally {
      await stopEngines(outside);
      await cleanup(data, join(root, ".."));
    }

    const deep = { ...env, UMBRA_HOME: join(home, "d".repeat(60), "e".repeat(60)) };
    const serve = umbraSync(deep, ["serve"]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/^umbra: the engine's socket path .* set UMBRA_HOME to a shorter folder\n$/);
  });

  it("stops by itself when idle: after --idle-minutes, else after engine.idleMinutes of the user's config", async () => {
    /** `umbra serve ARGS` run to its end: its exit status and what it said. */
    const served = async (args: string[]) => {
      const child = spawn(process.execPath, [CLI, "serve", ...args], {
        env,
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (data: Buffer) => {
        stderr += data.toString("utf8");
      });
      const [code] = await once(child, "exit");
      return { code, stderr };
    };
    const flagged = await served(["--idle-minutes", "0.005"]);
    expect(flagged.code).toBe(0);
    expect(flagged.stderr).toMatch(/listening on .*\n.*stopped \(idle\)\n$/);

    await mkdir(join(home, "config", "umbra"), { recursive: true });
    await writeFile(
      join(home, "config", "umbra", "config.json"),
      JSON.stringify({ engine: { idleMinutes: 0.005 } }),
    );
    const configured = await served([]);
    expect(configured.code).toBe(0);
    expect(configured.stderr).toMatch(/\(stops after 0.005 idle minute\(s\)\)\n.*stopped \(idle\)\n$/);

    const bad = umbra(["serve", "--idle-minutes", "soon"]);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      "umbra: --idle-minutes must be a number from 0 to 1000000, got soon\n",
    ]);
  });
});
