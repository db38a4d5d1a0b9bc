/**
 * Absent protected paths (.vscode, .idea, .umbra, .gitignore, .cursorignore, a missing top .git, …) of
 * a run in the user's own folder: the helper makes nothing there; whatever appeared at them is moved out
 * to the quarantine after the run, with its reason (absent-guard.ts). A run in a branch still gets
 * placeholders, in the branch. These tests run the real helper, through openSandbox as `umbra run` does;
 * every wait is a FIFO handshake with the command, never a time.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { helperArgs, placeholderJournal } from "../../src/sandbox/linux.js";
import { openSandbox, type WorkspaceRun } from "../../src/sandbox/sandbox.js";
import type { Branch, BranchSandboxView } from "../../src/shadow/branch.js";
import { fork } from "../../src/shadow/index.js";
import { CLI, requireBuiltCli } from "../helpers/cli.js";
import { waitUntil } from "../helpers/wait.js";
import { defaultPolicy, ensureHelper, processesWith, saidOnStdout, snapshot, userEnv } from "./helpers.js";

/** Absent in the fixture, protected by the policy. */
const ABSENT = [".vscode", ".idea", ".umbra", ".gitignore", ".cursorignore", ".umbraignore"];

let base: string;
let ws: string;
let env: NodeJS.ProcessEnv;
/** The FIFO the command reads once it has said `started` on its stdout: the test lets it go. */
let go: string;

/** A command that says it started, then waits until the test lets it go. */
const handshake = () => `echo started; read x < ${go}`;

function open() {
  return openSandbox({ workspace: ws, config: loadConfig({ workspaceRoot: ws, env }), env });
}

/** Starts `script` (ending in handshake()) in the user's folder, in `branch` if given; resolves once
 * it said it started. */
async function start(
  script: string,
  branch?: Branch,
): Promise<{ done: Promise<WorkspaceRun>; release: () => Promise<void> }> {
  const sandbox = await open();
  const { said, onStdout } = saidOnStdout("started");
  const done = sandbox.run("sh", ["-c", script], { cwd: ws, onStdout, ...(branch ? { branch } : {}) });
  const first = await Promise.race([said.then(() => "started"), done.then(() => "ended")]);
  if (first === "ended") throw new Error(`the command ended before it started: ${(await done).stderr}`);
  return { done, release: () => writeFile(go, "go\n") };
}

async function run(script: string): Promise<WorkspaceRun> {
  return (await open()).run("sh", ["-c", script], { cwd: ws });
}

beforeAll(() => {
  ensureHelper();
  requireBuiltCli();
});

