import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { mkdir, readFile, realpath, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { evalRunsDir, listEvalRuns } from "../../src/eval/store.js";
import { fork } from "../../src/shadow/index.js";
import { CLI, type CliOutcome, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, EXAMPLES, tempDir } from "../helpers/workspace.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

/** `umbra ARGS` run from the folder `cwd`. */
function umbraIn(cwd: string, args: string[]): CliOutcome {
  return umbraSync(env, args, undefined, cwd);
}

function umbra(args: string[]): CliOutcome {
  return umbraIn(root, args);
}

/**
 * Runs `umbra ARGS` with its standard output going into a pipe that nobody reads any more, as after
 * `umbra … | head` has printed its lines: a FIFO opened for reading and writing, then closed for reading.
 */
function umbraIntoClosedPipe(args: string[]): CliOutcome {
  const script = 'mkfifo "$0/pipe" && exec 3<>"$0/pipe" 4>"$0/pipe" 3<&- && exec "$@" >&4 4>&-';
  const result = spawnSync("sh", ["-c", script, home, process.execPath, CLI, ...args], {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Resolves with stderr once it contains `text`. */
function stderrContaining(child: ChildProcess, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes(text)) resolve(stderr);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before "${text}": ${stderr}`)));
  });
}

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("small-home");
  root = await realpath(await copyExamples());
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
  delete env.UMBRA_MODEL;
  delete env.UMBRA_MODEL_BASE_URL;
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

describe("output into a closed pipe (umbra … | head)", () => {
  it("ends grep and search quietly, with status 0 and no stack trace", async () => {
    expect(umbra(["index", root]).code).toBe(0);
    for (const args of [
      ["grep", "import", "--root", root],
      ["search", "--root", root, "invoice total"],
      ["search", "--root", root, "--json", "invoice total"],
    ]) {
      await rm(join(home, "pipe"), { force: true });
      const result = umbraIntoClosedPipe(args);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
    }
  });
});

describe("umbra watch", () => {
  it("refuses an --interval that is not a positive number of seconds, with one line and status 2", () => {
    for (const interval of ["abc", "0", "-1", "", "Infinity"]) {
      const result = umbra(["watch", root, "--interval", interval]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(/--interval must be a number of seconds/);
    }
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "stops on %s",
    async (signal) => {
      const child = spawn(process.execPath, [CLI, "watch", root, "--interval", "1"], {
        env,
        stdio: ["ignore", "ignore", "pipe"],
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once("exit", (code, killedBy) => resolve({ code, signal: killedBy })),
      );
      const stderr = stderrContaining(child, "synced (start)");
      await stderr;
      child.kill(signal);
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(await stderr).not.toMatch(/sync failed/);
    },
    120_000,
  );
});

describe("the workspace of a command run from a subfolder", () => {
  it("is the nearest enclosing folder with an umbra index", () => {
    expect(umbra(["index", root]).code).toBe(0);
    const status = umbraIn(join(root, "billing"), ["status", "--json"]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ root, indexed: true });
    const search = umbraIn(join(root, "billing"), ["search", "--json", "--limit", "1", "parse money amount"]);
    expect(search.code).toBe(0);
    expect((JSON.parse(search.stdout) as { path: string }[])[0]?.path).toBe("billing/money.ts");
  });

  it("is the nearest enclosing folder with .git, and commands run in the subfolder", async () => {
    await mkdir(join(root, ".git"));
    const sub = join(root, "inventory");
    const status = umbraIn(sub, ["status", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ root, indexed: false });
    const search = umbraIn(sub, ["search", "x"]);
    expect(search.code).toBe(2);
    expect(search.stderr).toContain(`${root} has no index yet`);
    const run = umbraIn(sub, ["run", "--unsandboxed", "--json", "--", "pwd"]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { stdout: string }).stdout.trim()).toBe(sub);
  });

  it("prefers the nearer of an index and .git, and is the current folder when there is neither", async () => {
    await mkdir(join(root, ".git"));
    expect(umbra(["index", join(root, "billing")]).code).toBe(0);
    const nearer = umbraIn(join(root, "billing"), ["status", "--json"]);
    expect(JSON.parse(nearer.stdout)).toMatchObject({ root: join(root, "billing"), indexed: true });

    const plain = await realpath(await tempDir("plain"));
    await mkdir(join(plain, "deeper"));
    try {
      const none = umbraIn(join(plain, "deeper"), ["status", "--json"]);
      expect(JSON.parse(none.stdout)).toMatchObject({ root: join(plain, "deeper"), indexed: false });
    } finally {
      await cleanup(plain);
    }
  });

  it("is the folder given with --root, whatever encloses it", async () => {
    await mkdir(join(root, ".git"));
    const status = umbraIn(join(root, "billing"), ["status", "--root", ".", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ root: join(root, "billing") });
  });
});

describe("umbra shadow discard", () => {
  it("fails naming the ids that are no branch, and discards none of the others", async () => {
    const branch = await fork(root, { env });
    await branch.close();
    const result = umbra(["shadow", "discard", branch.id, "no-such-branch", "nope-2", "--root", root]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/no branch no-such-branch, nope-2 in /);
    const list = umbra(["shadow", "list", "--root", root, "--json"]);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((b) => b.id)).toEqual([branch.id]);
    expect(umbra(["shadow", "discard", branch.id, "--root", root]).code).toBe(0);
  });
});

describe("umbra eval keeps its run for the engine", () => {
  it("copies the results into the data folder of the workspace it ran in", async () => {
    const out = join(home, "eval-out");
    const result = umbra(["eval", join(EXAMPLES, "eval"), "--agent", "noop", "--out", out]);
    expect(result.code, result.stderr).toBe(0);
    const runs = await listEvalRuns(root, env);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.results).toEqual(JSON.parse(await readFile(join(out, "results.json"), "utf8")));
    expect(statSync(join(evalRunsDir(root, env), runs[0]?.id ?? "", "results.json")).mode & 0o777).toBe(
      0o600,
    );
  }, 300_000);
});

describe("umbra eval --agent model", () => {
  it("fails at once with one line and status 2 when no model is configured", () => {
    const out = join(home, "eval-out");
    const result = umbra(["eval", join(EXAMPLES, "eval"), "--agent", "model", "--out", out]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^umbra: no model configured/)]);
    expect(result.stdout).toBe("");
  });
});
