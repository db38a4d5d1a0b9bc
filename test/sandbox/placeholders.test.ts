/**
 * Placeholders of absent protected paths (.vscode, .idea, .umbra, .cursorignore, …): the helper puts an
 * empty read-only directory in their place for a run. These tests run the real helper: concurrent runs
 * share a placeholder and only the last one removes it, a killed run's placeholder is removed by the next
 * run, and git sees nothing of them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { placeholderJournal } from "../../src/sandbox/linux.js";
import { prepareSandbox } from "../../src/sandbox/run.js";
import { fork } from "../../src/shadow/index.js";
import { waitUntil } from "../helpers/wait.js";
import { ensureHelper, makeFixture, type SandboxFixture, sh, snapshot } from "./helpers.js";

let f: SandboxFixture;
let before: string;
let savedHome: string | undefined;

/** The absent protected paths of the fixture that get a placeholder. */
const ABSENT = [".vscode", ".idea", ".umbra", ".cursorignore"];

/** A script that waits until `file` appears in the workspace (created from outside the sandbox). */
const waitFor = (file: string) => `while [ ! -e ${file} ]; do sleep 0.02; done`;

function gitStatus(): string {
  return execFileSync("git", ["-C", f.ws, "status", "--porcelain", "--untracked-files=all"], {
    encoding: "utf8",
    env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" }, // no index refresh: the folder stays as it is
  });
}

beforeAll(async () => {
  ensureHelper();
  f = await makeFixture("/var/tmp");
  // The journal lives in umbra's data directory: keep this file's runs apart from the machine's.
  savedHome = process.env.UMBRA_HOME;
  process.env.UMBRA_HOME = join(f.base, "data");
  before = await snapshot(f.ws);
});

afterAll(async () => {
  if (savedHome === undefined) delete process.env.UMBRA_HOME;
  else process.env.UMBRA_HOME = savedHome;
  await f?.done();
});

afterEach(async () => {
  for (const name of ["go-a", "go-b", "b-ready"]) rmSync(join(f.ws, name), { force: true });
  expect(await snapshot(f.ws)).toBe(before);
});

describe("placeholders of absent protected paths", () => {
  it("are empty read-only directories that git does not show", async () => {
    const status = gitStatus();
    const run = sh(f.policy, `touch b-ready; ${waitFor("go-b")}`);
    await waitUntil(() => existsSync(join(f.ws, "b-ready")), "the run to start");
    for (const name of ABSENT) {
      const info = statSync(join(f.ws, name));
      expect(info.isDirectory()).toBe(true);
      expect(readdirSync(join(f.ws, name))).toEqual([]);
    }
    rmSync(join(f.ws, "b-ready"));
    expect(gitStatus()).toBe(status);
    writeFileSync(join(f.ws, "go-b"), "");
    expect((await run).exitCode).toBe(0);
  });

  it("stay while a second run uses them after the first ends, then go", async () => {
    const first = sh(f.policy, waitFor("go-a"));
    await waitUntil(() => existsSync(join(f.ws, ".vscode")), "the first run's placeholder");
    const second = sh(
      f.policy,
      `touch b-ready; ${waitFor("go-b")}; mkdir -p .vscode; echo '{}' > .vscode/settings.json; echo .cursorignore > .cursorignore; echo done`,
    );
    await waitUntil(() => existsSync(join(f.ws, "b-ready")), "the second run to start");
    writeFileSync(join(f.ws, "go-a"), "");
    expect((await first).exitCode).toBe(0);
    // The second run still uses the placeholders: they must not have been removed under it.
    expect(existsSync(join(f.ws, ".vscode"))).toBe(true);
    writeFileSync(join(f.ws, "go-b"), "");
    const r = await second;
    expect(r.stdout).toContain("done");
    expect(r.stderr).toMatch(/Read-only file system|Is a directory/);
    for (const name of ABSENT) expect(existsSync(join(f.ws, name))).toBe(false);
  });

  it("left by a killed run are removed by the next run", async () => {
    const sandbox = await prepareSandbox(f.policy);
    const child = sandbox.spawn("sh", ["-c", "sleep 30"], { cwd: f.ws, env: process.env });
    const gone = new Promise((done) => child.once("close", done));
    await waitUntil(() => existsSync(join(f.ws, ".vscode")), "the killed run's placeholder");
    child.kill("SIGKILL");
    await gone;
    expect(existsSync(join(f.ws, ".vscode"))).toBe(true);

    const next = await sh(f.policy, "true");
    expect(next.exitCode).toBe(0);
    for (const name of ABSENT) expect(existsSync(join(f.ws, name))).toBe(false);
    expect(readdirSync(placeholderJournal()).filter((name) => name !== "lock")).toEqual([]);
  });

  it("are shared with a run that protects a path inside one (.umbra/config.json in .umbra)", async () => {
    const first = sh(f.policy, waitFor("go-a"));
    await waitUntil(() => existsSync(join(f.ws, ".umbra")), "the first run's placeholder");
    // What resolvePolicy protects once .umbra is a folder: its config, not the folder.
    const inside = {
      ...f.policy,
      protectedPaths: f.policy.protectedPaths.map((path) =>
        path === join(f.ws, ".umbra") ? join(f.ws, ".umbra", "config.json") : path,
      ),
    };
    const second = sh(
      inside,
      `touch b-ready; ${waitFor("go-b")}; echo '{}' > .umbra/config.json; mkdir .umbra/rules; echo done`,
    );
    await waitUntil(() => existsSync(join(f.ws, "b-ready")), "the second run to start");
    writeFileSync(join(f.ws, "go-a"), "");
    expect((await first).exitCode).toBe(0);
    writeFileSync(join(f.ws, "go-b"), "");
    const r = await second;
    expect(r.stdout).toContain("done");
    expect(r.stderr).toMatch(/Read-only file system/);
    for (const name of ABSENT) expect(existsSync(join(f.ws, name))).toBe(false);
  });

  it("of a run in a copied branch go into the branch, not the user's folder", async () => {
    const branch = await fork(f.ws, { mode: "copy", env: process.env });
    try {
      let seen = false;
      const watch = setInterval(() => {
        seen ||= existsSync(join(f.ws, ".vscode"));
      }, 10);
      const r = await sh(f.policy, "test -d .vscode && sleep 0.5 && echo held", { branch });
      clearInterval(watch);
      expect(r.stdout).toBe("held\n");
      expect(seen).toBe(false);
      expect(await branch.changes()).toEqual([]);
    } finally {
      await branch.discard();
    }
  });

  it("leave a user's own empty folder alone", async () => {
    const vscode = join(f.ws, ".vscode");
    execFileSync("mkdir", [vscode]);
    try {
      const r = await sh(f.policy, "touch .vscode/settings.json");
      expect(r.exitCode).not.toBe(0);
      expect(statSync(vscode).isDirectory()).toBe(true);
      expect(readdirSync(vscode)).toEqual([]);
    } finally {
      rmSync(vscode, { recursive: true, force: true });
    }
  });
});