beforeEach(async () => {
  // Outside the OS temp folder: the sandbox's /tmp is private.
  base = realpathSync(await mkdtemp("/var/tmp/umbra-absent-"));
  ws = join(base, "ws");
  mkdirSync(join(base, "home"));
  env = userEnv(base);
  // the helper's journal follows UMBRA_HOME of this process (placeholderJournal)
  process.env.UMBRA_HOME = env.UMBRA_HOME;
  mkdirSync(ws);
  execFileSync("git", ["init", "-q", "-b", "main", ws]);
  writeFileSync(join(ws, "a.txt"), "a\n");
  go = join(base, "go");
  execFileSync("mkfifo", [go]);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("absent protected paths of a run in the user's folder", () => {
  it("are not made: neither the command nor the user sees them while it runs", async () => {
    const before = await snapshot(ws);
    const { done, release } = await start(`ls -a; ${handshake()}`);
    for (const name of ABSENT) expect(existsSync(join(ws, name)), name).toBe(false);
    expect(await snapshot(ws)).toBe(before);
    await release();
    const r = await done;
    expect(r.exitCode).toBe(0);
    const listing = r.stdout.split("\n");
    for (const name of ABSENT) expect(listing).not.toContain(name);
    expect(r.git?.refused ?? []).toEqual([]);
    expect(await snapshot(ws)).toBe(before);
  });

  it("leave nothing behind when umbra is killed with SIGKILL during the run", async () => {
    const before = await snapshot(ws);
    const marker = `umbra-absent-${process.pid}-${Date.now()}`;
    const child = spawn(
      process.execPath,
      [CLI, "run", "--root", ws, "--", "sh", "-c", `${handshake()} # ${marker}`],
      { env, stdio: ["ignore", "pipe", "ignore"] },
    );
    const { said, onStdout } = saidOnStdout("started");
    child.stdout.setEncoding("utf8").on("data", onStdout);
    const closed = new Promise((done) => child.once("close", done));
    await Promise.race([said, closed]);
    expect(processesWith(marker).length).toBeGreaterThan(0);
    for (const name of ABSENT) expect(existsSync(join(ws, name)), name).toBe(false);
    child.kill("SIGKILL");
    await closed;
    // the helper and the command end without their umbra (the helper's parent-death signal)
    await waitUntil(() => processesWith(marker).length === 0, "the sandbox to end");
    expect(await snapshot(ws)).toBe(before);
  });

  it("can be written by the user meanwhile: `echo x >> .gitignore` succeeds and stays", async () => {
    const { done, release } = await start(handshake());
    await appendFile(join(ws, ".gitignore"), "x\n");
    mkdirSync(join(ws, ".vscode"));
    writeFileSync(join(ws, ".vscode", "settings.json"), '{"editor.tabSize": 2}\n');
    await release();
    const r = await done;
    expect(readFileSync(join(ws, ".gitignore"), "utf8")).toBe("x\n");
    // The guard cannot tell who made .vscode: it goes, and the note says where and how to get it back.
    const refusal = r.git?.refused.find((entry) => entry.path === ".vscode");
    expect(refusal?.why).toMatch(/editor settings.*absent when the command started.*move it back/);
    expect(readFileSync(join(refusal?.movedTo ?? "", "settings.json"), "utf8")).toContain("tabSize");
    expect(existsSync(join(ws, ".vscode"))).toBe(false);
  });

  it("made by the command are moved out to the quarantine, each with its reason", async () => {
    const r = await run(
      "mkdir -p .vscode .umbra .idea && echo '{\"tasks\": []}' > .vscode/tasks.json && echo '{}' > .umbra/config.json && echo x > .idea/workspace.xml && printf '!secret.env\\n' > .cursorignore && echo done",
    );
    expect(r.stdout).toBe("done\n");
    const refused = new Map((r.git?.refused ?? []).map((entry) => [entry.path, entry]));
    expect([...refused.keys()].sort()).toEqual([".cursorignore", ".idea", ".umbra", ".vscode"]);
    expect(refused.get(".vscode")?.why).toMatch(/^commands may not change editor settings; it was absent/);
    expect(refused.get(".umbra")?.why).toMatch(/^commands may not change umbra's settings/);
    expect(refused.get(".cursorignore")?.why).toMatch(/un-hide/);
    expect(readFileSync(join(refused.get(".vscode")?.movedTo ?? "", "tasks.json"), "utf8")).toContain(
      "tasks",
    );
    for (const name of ABSENT) expect(existsSync(join(ws, name)), name).toBe(false);
  });

  it("work: a new .gitignore with ordinary lines (npm init, cargo new) stays", async () => {
    const r = await run("printf 'node_modules/\\ntarget/\\n' > .gitignore");
    expect(r.exitCode).toBe(0);
    expect(r.git?.refused ?? []).toEqual([]);
    expect(readFileSync(join(ws, ".gitignore"), "utf8")).toBe("node_modules/\ntarget/\n");
  });

  it("a .git folder made in a folder that is no repository is moved out with its reason", async () => {
    await rm(join(ws, ".git"), { recursive: true });
    const r = await run("git init -q . && echo done");
    expect(r.stdout).toBe("done\n");
    const refusal = r.git?.refused.find((entry) => entry.path === ".git");
    expect(refusal?.why).toMatch(/git repository/);
    expect(existsSync(join(ws, ".git"))).toBe(false);
    expect(existsSync(join(refusal?.movedTo ?? "", "HEAD"))).toBe(true);
  });

  it("left as placeholders by an older version's killed run are removed by the next run", async () => {
    // What an older helper left: an empty read-only folder, journaled by device and inode, unlocked.
    const leftover = join(ws, ".vscode");
    mkdirSync(leftover, { mode: 0o555 });
    const info = statSync(leftover);
    const journal = placeholderJournal(env);
    mkdirSync(journal, { recursive: true });
    writeFileSync(join(journal, `${info.dev.toString(16)}-${info.ino.toString(16)}`), leftover);
    const r = await run("true");
    expect(r.exitCode).toBe(0);
    expect(existsSync(leftover)).toBe(false);
    expect(readdirSync(journal).filter((name) => name !== "lock")).toEqual([]);
  });

  it("leave a user's own empty folder alone, read-only for the command", async () => {
    mkdirSync(join(ws, ".vscode"));
    const r = await run("touch .vscode/settings.json");
    expect(r.exitCode).not.toBe(0);
    expect(lstatSync(join(ws, ".vscode")).isDirectory()).toBe(true);
    expect(readdirSync(join(ws, ".vscode"))).toEqual([]);
  });
});

describe("placeholders of a run in a branch", () => {
  it("are asked of the helper below the workspace only for a branch's view (join, bind, path)", () => {
    const policy = defaultPolicy(ws);
    const flag = (view?: BranchSandboxView) =>
      helperArgs(policy, "true", [], { cwd: ws, view }).includes("--workspace-placeholders");
    expect(flag()).toBe(false);
    expect(flag({ kind: "join", pid: 1, root: ws })).toBe(true);
    expect(flag({ kind: "bind", source: join(base, "tree"), root: ws })).toBe(true);
    expect(flag({ kind: "path", path: join(base, "tree"), root: ws })).toBe(true);
  });

  it.each(["copy", "overlay"] as const)(
    "(%s) go into the branch, never into the user's folder",
    async (mode) => {
      const branch = await fork(ws, { mode, env });
      try {
        const { done, release } = await start(`test -d .vscode && echo held; ${handshake()}`, branch);
        for (const name of ABSENT) expect(existsSync(join(ws, name)), name).toBe(false);
        await release();
        const r = await done;
        expect(r.stdout).toBe("held\nstarted\n");
        expect(await branch.changes()).toEqual([]);
      } finally {
        await branch.discard();
      }
    },
  );
});
