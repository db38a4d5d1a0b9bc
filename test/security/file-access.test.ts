import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentContext, createToolContext } from "../../src/agent/context.js";
import {
  applyPatchTool,
  editTool,
  lintsTool,
  listFilesTool,
  readFileTool,
  runCommandTool,
} from "../../src/agent/tools/index.js";
import type { AgentTool, ToolResult } from "../../src/agent/tools/types.js";
import type { Diag, DocumentSource, LintResult, LspHost } from "../../src/lsp/index.js";
import { type Branch, fork } from "../../src/shadow/index.js";
import { run } from "../../src/shadow/run.js";
import { BranchView } from "../../src/shadow/view.js";
import { testConfig } from "../agent/helpers.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

// Node-side file access of agents (src/shadow/files.ts, src/workspace/rooted.ts). Each `attack ...` probe
// tries one way out; `work: ...` probes are ordinary work that must keep working. The reporter
// (test/security/reporter.ts) prints `escapes=N broken=M probes=K` as the run's last line.

const SECRETS = [
  "HOME_SECRET_bashrc",
  "HOME_SECRET_ssh",
  "WS_SECRET_env",
  "WS_SECRET_pem",
  "WS_SECRET_token",
  "WS_SECRET_vercel",
  "WS_SECRET_build",
  "WS_SECRET_late",
  "OUTSIDE_SECRET",
];

let base: string;
let home: string;
let fakeHome: string;
let root: string;
let env: NodeJS.ProcessEnv;
let branch: Branch;
let context: AgentContext;
let before: string;
let homeBefore: string[];
/** What the fake language server was given to read. */
const served: string[] = [];

async function call(tool: AgentTool, input: unknown): Promise<ToolResult> {
  return tool.run(tool.schema.parse(input), context);
}

function leaks(text: string): string | undefined {
  return SECRETS.find((secret) => text.includes(secret));
}

/** A tool call that must be refused without quoting any secret. */
async function refusedCall(tool: AgentTool, input: unknown): Promise<ToolResult> {
  const result = await call(tool, input);
  expect(leaks(result.output), result.output).toBeUndefined();
  expect(result.ok, result.output).toBe(false);
  return result;
}

async function sh(command: string): Promise<ToolResult> {
  const result = await call(runCommandTool, { command });
  expect(result.ok, result.output).toBe(true);
  return result;
}

/** A language-server host that reads the file it lints from the source it is given and quotes it. */
function quotingHost(): LspHost {
  const lint = async (source: DocumentSource, path: string): Promise<LintResult> => {
    const text = (await source.readText(path)) ?? "";
    served.push(text);
    for (const change of await source.changes()) served.push((await source.readText(change.path)) ?? "");
    const diag: Diag = {
      path,
      line: 1,
      column: 1,
      endLine: 1,
      endColumn: 2,
      severity: "error",
      message: `unexpected ${text.split("\n")[0] ?? ""}`,
    } as Diag;
    return {
      path,
      language: "fake",
      diagnostics: [diag],
      introduced: [diag],
      otherFiles: [],
      checkedFiles: [],
      skippedFiles: [],
      partial: false,
      partialReasons: [],
      version: 1,
      elapsedMs: 0,
    } as LintResult;
  };
  return { detect: () => true, lint, shutdown: async () => {} } as unknown as LspHost;
}

