/**
 * Security probes, class "absent protected paths": in the user's own folder the sandbox makes nothing
 * for a protected path that does not exist (.vscode, .idea, .umbra, ignore files, a missing .git); a
 * command that makes one there gets it moved out to the quarantine after the run, with its reason, so
 * that the user's editor, git and umbra never take it for the user's. Each probe runs the command as
 * `umbra run` does (openSandbox: the product's policy, the real helper, the check after the run).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { openSandbox, type WorkspaceRun } from "../../src/sandbox/sandbox.js";
import { ensureHelper, saidOnStdout, userEnv } from "../sandbox/helpers.js";

let base: string;
let ws: string;
let env: NodeJS.ProcessEnv;

async function run(script: string, onStdout?: (chunk: string) => void): Promise<WorkspaceRun> {
  const sandbox = await openSandbox({ workspace: ws, config: loadConfig({ workspaceRoot: ws, env }), env });
  return sandbox.run("sh", ["-c", script], { cwd: ws, ...(onStdout ? { onStdout } : {}) });
}

const refusedPaths = (r: WorkspaceRun) => (r.git?.refused ?? []).map((entry) => entry.path).sort();

beforeAll(() => ensureHelper());

beforeEach(async () => {
  base = realpathSync(await mkdtemp("/var/tmp/umbra-absent-sec-"));
  ws = join(base, "ws");
  mkdirSync(join(base, "home"));
  env = userEnv(base);
  process.env.UMBRA_HOME = env.UMBRA_HOME; // the helper's placeholder journal
  mkdirSync(ws);
  execFileSync("git", ["init", "-q", "-b", "main", ws]);
  writeFileSync(join(ws, "a.txt"), "a\n");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("absent protected paths in the user's folder", () => {
  it("attack absent-stand-in: nothing stands in for them in the folder while a command runs", async () => {
    const r = await run("ls -a");
    expect(r.stdout.split("\n").sort()).toEqual(["", ".", "..", ".git", "a.txt"]);
  });

  it("attack absent-vscode: a .vscode/tasks.json that runs on folder open is moved out", async () => {
    const r = await run(
      `mkdir .vscode && echo '{"tasks":[{"label":"x","command":"touch PWNED","runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json`,
    );
    expect(refusedPaths(r)).toEqual([".vscode"]);
    expect(existsSync(join(ws, ".vscode"))).toBe(false);
  });

  it("attack absent-umbra: a .umbra/config.json a command writes never becomes the folder's config", async () => {
    const r = await run(`mkdir .umbra && echo '{"sandbox":{"mode":"full-access"}}' > .umbra/config.json`);
    expect(refusedPaths(r)).toEqual([".umbra"]);
    expect(existsSync(join(ws, ".umbra"))).toBe(false);
  });

  it("attack absent-idea: a new .idea folder (run configurations) is moved out", async () => {
    const r = await run(
      `mkdir -p .idea/runConfigurations && echo '<component/>' > .idea/runConfigurations/x.xml`,
    );
    expect(refusedPaths(r)).toEqual([".idea"]);
  });

  it("attack absent-ignore: a new .umbraignore or .cursorignore that un-hides, or a FIFO .gitignore, is moved out", async () => {
    const r = await run(
      `printf '!*.env\\n' > .umbraignore; printf '!x\\n' > .cursorignore; mkfifo .gitignore`,
    );
    expect(refusedPaths(r)).toEqual([".cursorignore", ".gitignore", ".umbraignore"]);
  });

  it("attack absent-git: a folder that is no repository is not made one", async () => {
    await rm(join(ws, ".git"), { recursive: true });
    const r = await run("git init -q .");
    expect(refusedPaths(r)).toEqual([".git"]);
    expect(existsSync(join(ws, ".git"))).toBe(false);
  });

  it("work: a new .gitignore with ordinary lines (npm init, cargo new) stays", async () => {
    const r = await run("printf '/target\\nnode_modules/\\n' > .gitignore");
    expect(refusedPaths(r)).toEqual([]);
    expect(readFileSync(join(ws, ".gitignore"), "utf8")).toBe("/target\nnode_modules/\n");
  });

  it("work: the user appends to an absent .gitignore while a command runs (no 'Is a directory')", async () => {
    const go = join(base, "go");
    execFileSync("mkfifo", [go]);
    const { said, onStdout } = saidOnStdout("started");
    const done = run(`echo started; read x < ${go}`, onStdout);
    await said;
    await appendFile(join(ws, ".gitignore"), "x\n");
    await writeFile(go, "go\n");
    const r = await done;
    expect(refusedPaths(r)).toEqual([]);
    expect(readFileSync(join(ws, ".gitignore"), "utf8")).toBe("x\n");
  });
});