beforeAll(async () => {
  base = await tempDir("security");
  home = join(base, "data");
  fakeHome = join(base, "home");
  mkdirSync(join(fakeHome, ".ssh"), { recursive: true });
  writeFileSync(join(fakeHome, ".bashrc"), "export HOME_SECRET_bashrc=1\n");
  writeFileSync(join(fakeHome, ".ssh", "id_rsa"), "HOME_SECRET_ssh\n");
  homeBefore = await listTree(fakeHome);
  root = await copyExamples();
  writeFileSync(join(root, "..", "outside.txt"), "OUTSIDE_SECRET\n");
  writeFileSync(join(root, ".umbraignore"), ".env\nsecrets/\nlate-*.txt\n");
  // a package's own ignore file, in a folder the index and the sandbox's walk leave out
  mkdirSync(join(root, "node_modules", "pkg"), { recursive: true });
  writeFileSync(join(root, "node_modules", "pkg", ".umbraignore"), "token.txt\n");
  writeFileSync(join(root, "node_modules", "pkg", "token.txt"), "WS_SECRET_token\n");
  // what the root's rules match inside other excluded folders
  mkdirSync(join(root, ".vercel"));
  writeFileSync(join(root, ".vercel", ".env"), "WS_SECRET_vercel=1\n");
  mkdirSync(join(root, "build", "secrets"), { recursive: true });
  writeFileSync(join(root, "build", "secrets", "key.txt"), "WS_SECRET_build\n");
  writeFileSync(join(root, ".env"), "WS_SECRET_env=1\nWS_SECRET_env_2=2\n");
  mkdirSync(join(root, "secrets"));
  writeFileSync(join(root, "secrets", "id.pem"), "WS_SECRET_pem\n");
  mkdirSync(join(root, "nested"));
  writeFileSync(join(root, "nested", ".umbraignore"), "*.log\n");
  writeFileSync(join(root, "nested", "keep.txt"), "keep\n");
  // hard links the user's folder may hold: to a hidden file, to a credential, to an ordinary file
  linkSync(join(root, ".env"), join(root, "notes-link.txt"));
  linkSync(join(fakeHome, ".ssh", "id_rsa"), join(root, "key-copy.txt"));
  linkSync(join(root, "inventory", "stock.py"), join(root, "inventory", "stock-link.py"));
  before = await fingerprint(root);
  // a cloned repository's link to the home folder (added after the fingerprint, which cannot hash it)
  symlinkSync(fakeHome, join(root, "homelink"));
  env = { ...process.env, HOME: fakeHome, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
  branch = await fork(root, { env });
  context = createToolContext({ branch, root, config: testConfig(root, env), env, lsp: quotingHost() });
});

afterAll(async () => {
  await context?.close();
  await branch?.discard();
  rmSync(join(root, "homelink"));
  expect(await fingerprint(root)).toBe(before);
  expect(await listTree(fakeHome)).toEqual(homeBefore);
  expect(readFileSync(join(fakeHome, ".bashrc"), "utf8")).toBe("export HOME_SECRET_bashrc=1\n");
  expect(served.filter((text) => leaks(text))).toEqual([]);
  await cleanup(base, join(root, ".."));
});

async function listTree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

describe("Node-side file access of agents", () => {
  it("attack symlink-out: read_file through `ln -s ~ h`", async () => {
    await sh("ln -s ~ h");
    await refusedCall(readFileTool, { path: "h/.bashrc" });
    await refusedCall(readFileTool, { path: "h/.ssh/id_rsa" });
  });

  it("attack symlink-out: edit through `ln -s ~ h` writes nothing outside", async () => {
    await refusedCall(editTool, { path: "h/.bashrc", search: "", replace: "PWNED\n" });
    await refusedCall(editTool, { path: "h/.bashrc", search: "export HOME_SECRET_bashrc=2", replace: "x" });
    await refusedCall(editTool, { path: "h/new/evil.sh", search: "", replace: "PWNED\n" });
    await sh("true");
    expect(existsSync(join(fakeHome, "new"))).toBe(false);
  });

  it("attack symlink-out: apply_patch through `ln -s ~ h`", async () => {
    await refusedCall(applyPatchTool, {
      patch: "--- /dev/null\n+++ b/h/.profile\n@@ -0,0 +1 @@\n+PWNED\n",
    });
    await refusedCall(applyPatchTool, {
      patch: "--- a/h/.bashrc\n+++ b/h/.bashrc\n@@ -1 +1 @@\n-export HOME_SECRET_bashrc=1\n+PWNED\n",
    });
    await sh("true");
    expect(existsSync(join(fakeHome, ".profile"))).toBe(false);
  });

  it("attack symlink-out: lints and list_files through `ln -s ~ h`", async () => {
    await refusedCall(lintsTool, { path: "h/.bashrc" });
    const listed = await call(listFilesTool, { path: "h" });
    expect(listed.output).not.toContain(".bashrc");
    expect(listed.output).not.toContain(".ssh");
    const all = await call(listFilesTool, { depth: 3 });
    expect(all.output).not.toContain("h/.bashrc");
  });

  it("attack symlink-out: an override behind a link is never materialized through it", async () => {
    branch.write("h/.profile", "PWNED\n");
    const dropped = await branch.materialize();
    expect(dropped.map((entry) => entry.path)).toEqual(["h/.profile"]);
    expect(existsSync(join(fakeHome, ".profile"))).toBe(false);
  });

  for (const mode of ["fuse-overlayfs", "copy"] as const) {
    it(`attack symlink-out: an override behind a link is not materialized through it (${mode} branch)`, async () => {
      const other = await fork(root, { env, mode });
      try {
        expect((await run(other, "sh", ["-c", "ln -s ~ h3"], { env })).exitCode).toBe(0);
        other.write("h3/.profile", "PWNED\n");
        other.write("fine.txt", "fine\n");
        const dropped = await other.materialize();
        expect(dropped.map((entry) => entry.path)).toEqual(["h3/.profile"]);
        expect(existsSync(join(fakeHome, ".profile"))).toBe(false);
        expect(await other.readText("fine.txt")).toBe("fine\n");
      } finally {
        await other.discard();
      }
    });
  }

  it("attack symlink-out: `ln -s / r` and `ln -s .. up`", async () => {
    await sh("ln -s / r && ln -s .. up && ln -s ../.. up2");
    await refusedCall(readFileTool, { path: "r/etc/passwd" });
    const probe = `umbra-probe-${process.pid}`;
    await refusedCall(editTool, { path: `r/tmp/${probe}`, search: "", replace: "PWNED\n" });
    await refusedCall(readFileTool, { path: "up/outside.txt" });
    await refusedCall(editTool, { path: "up/outside.txt", search: "OUTSIDE_SECRET", replace: "x" });
    await sh("true");
    expect(existsSync(join("/tmp", probe))).toBe(false);
    expect(readFileSync(join(root, "..", "outside.txt"), "utf8")).toBe("OUTSIDE_SECRET\n");
  });

  it("attack hidden-link: read_file and lints of a symlink to .env named like source", async () => {
    await sh("ln -s .env env.txt && ln -s .env leak.ts");
    await refusedCall(readFileTool, { path: "env.txt" });
    await refusedCall(lintsTool, { path: "leak.ts" });
    const all = await call(lintsTool, {});
    expect(leaks(all.output), all.output).toBeUndefined();
  });

  it("attack hidden-link: a symlink to ~/.ssh/id_rsa", async () => {
    await sh("ln -s ~/.ssh/id_rsa key.txt && ln -s ~/.ssh/id_rsa key.ts");
    await refusedCall(readFileTool, { path: "key.txt" });
    await refusedCall(lintsTool, { path: "key.ts" });
  });

  it("attack hidden-link: a symlinked folder onto the hidden secrets/", async () => {
    await sh("ln -s secrets s2");
    await refusedCall(readFileTool, { path: "s2/id.pem" });
    const listed = await call(listFilesTool, { path: "s2" });
    expect(listed.output).not.toContain("id.pem");
  });

  it("attack hidden-edit: edit of .env quotes nothing in its closest candidates", async () => {
    await refusedCall(editTool, { path: ".env", search: "WS_SECRET_env=3\nWS_SECRET_env_2=2", replace: "x" });
    await refusedCall(editTool, { path: "env.txt", search: "WS_SECRET_env=3", replace: "x" });
    await refusedCall(editTool, { path: "secrets/id.pem", search: "WS_SECRET_pem!", replace: "x" });
  });

  it("attack hidden-list: list_files never lists hidden entries", async () => {
    const listed = await call(listFilesTool, { depth: 2 });
    const lines = listed.output.split("\n");
    expect(lines).not.toContain(".env");
    expect(lines).not.toContain("secrets/");
    await refusedCall(listFilesTool, { path: "secrets" });
  });

  it("attack hidden-rules: ignore rules inside node_modules, .vercel and build apply", async () => {
    await refusedCall(readFileTool, { path: "node_modules/pkg/token.txt" });
    await refusedCall(readFileTool, { path: ".vercel/.env" });
    await refusedCall(readFileTool, { path: "build/secrets/key.txt" });
    const listed = await call(listFilesTool, { path: "node_modules/pkg" });
    expect(listed.output).not.toContain("token.txt");
  });

  it("attack hidden-rules: a command reads nothing the rules hide in node_modules, .vercel or build", async () => {
    const files = ["node_modules/pkg/token.txt", ".vercel/.env", "build/secrets/key.txt"];
    const read = await call(runCommandTool, {
      command: `for f in ${files.join(" ")}; do cat "$f"; done 2>&1; ls -a node_modules/pkg build; true`,
    });
    expect(leaks(read.output), read.output).toBeUndefined();
    await sh("cat node_modules/pkg/token.txt > copied.txt 2>/dev/null; true");
    const copied = await call(readFileTool, { path: "copied.txt" });
    expect(leaks(copied.output), copied.output).toBeUndefined();
  });

  it("attack hidden-rules: a file ignored after the session started", async () => {
    await call(readFileTool, { path: "README.md" });
    const late = join(root, "late-secret.txt");
    writeFileSync(late, "WS_SECRET_late\n");
    try {
      await refusedCall(readFileTool, { path: "late-secret.txt" });
      await refusedCall(editTool, { path: "late-secret.txt", search: "WS_SECRET_late!", replace: "x" });
    } finally {
      rmSync(late);
    }
  });

  it("attack hardlink: a hard link to the hidden .env", async () => {
    await refusedCall(readFileTool, { path: "notes-link.txt" });
    await refusedCall(editTool, { path: "notes-link.txt", search: "WS_SECRET_env=9", replace: "x" });
  });

  it("attack hardlink: a hard link to ~/.ssh/id_rsa", async () => {
    await refusedCall(readFileTool, { path: "key-copy.txt" });
  });

  it("attack hardlink: a command reads the hard links to .env and ~/.ssh/id_rsa, or links .env anew", async () => {
    const read = await call(runCommandTool, {
      command:
        "cat notes-link.txt key-copy.txt 2>&1; ln .env made-link.txt 2>&1; cat made-link.txt 2>&1; grep -r SECRET . 2>/dev/null; true",
    });
    expect(leaks(read.output), read.output).toBeUndefined();
    expect(read.output).toMatch(/notes-link\.txt: Permission denied/);
  });

  it("attack race: a folder swapped for a symlink after the view resolved it", async () => {
    const lower = join(base, "race-lower");
    const tree = join(base, "race-tree");
    mkdirSync(join(tree, "race"), { recursive: true });
    mkdirSync(lower);
    writeFileSync(join(tree, "race", ".bashrc"), "ordinary\n");
    const view = new BranchView({ root: lower, mode: "copy", upper: tree, tree }, new Map());
    const entry = await view.resolve("race/.bashrc", true);
    expect(entry?.kind).toBe("file");
    // what a command running beside the agent can do between the check and the read
    renameSync(join(tree, "race"), join(tree, "race.old"));
    symlinkSync(fakeHome, join(tree, "race"));
    const read = entry ? await view.readResolved(entry) : undefined;
    expect(read?.data.toString() ?? "").not.toContain("HOME_SECRET");
  });

  it("attack race: a folder swapped for a symlink between the agent's edit and its write", async () => {
    await sh("mkdir -p race2 && echo ordinary > race2/f.txt");
    const edited = await call(editTool, { path: "race2/f.txt", search: "ordinary", replace: "edited" });
    expect(edited.ok, edited.output).toBe(true);
    // a process of the branch (not the sandboxed tool) swaps the folder before the override is written
    const swapped = await run(branch, "sh", ["-c", "rm -rf race2 && ln -s ~ race2"], { env, cwd: root });
    expect(swapped.exitCode).toBe(0);
    await branch.materialize();
    expect(existsSync(join(fakeHome, "f.txt"))).toBe(false);
  });

  it("attack fifo: a FIFO named like a source file never blocks a tool", async () => {
    await sh("mkfifo pipe.ts");
    await refusedCall(readFileTool, { path: "pipe.ts" });
    await refusedCall(editTool, { path: "pipe.ts", search: "x", replace: "y" });
    await refusedCall(lintsTool, { path: "pipe.ts" });
    expect((await call(listFilesTool, {})).ok).toBe(true);
  });

  it("attack device: a link to /dev/zero named like a source file", async () => {
    await sh("ln -s /dev/zero zero.ts && ln -s /dev/stdin stdin.ts");
    await refusedCall(readFileTool, { path: "zero.ts" });
    await refusedCall(readFileTool, { path: "stdin.ts" });
    await refusedCall(lintsTool, { path: "zero.ts" });
  });

  it("attack names: newlines and terminal escapes in file names are shown escaped", async () => {
    await sh("touch \"$(printf 'a\\nfake-entry.ts')\" \"$(printf '\\033[31mred.ts')\"");
    const listed = await call(listFilesTool, { depth: 1 });
    expect(listed.output).not.toContain("\u001b");
    expect(listed.output.split("\n")).not.toContain("fake-entry.ts");
    expect(listed.output).toContain("a\\nfake-entry.ts");
    const read = await call(readFileTool, { path: "\u001b[31mred.ts" });
    expect(read.output + read.summary).not.toContain("\u001b");
  });

  it("attack path: `..` components and absolute paths in tool inputs", async () => {
    for (const path of ["../outside.txt", "a/../../outside.txt", "/etc/passwd", `${root}/../outside.txt`])
      await refusedCall(readFileTool, { path });
    await refusedCall(editTool, { path: "../outside.txt", search: "OUTSIDE_SECRET", replace: "x" });
    await refusedCall(editTool, { path: `/tmp/umbra-abs-${process.pid}`, search: "", replace: "x" });
    await refusedCall(applyPatchTool, { patch: "--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n" });
    await refusedCall(listFilesTool, { path: "../" });
    expect(existsSync(join(root, "..", "evil.txt"))).toBe(false);
  });

  it("attack protected: git, editor and umbra settings and ignore files are read-only", async () => {
    const create = (path: string) => refusedCall(editTool, { path, search: "", replace: "x\n" });
    await create(".vscode/settings.json");
    await create(".umbra/config.json");
    await create(".git/hooks/pre-commit");
    await create(".git/config");
    await create("billing/.gitignore");
    await create(".GitIgnore");
    await create("ws.code-workspace");
    await refusedCall(editTool, { path: ".umbraignore", search: "secrets/", replace: "nothing/" });
    await refusedCall(applyPatchTool, {
      patch: "--- /dev/null\n+++ b/.vscode/tasks.json\n@@ -0,0 +1 @@\n+{}\n",
    });
    // a folder that holds an ignore file is not replaced by a file
    await refusedCall(editTool, { path: "nested", search: "", replace: "x\n" });
    const changed = (await branch.changes()).map((change) => change.path);
    for (const path of [".vscode/settings.json", ".umbra/config.json", ".umbraignore", "nested"])
      expect(changed).not.toContain(path);
  });

  it("attack rename: a hidden file cannot be renamed into view, nor a file onto a protected path", async () => {
    const files = await context.files();
    await expect(files.rename(".env", "visible.txt")).rejects.toMatchObject({ code: "HIDDEN" });
    await expect(files.rename("notes-link.txt", "visible.txt")).rejects.toMatchObject({ code: "HIDDEN" });
    await expect(files.rename("README.md", ".vscode/README.md")).rejects.toMatchObject({ code: "PROTECTED" });
    await expect(files.rename("h/.bashrc", "stolen.txt")).rejects.toMatchObject({ code: "OUTSIDE" });
    expect(await branch.read("visible.txt")).toBeUndefined();
    expect(await branch.read("stolen.txt")).toBeUndefined();
  });

  it("attack diff: a workspace link to home replaced by a folder never shows home content", async () => {
    await sh("rm homelink && mkdir homelink && echo mine > homelink/.bashrc");
    const diff = await branch.diff();
    expect(leaks(diff)).toBeUndefined();
    expect(diff).toContain("homelink/.bashrc");
  });

  it("attack path-variants: dot segments, doubled slashes, trailing slashes, NUL, ~ and /proc", async () => {
    for (const path of [
      ".//.env",
      "./.env",
      ".env/",
      "secrets/./id.pem",
      "secrets//id.pem",
      "./secrets/id.pem/",
      "nested/../.env",
      ".env\u0000.txt",
      "~/.bashrc",
      "/proc/self/root/etc/passwd",
      "proc/self/root/etc/passwd",
      `/proc/self/cwd/../outside.txt`,
    ]) {
      await refusedCall(readFileTool, { path });
      await refusedCall(lintsTool, { path });
      await refusedCall(editTool, { path, search: "WS_SECRET_env=7", replace: "x" });
    }
  });

  it("attack symlink-chain: links to links to .env, a loop, and `d -> .` with `e -> d/..`", async () => {
    await sh("ln -s l2 l1 && ln -s l3 l2 && ln -s .env l3 && ln -s loop2 loop1 && ln -s loop1 loop2");
    await sh("ln -s . dot && ln -s dot/.. climb && ln -s dot/dot/secrets deep-secrets");
    await refusedCall(readFileTool, { path: "l1" });
    await refusedCall(readFileTool, { path: "loop1" });
    await refusedCall(readFileTool, { path: "climb/outside.txt" });
    await refusedCall(readFileTool, { path: "deep-secrets/id.pem" });
    await refusedCall(editTool, { path: "climb/outside.txt", search: "OUTSIDE_SECRET", replace: "x" });
    await refusedCall(editTool, { path: "l1", search: "", replace: "x" });
    const listed = await call(listFilesTool, { path: "deep-secrets" });
    expect(listed.output).not.toContain("id.pem");
    expect(readFileSync(join(root, "..", "outside.txt"), "utf8")).toBe("OUTSIDE_SECRET\n");
  });

  it("attack hidden-rename: a command renames, links or copies a hidden file to a visible name", async () => {
    await call(runCommandTool, {
      command:
        "mv .env moved.txt; mv secrets s-moved; ln .env hl.txt; ln secrets/id.pem hl2.txt; cp .env cp.txt; cat .env > cat.txt; true",
    });
    for (const path of ["moved.txt", "s-moved/id.pem", "hl.txt", "hl2.txt", "cp.txt", "cat.txt"]) {
      const read = await call(readFileTool, { path });
      expect(leaks(read.output), `${path}: ${read.output}`).toBeUndefined();
    }
    const diff = await branch.diff();
    expect(leaks(diff)).toBeUndefined();
  });

  it("attack dangling-link: edit through a link to a missing file outside, or in a hidden or protected folder", async () => {
    const probe = `/tmp/umbra-dangling-${process.pid}`;
    await sh(
      `ln -s ${probe} dl.txt && ln -s secrets/new.pem dl2.txt && ln -s .vscode vs && ln -s .git/hooks gh && ln -s ../new-outside.txt dl3.txt`,
    );
    await refusedCall(editTool, { path: "dl.txt", search: "", replace: "PWNED\n" });
    // a link into a hidden folder is replaced by the file, or refused: nothing lands in secrets/
    await call(editTool, { path: "dl2.txt", search: "", replace: "PWNED\n" });
    await refusedCall(editTool, { path: "dl3.txt", search: "", replace: "PWNED\n" });
    await refusedCall(editTool, { path: "vs/tasks.json", search: "", replace: "{}\n" });
    await refusedCall(editTool, { path: "gh/pre-commit", search: "", replace: "#!/bin/sh\n" });
    await refusedCall(applyPatchTool, { patch: "--- /dev/null\n+++ b/vs/tasks.json\n@@ -0,0 +1 @@\n+{}\n" });
    const files = await context.files();
    await expect(files.rename("README.md", "vs/README.md")).rejects.toThrow(/vs/);
    await sh("true");
    await branch.materialize();
    expect(existsSync(probe)).toBe(false);
    expect(existsSync(join(root, "..", "new-outside.txt"))).toBe(false);
    const changed = (await branch.changes()).map((change) => change.path);
    for (const path of ["secrets/new.pem", ".vscode/tasks.json", ".git/hooks/pre-commit"])
      expect(changed).not.toContain(path);
    expect(existsSync(join(root, "secrets", "new.pem"))).toBe(false);
  });

  it("attack race: the final file swapped for a symlink to a secret after the view resolved it", async () => {
    const lower = join(base, "race3-lower");
    const tree = join(base, "race3-tree");
    mkdirSync(tree, { recursive: true });
    mkdirSync(lower);
    writeFileSync(join(tree, "plain.txt"), "ordinary\n");
    const view = new BranchView({ root: lower, mode: "copy", upper: tree, tree }, new Map());
    const entry = await view.resolve("plain.txt", true);
    expect(entry?.kind).toBe("file");
    rmSync(join(tree, "plain.txt"));
    symlinkSync(join(fakeHome, ".ssh", "id_rsa"), join(tree, "plain.txt"));
    const read = entry ? await view.readResolved(entry) : undefined;
    expect(read?.data.toString() ?? "").not.toContain("HOME_SECRET");
  });

  it("attack fifo-rules: FIFOs named like ignore files in the user's folder never block a tool", async () => {
    mkdirSync(join(root, "fifo-rules"));
    writeFileSync(join(root, "fifo-rules", "code.ts"), "export const x = 1;\n");
    execFileSync("mkfifo", [
      join(root, "fifo-rules", ".umbraignore"),
      join(root, "fifo-rules", ".cursorignore"),
    ]);
    try {
      expect((await call(readFileTool, { path: "fifo-rules/code.ts" })).ok).toBe(true);
      expect((await call(listFilesTool, { path: "fifo-rules" })).output).toContain("code.ts");
      const edited = await call(editTool, { path: "fifo-rules/code.ts", search: "x = 1", replace: "x = 2" });
      expect(edited.ok, edited.output).toBe(true);
    } finally {
      rmSync(join(root, "fifo-rules"), { recursive: true });
    }
  });

  it("attack hidden-patch: apply_patch from a hidden file to a visible one, deleting one, or through a hard link", async () => {
    for (const patch of [
      "--- a/.env\n+++ b/visible.txt\n@@ -1,2 +1,2 @@\n-WS_SECRET_env=1\n+x\n WS_SECRET_env_2=2\n",
      "--- a/.env\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-WS_SECRET_env=1\n-WS_SECRET_env_2=2\n",
      "--- a/notes-link.txt\n+++ b/notes-link.txt\n@@ -1 +1 @@\n-WS_SECRET_env=1\n+x\n",
      "--- a/secrets/id.pem\n+++ b/id.pem\n@@ -1 +1 @@\n-WS_SECRET_pem\n+WS_SECRET_pem\n",
      "diff --git a/.env b/moved.env\nsimilarity index 100%\nrename from .env\nrename to moved.env\n",
    ])
      await refusedCall(applyPatchTool, { patch });
    for (const path of ["visible.txt", "id.pem", "moved.env"])
      expect(await branch.read(path)).toBeUndefined();
    expect(readFileSync(join(root, ".env"), "utf8")).toContain("WS_SECRET_env=1");
  });

  it("attack path-length: over-long names and paths are refused with a reason, never crash a tool", async () => {
    for (const path of ["x".repeat(300), `${"deep/".repeat(900)}f.ts`, `billing/${"y".repeat(256)}.ts`]) {
      for (const [tool, input] of [
        [readFileTool, { path }],
        [editTool, { path, search: "", replace: "x\n" }],
        [lintsTool, { path }],
        [listFilesTool, { path }],
      ] as const) {
        const result = await call(tool, input);
        expect(result.ok, result.output).toBe(false);
      }
    }
    expect((await call(listFilesTool, {})).ok).toBe(true);
  });

  it("work: edit a normal file, and a command sees it", async () => {
    const edited = await call(editTool, {
      path: "billing/tax.ts",
      search: "books: 7,",
      replace: "books: 5,",
    });
    expect(edited.ok, edited.output).toBe(true);
    expect((await sh("grep -c 'books: 5' billing/tax.ts")).output).toContain("1");
  });

  it("work: nested folders are created", async () => {
    const created = await call(editTool, { path: "deep/er/still/file.txt", search: "", replace: "deep\n" });
    expect(created.ok, created.output).toBe(true);
    expect((await sh("cat deep/er/still/file.txt")).output).toContain("deep");
  });

  it("work: names with spaces and unicode", async () => {
    const name = "docs/my file ü 名前.md";
    expect((await call(editTool, { path: name, search: "", replace: "# hi\n" })).ok).toBe(true);
    expect((await call(readFileTool, { path: name })).output).toContain("# hi");
    expect((await call(listFilesTool, { path: "docs" })).output).toContain(name);
    expect((await sh(`cat '${name}'`)).output).toContain("# hi");
  });

  it("work: a symlink inside the workspace pointing inside it", async () => {
    await sh("ln -s billing lib");
    expect((await call(readFileTool, { path: "lib/money.ts" })).ok).toBe(true);
    const edited = await call(editTool, {
      path: "lib/invoice.ts",
      search: "import { formatMoney",
      replace: "// via link\nimport { formatMoney",
    });
    expect(edited.ok, edited.output).toBe(true);
    expect(await branch.readText("billing/invoice.ts")).toContain("// via link");
    expect((await call(listFilesTool, { path: "lib" })).output).toContain("money.ts");
  });

  it("work: apply_patch adds and deletes files", async () => {
    const added = await call(applyPatchTool, {
      patch: "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+new\n",
    });
    expect(added.ok, added.output).toBe(true);
    const deleted = await call(applyPatchTool, {
      patch: "--- a/added.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-new\n",
    });
    expect(deleted.ok, deleted.output).toBe(true);
    expect(await branch.read("added.txt")).toBeUndefined();
  });

  it("work: rename a file", async () => {
    const files = await context.files();
    expect(await files.rename("docs/my file ü 名前.md", "docs/renamed.md")).toBe("docs/renamed.md");
    expect((await call(readFileTool, { path: "docs/renamed.md" })).output).toContain("# hi");
    expect(await branch.read("docs/my file ü 名前.md")).toBeUndefined();
  });

  it("work: a hard link to an ordinary file reads like the file", async () => {
    const read = await call(readFileTool, { path: "inventory/stock-link.py" });
    expect(read.ok, read.output).toBe(true);
  });

  it("work: lints of an ordinary file, and umbra's notes folder is writable", async () => {
    expect((await call(lintsTool, { path: "billing/tax.ts" })).output).toContain("billing/tax.ts");
    expect((await call(editTool, { path: ".umbra/notes/plan.md", search: "", replace: "plan\n" })).ok).toBe(
      true,
    );
  });
});
