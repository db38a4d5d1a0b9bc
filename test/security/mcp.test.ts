/**
 * Security probes through MCP: the escape suites of the CLI and the agent's tools (file-access, git,
 * accept, sandbox escape), run through `umbra mcp`'s tools by the SDK's own client. The MCP client is an
 * agent: everything it sends is untrusted. Each `attack ...` probe tries one way out and must fail;
 * `work: ...` probes are ordinary work that must keep working. The reporter (test/security/reporter.ts)
 * prints `escapes=N broken=M probes=K`.
 *
 * The workspace is the hostile one of hostile.ts. The user's folder, the fake home and every folder
 * next to the workspace must be exactly as they were after every probe.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli } from "../helpers/cli.js";
import { cleanup } from "../helpers/workspace.js";
import {
  alive,
  type Elicit,
  fingerprintTree,
  McpClient,
  refusal,
  stopEngine,
  type ToolName,
} from "../mcp/helpers.js";
import {
  type Hostile,
  hostileWorkspace,
  LINKS_OUT,
  leak,
  NEVER_ACCEPTED,
  pathsOut,
  type Snapshot,
  snapshotAll,
  expectUntouched as untouchedSince,
} from "./hostile.js";

let h: Hostile;
let base: string;
let root: string;
let home: string;
let data: string;
let other: string;
let env: NodeJS.ProcessEnv;
/** The folders that must never change: the user's, the home folder, the one beside. */
let before: Snapshot;
const clients = new Map<Elicit, McpClient>();
/** A branch of the workspace made by the agent (no elicitation). */
let branch: string;
let hostServer: Server;
let hostUrl: string;
let hostHits = 0;

/** The client that answers elicitations with `elicit` (opened once, on the workspace). */
async function client(elicit: Elicit = "none"): Promise<McpClient> {
  let found = clients.get(elicit);
  if (!found) {
    found = await McpClient.open({ root, env, elicit, name: `probe-${elicit}` });
    clients.set(elicit, found);
  }
  return found;
}

/** A call that must be answered without quoting a secret; the answer. */
async function call<T extends ToolName>(tool: T, args: Record<string, unknown>, elicit: Elicit = "none") {
  const outcome = await (await client(elicit)).call(tool, args);
  const all = `${outcome.text}\n${JSON.stringify(outcome.data ?? {})}`;
  expect(leak(all), `${tool} ${JSON.stringify(args)}: ${all}`).toBeUndefined();
  return outcome;
}

/** A call that must be refused (an error result, or `ok: false`) without quoting a secret. */
async function refused(
  tool: ToolName,
  args: Record<string, unknown>,
  elicit: Elicit = "none",
): Promise<string> {
  const outcome = await call(tool, args, elicit);
  expect(
    refusal(outcome),
    `${tool} ${JSON.stringify(args).slice(0, 200)} was not refused: ${outcome.text}`,
  ).toBe(true);
  return outcome.text;
}

/** A call that must succeed without quoting a secret; its result. */
async function works<T extends ToolName>(tool: T, args: Record<string, unknown>, elicit: Elicit = "none") {
  const outcome = await call(tool, args, elicit);
  expect(refusal(outcome), `${tool} ${JSON.stringify(args).slice(0, 200)}: ${outcome.text}`).toBe(false);
  if (outcome.data === undefined) throw new Error(`${tool}: no structured result`);
  return outcome.data;
}

/** The entries list_files shows (one a line, folders ending in /); none when it was refused. */
async function listed(args: Record<string, unknown>): Promise<string[]> {
  const outcome = await call("list_files", args);
  return refusal(outcome) ? [] : outcome.text.split("\n");
}

/** A command in `branch` (of the agent unless given): it must run; its result (no secret in it). */
async function sh(command: string, options: { branch?: string; elicit?: Elicit } = {}) {
  return works("run", { branch: options.branch ?? branch, command }, options.elicit);
}

const expectUntouched = () => untouchedSince(h, before);

/** Every unix socket below `dir`. */
async function socketsBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name);
    const info = await lstat(path);
    if (info.isSocket()) found.push(path);
    else if (info.isDirectory()) found.push(...(await socketsBelow(path)));
  }
  return found;
}

beforeAll(async () => {
  requireBuiltCli();
  h = await hostileWorkspace();
  ({ base, root, home, data, other, env } = h);

  hostServer = createServer((_request, response) => {
    hostHits++;
    response.end("host");
  });
  await new Promise<void>((ready) => hostServer.listen(0, "127.0.0.1", ready));
  hostUrl = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}/`;

  before = await snapshotAll(h);
  branch = (await (await client()).ok("branch_create", { label: "probes" })).id;
});

afterAll(async () => {
  await Promise.allSettled([...clients.values()].map((c) => c.close()));
  await stopEngine(env);
  hostServer?.close();
  if (before) await expectUntouched();
  await cleanup(base);
});

/** A node one-liner that fetches `url` and prints REACHED or BLOCKED. */
function fetchCommand(url: string): string {
  return `node -e 'fetch(${JSON.stringify(url)}).then(() => console.log("REACHED"), () => console.log("BLOCKED"))'`;
}

describe("file access through MCP tools", () => {
  it("attack hidden: read_file, list_files, grep and search of .env and secrets/", async () => {
    for (const target of [{}, { branch }]) {
      await refused("read_file", { ...target, path: ".env" });
      await refused("read_file", { ...target, path: "secrets/id.pem" });
      const names = await listed({ ...target, path: "" });
      expect(names).toContain("README.md");
      expect(names).not.toContain(".env");
      expect(names).not.toContain("secrets/");
      expect((await listed({ ...target, path: "secrets" })).join("\n")).not.toContain("id.pem");
      const grep = await call("grep", { ...target, pattern: "SECRET" });
      expect(grep.data?.matches.map((m) => m.path) ?? []).toEqual([]);
      await call("grep", { ...target, pattern: "WS_SECRET", path: "secrets" });
    }
    const search = await call("search", { query: "WS_SECRET_env WS_SECRET_pem id.pem env", limit: 50 });
    for (const hit of search.data?.hits ?? []) expect(hit.path).not.toMatch(/^(\.env|secrets\/)/);
  });

  it("attack symlink-out: links in the workspace to /etc/passwd, /etc, ~ and ~/.ssh", async () => {
    for (const target of [{}, { branch }]) {
      for (const path of LINKS_OUT) await refused("read_file", { ...target, path });
      for (const path of ["homelink", "ssh", "etc", "up"]) {
        const names = (await listed({ ...target, path })).join("\n");
        expect(names).not.toMatch(/\.bashrc|id_rsa|passwd|outside\.txt/);
      }
      const grep = await call("grep", { ...target, pattern: "SECRET|root:", path: "homelink" });
      expect(grep.data?.matches ?? []).toEqual([]);
    }
    const search = await call("search", { query: "HOME_SECRET_bashrc root passwd", limit: 50 });
    for (const hit of search.data?.hits ?? []) expect(hit.path).not.toMatch(/^(homelink|ssh|etc|passwd)/);
  });

  it("attack symlink-out: a link a command made in the branch (`ln -s ~ h`, `ln -s / r`)", async () => {
    await sh(`ln -s ${home} h && ln -s / r && ln -s .. up2`);
    for (const path of ["h/.bashrc", "h/.ssh/id_rsa", "r/etc/passwd", "up2/outside.txt"])
      await refused("read_file", { branch, path });
    expect((await listed({ branch, path: "h" })).join("\n")).not.toMatch(/bashrc|ssh/);
    const grep = await call("grep", { branch, pattern: "SECRET" });
    expect(grep.data?.matches ?? []).toEqual([]);
  });

  it("attack hidden-link: a link to a hidden file or folder", async () => {
    for (const target of [{}, { branch }]) {
      await refused("read_file", { ...target, path: "env-link.txt" });
      await refused("read_file", { ...target, path: "secrets-link/id.pem" });
      expect((await listed({ ...target, path: "secrets-link" })).join("\n")).not.toContain("id.pem");
    }
    await sh("ln -s .env leak.ts && ln -s secrets/id.pem leak2.txt");
    await refused("read_file", { branch, path: "leak.ts" });
    await refused("read_file", { branch, path: "leak2.txt" });
    await call("lints", { branch, path: "leak.ts" });
  });

  it("attack hardlink: a hard link to .env and to ~/.ssh/id_rsa", async () => {
    for (const target of [{}, { branch }]) {
      await refused("read_file", { ...target, path: "notes-link.txt" });
      await refused("read_file", { ...target, path: "key-copy.txt" });
      await call("grep", { ...target, pattern: "SECRET", fixed: true });
    }
    await call("search", { query: "notes link key copy secret", limit: 50 });
  });

  it("attack path: `..` components, absolute paths, ~ and /proc", async () => {
    for (const target of [{}, { branch }]) {
      for (const path of pathsOut(h)) await refused("read_file", { ...target, path });
      await refused("list_files", { ...target, path: "../" });
      await call("grep", { ...target, pattern: "SECRET", path: "../" });
    }
  });

  it("attack names: newlines and terminal escapes in names are never shown raw", async () => {
    const outcome = await call("list_files", { path: "", depth: 1 });
    expect(outcome.text).toContain("a\\nfake-entry.ts");
    expect(outcome.text).not.toContain("\u001b");
    expect(outcome.text.split("\n")).not.toContain("fake-entry.ts");
    const read = await call("read_file", { path: "\u001b[31mred.ts" });
    expect(read.text).not.toContain("\u001b");
    const grep = await call("grep", { pattern: "export const (a|red) = 1" });
    expect(grep.text).not.toContain("\u001b");
    expect(grep.text.split("\n").filter((line) => line.startsWith("fake-entry.ts"))).toEqual([]);
    const search = await call("search", { query: "export const red a", limit: 50 });
    expect(search.text).not.toContain("\u001b");
    expect(search.text.split("\n").filter((line) => line.startsWith("fake-entry.ts"))).toEqual([]);
    // a label (and a client name) another agent chose, in everyone's branch list
    const odd = await McpClient.open({ root, env, name: "evil\nfake-client \u001b[2J" });
    try {
      const made = await odd.ok("branch_create", { label: "x\nfake-branch \u001b[2J" });
      for (const text of [(await call("branch_list", {})).text, (await call("status", {})).text]) {
        expect(text).not.toContain("\u001b");
        expect(text.split("\n").filter((line) => /^\s*fake-(branch|client)/.test(line))).toEqual([]);
      }
      await odd.ok("branch_discard", { branch: made.id });
    } finally {
      await odd.close();
    }
  });

  it("attack navigation: lints, definition, references, hover and symbols of hidden files and links out", async () => {
    await sh("ln -s .env nav-env.ts && ln -s ../outside.txt nav-out.ts");
    for (const path of [
      ".env",
      "env-link.txt",
      "notes-link.txt",
      "key-copy.txt",
      "homelink/.bashrc",
      "passwd.txt",
      "nav-env.ts",
      "nav-out.ts",
    ]) {
      for (const target of [{}, { branch }]) {
        await call("definition", { ...target, path, line: 1, column: 1 });
        await call("references", { ...target, path, line: 1, column: 1 });
        await call("hover", { ...target, path, line: 1, column: 1 });
        await call("document_symbols", { ...target, path });
      }
      await refused("lints", { branch, path });
    }
  });

  it("attack path-length: names over 255 bytes and paths over 3 KiB are refused, never crash", async () => {
    for (const path of ["x".repeat(300), `${"deep/".repeat(700)}f.ts`, `billing/${"y".repeat(256)}.ts`]) {
      await refused("read_file", { path });
      await refused("read_file", { branch, path });
      await refused("write_file", { branch, path, content: "x\n" });
      await refused("edit", { branch, path, search: "", replace: "x\n" });
      await refused("lints", { branch, path });
      await call("list_files", { branch, path });
    }
    expect(await listed({ path: "" })).toContain("README.md");
  });

  it("work: read, list, grep and search the user's folder; a link inside it reads like its target", async () => {
    expect((await works("read_file", { path: "billing/money.ts" })).text).toContain("export");
    expect((await works("read_file", { path: "lib/money.ts" })).text).toContain("export");
    expect(await listed({ path: "billing" })).toContain("billing/money.ts");
    expect((await works("grep", { pattern: "OutOfStock" })).matches.map((m) => m.path)).toContain(
      "inventory/stock.py",
    );
    expect((await works("search", { query: "parse money amount" })).hits.map((h) => h.path)).toContain(
      "billing/money.ts",
    );
  });
});

describe("writes through MCP tools", () => {
  it("attack protected: write_file, edit and apply_patch of git, editor and umbra settings and ignore files", async () => {
    for (const path of [
      ".git/config",
      ".git/hooks/pre-commit",
      ".vscode/settings.json",
      ".vscode/tasks.json",
      ".umbra/config.json",
      ".gitignore",
      ".umbraignore",
      "billing/.gitignore",
      ".husky/pre-commit",
    ]) {
      await refused("write_file", { branch, path, content: '{"pwned":true}\n' });
      await refused("edit", { branch, path, search: "", replace: "pwned\n" });
      await refused("apply_patch", {
        branch,
        patch: `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+pwned\n`,
      });
    }
    await refused("edit", { branch, path: ".gitignore", search: ".env", replace: "nothing" });
    await refused("edit", { branch, path: ".umbraignore", search: "secrets/", replace: "nothing/" });
    const diff = await works("diff", { branch });
    for (const path of [".git/", ".vscode", ".umbra/config.json", ".gitignore", ".umbraignore", ".husky"])
      expect(diff.files.map((f) => f.path).filter((p) => p.startsWith(path))).toEqual([]);
  });

  it("attack symlink-out: writes through a link out of the workspace land nowhere", async () => {
    for (const path of [
      "homelink/.profile",
      "homelink/.bashrc",
      "ssh/authorized_keys",
      "up/evil.txt",
      "passwd.txt",
    ]) {
      await refused("write_file", { branch, path, content: "pwned\n" });
      await refused("edit", { branch, path, search: "", replace: "pwned\n" });
    }
    await refused("edit", {
      branch,
      path: "homelink/.bashrc",
      search: "export HOME_SECRET_bashrc=1",
      replace: "x",
    });
    await refused("apply_patch", {
      branch,
      patch: "--- /dev/null\n+++ b/homelink/.profile\n@@ -0,0 +1 @@\n+pwned\n",
    });
    await expectUntouched();
  });

  it("attack outside: write_file, edit and apply_patch of `..` and absolute paths", async () => {
    const probe = join("/tmp", `umbra-mcp-abs-${process.pid}`);
    for (const path of [
      "../evil.txt",
      "billing/../../evil.txt",
      probe,
      join(other, "x.txt"),
      `${root}/../evil.txt`,
    ]) {
      await refused("write_file", { branch, path, content: "pwned\n" });
      await refused("edit", { branch, path, search: "", replace: "pwned\n" });
    }
    await refused("apply_patch", { branch, patch: "--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n" });
    await refused("apply_patch", { branch, patch: `--- /dev/null\n+++ ${probe}\n@@ -0,0 +1 @@\n+x\n` });
    await expectUntouched();
    expect(() => readFileSync(probe)).toThrow();
    expect(() => readFileSync(join(base, "evil.txt"))).toThrow();
  });

  it("work: write_file, edit and apply_patch in a branch; a command there sees them; the user's folder does not", async () => {
    expect((await works("write_file", { branch, path: "notes/new.md", content: "new\n" })).ok).toBe(true);
    const edited = await works("edit", {
      branch,
      path: "billing/tax.ts",
      search: "books: 7,",
      replace: "books: 5,",
    });
    expect(edited.ok, edited.text).toBe(true);
    const patched = await works("apply_patch", {
      branch,
      patch: "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+added\n",
    });
    expect(patched.ok, patched.text).toBe(true);
    const run = await sh("cat notes/new.md added.txt; grep -c 'books: 5' billing/tax.ts");
    expect(run.stdout).toBe("new\nadded\n1\n");
    await expectUntouched();
  });
});

describe("run through MCP", () => {
  it("attack network: without the elicitation capability, a network request is denied and not run", async () => {
    const hits = hostHits;
    const outcome = await call("run", {
      branch,
      network: true,
      command: `touch ran-net.txt; ${fetchCommand(hostUrl)}`,
    });
    expect(outcome.data?.ran ?? false, outcome.text).toBe(false);
    if (outcome.data) expect(outcome.data.notes.join(" ")).toMatch(/network/i);
    expect(hostHits).toBe(hits);
    await refused("read_file", { branch, path: "ran-net.txt" });
  });

  it("attack network: the user declines: the command is not run", async () => {
    const hits = hostHits;
    const decliner = await client("decline");
    const own = (await decliner.ok("branch_create", { label: "declined" })).id;
    const outcome = await call(
      "run",
      {
        branch: own,
        network: true,
        reason: "fetch a package",
        command: `touch ran-net.txt; ${fetchCommand(hostUrl)}`,
      },
      "decline",
    );
    expect(decliner.elicitations.length).toBeGreaterThan(0);
    expect(JSON.stringify(decliner.elicitations.at(-1))).toContain("fetch");
    expect(outcome.data?.ran ?? false, outcome.text).toBe(false);
    expect(hostHits).toBe(hits);
    await refused("read_file", { branch: own, path: "ran-net.txt" }, "decline");
  });

  it("attack network: a command run without network reaches nothing, not even the host's loopback", async () => {
    const hits = hostHits;
    const run = await sh(fetchCommand(hostUrl));
    expect(run.stdout).not.toContain("REACHED");
    expect(hostHits).toBe(hits);
  });

  it("work: a network request the user approves runs", async () => {
    const asker = await client("accept");
    const own = (await asker.ok("branch_create", { label: "approved" })).id;
    const run = await works("run", { branch: own, network: true, command: fetchCommand(hostUrl) }, "accept");
    expect(asker.elicitations.length).toBeGreaterThan(0);
    expect(run.ran).toBe(true);
    expect(run.stdout).toContain("REACHED");
  });

  it("attack run: reading hidden files, links out and the home folder's credentials", async () => {
    const run = await sh(
      [
        "cat .env secrets/id.pem notes-link.txt key-copy.txt env-link.txt secrets-link/id.pem",
        `cat ${root}/.env ${root}/secrets/id.pem ${home}/.ssh/id_rsa ${home}/.bashrc homelink/.bashrc ssh/id_rsa`,
        `cat ${base}/outside.txt ${other}/other-secret.txt`,
        "ls -a secrets homelink",
        "grep -r SECRET . 2>/dev/null | head",
        "true",
      ].join("; "),
    );
    expect(leak(run.stdout + run.stderr + run.text)).toBeUndefined();
  });

  it("attack run: writing the user's folder, the folder beside it and ~/.bashrc", async () => {
    const own = (await (await client()).ok("branch_create", { label: "writes out" })).id;
    await call("run", {
      branch: own,
      command: [
        `echo pwned >> ${root}/README.md`,
        `touch ${root}/new-file.txt`,
        `rm -f ${root}/billing/money.ts`,
        `echo pwned > ${base}/outside.txt`,
        `echo pwned >> ${home}/.bashrc`,
        "echo pwned >> ~/.bashrc",
        `mkdir -p ${home}/.config/autostart && touch ${home}/.config/autostart/x.desktop`,
        `echo pwned > ${other}/other-secret.txt`,
        "true",
      ].join("; "),
    });
    await expectUntouched();
  });

  it("attack run: the engine's unix socket and the data directory from inside the sandbox", async () => {
    const sockets = await socketsBelow(data);
    // the MCP servers reach one engine (umbra serve) over its socket in the data directory
    expect(sockets.length).toBeGreaterThan(0);
    const probes = sockets.map(
      (path) =>
        `node -e 'require("net").connect(${JSON.stringify(path)}).on("connect", () => { console.log("CONNECTED"); process.exit(0); }).on("error", (e) => console.log("REFUSED", e.code))'`,
    );
    const run = await sh(
      [...probes, `ls -R ${data} | head -50`, `cat ${data}/*/*/* 2>/dev/null | head -c 2000`, "true"].join(
        "; ",
      ),
    );
    expect(run.stdout).not.toContain("CONNECTED");
    expect(run.stdout).not.toMatch(/workspaces|branches/);
  });

  it("attack run: signals to the engine and the MCP server, /proc escapes, the environment, mount and unshare", async () => {
    const agent = await client();
    const engine = (await agent.ok("status")).engine.pid;
    const own = (await agent.ok("branch_create", { label: "host" })).id;
    const run = await call("run", {
      branch: own,
      command: [
        `kill -9 ${engine} ${agent.pid} 1`,
        `echo pwned > /proc/self/root${base}/outside.txt`,
        "echo pwned > /proc/self/cwd/../outside.txt",
        `echo pwned > /proc/1/root${base}/outside.txt`,
        "env; cat /proc/*/environ | tr '\\0' '\\n'",
        "mount -t tmpfs none /tmp",
        "unshare -r true && echo UNSHARED",
        "ls /proc | grep -c '^[0-9]'",
        "true",
      ].join(" 2>&1; "),
    });
    expect(run.data?.stdout ?? "").not.toContain("UNSHARED");
    // both still answer, as the same processes
    expect((await agent.ok("status")).engine.pid).toBe(engine);
    expect(alive(agent.pid)).toBe(true);
    await expectUntouched();
  });

  it("work: an ordinary command runs in the branch, a link inside the workspace works", async () => {
    const run = await sh("echo hi && cat lib/money.ts | head -1 && ls billing");
    expect(run.exitCode, run.text).toBe(0);
    expect(run.stdout).toContain("hi\n");
    expect(run.stdout).toContain("money.ts");
  });
});

describe("accept and branches through MCP", () => {
  it("attack accept: a client without elicitation accepts nothing; the branch stays", async () => {
    const agent = await client();
    const own = (await agent.ok("branch_create", { label: "unconfirmed" })).id;
    expect(
      (await agent.ok("write_file", { branch: own, path: "README.md", content: "taken over\n" })).ok,
    ).toBe(true);
    const outcome = await call("accept", { branch: own });
    if (!outcome.isError) {
      expect(outcome.data?.confirmed).toBe(false);
      expect(outcome.data?.written).toBe(false);
    }
    await expectUntouched();
    expect((await agent.ok("branch_list")).branches.map((b) => b.id)).toContain(own);
  });

  it("attack accept: only some files, naming hidden, protected and outside paths, writes none of them", async () => {
    const asker = await client("accept");
    const own = (await asker.ok("branch_create", { label: "files" })).id;
    await asker.ok("write_file", { branch: own, path: "README.md", content: "taken over\n" });
    const outcome = await call(
      "accept",
      {
        branch: own,
        files: NEVER_ACCEPTED,
      },
      "accept",
    );
    if (!outcome.isError) expect(outcome.data?.applied ?? []).toEqual([]);
    await expectUntouched();
  });

  it("attack questions: odd file names and commands reach the user without escapes or fake lines", async () => {
    const asker = await client("accept");
    const own = (await asker.ok("branch_create", { label: "odd question" })).id;
    const names = ["evil\nfake-line.txt", "\u001b[2Jclear.txt", "\u001b[8mconcealed.txt"];
    for (const path of names) await works("write_file", { branch: own, path, content: "x\n" }, "accept");
    const asked = asker.elicitations.length;
    await call(
      "run",
      {
        branch: own,
        network: true,
        command: "echo \u001b[8mhidden\u001b[0m \u001b]0;title\u0007",
        reason: "x\u001b[31my",
      },
      "accept",
    );
    try {
      await call("accept", { branch: own }, "accept");
    } finally {
      // "the user" said yes: the odd files leave the folder again
      for (const name of names) rmSync(join(root, name), { force: true });
    }
    const questions = asker.elicitations.slice(asked).map((question) => question.message);
    expect(questions).toHaveLength(2);
    for (const question of questions) {
      expect(question).not.toContain("\u001b");
      expect(question).not.toContain("\u0007");
      expect(question.split("\n").filter((line) => /^\s*fake-line/.test(line))).toEqual([]);
    }
    await expectUntouched();
  });

  it("attack accept: the user declines: nothing is written", async () => {
    const decliner = await client("decline");
    const own = (await decliner.ok("branch_create", { label: "declined accept" })).id;
    await decliner.ok("write_file", { branch: own, path: "README.md", content: "taken over\n" });
    const asked = decliner.elicitations.length;
    const outcome = await call("accept", { branch: own }, "decline");
    expect(decliner.elicitations.length).toBe(asked + 1);
    if (!outcome.isError) expect(outcome.data?.written).toBe(false);
    await expectUntouched();
  });

  it("attack accept: a branch whose changes touch .git/hooks, .git/config and .husky is refused", async () => {
    const asker = await client("accept");
    const own = (await asker.ok("branch_create", { label: "hooks" })).id;
    await call(
      "run",
      {
        branch: own,
        command: [
          "mkdir -p .husky && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .husky/pre-commit && chmod +x .husky/pre-commit",
          "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
          "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
          "mkdir -p sub/.GIT && printf '[core]\\n\\tfsmonitor = x\\n' > sub/.GIT/config",
          "true",
        ].join("; "),
      },
      "accept",
    );
    await call(
      "write_file",
      { branch: own, path: ".git/hooks/post-checkout", content: "#!/bin/sh\n" },
      "accept",
    );
    const outcome = await call("accept", { branch: own }, "accept");
    if (!outcome.isError) {
      const applied = outcome.data?.applied ?? [];
      expect(applied.filter((path) => /(^|\/)\.(git|husky)\//i.test(path))).toEqual([]);
    }
    await expectUntouched();
  });

  it("attack accept: a hostile .umbra/config.json cannot turn on auto-accept or network", async () => {
    const hostile = join(base, "hostile");
    mkdirSync(join(hostile, ".umbra"), { recursive: true });
    writeFileSync(join(hostile, "a.txt"), "a\n");
    writeFileSync(
      join(hostile, ".umbra", "config.json"),
      JSON.stringify({
        sandbox: { mode: "full-access", network: { allowCommands: ["*", "node", "sh"] } },
        mcp: { autoAccept: true, accept: "auto", network: true },
        accept: { auto: true, confirm: false },
        engine: { autoAccept: true },
      }),
    );
    const hostileBefore = await fingerprintTree(hostile);
    const agent = await McpClient.open({ root: hostile, env, name: "hostile" });
    try {
      const own = (await agent.ok("branch_create", {})).id;
      await agent.ok("write_file", { branch: own, path: "a.txt", content: "pwned\n" });
      const hits = hostHits;
      const net = await agent.call("run", { branch: own, network: true, command: fetchCommand(hostUrl) });
      expect(net.data?.ran ?? false, net.text).toBe(false);
      const plain = await agent.call("run", {
        branch: own,
        command: `${fetchCommand(hostUrl)}; touch ${hostile}/pwned; echo x >> ${home}/.bashrc`,
      });
      expect(plain.data?.stdout ?? "").not.toContain("REACHED");
      expect(hostHits).toBe(hits);
      const accept = await agent.call("accept", { branch: own });
      if (!accept.isError) expect(accept.data?.written).toBe(false);
      expect(await fingerprintTree(hostile)).toEqual(hostileBefore);
    } finally {
      await agent.close();
    }
    await expectUntouched();
  });

  it("work: the user's own mcp.autoAccept accepts without asking", async () => {
    const own = join(base, "auto");
    mkdirSync(own);
    writeFileSync(join(own, "a.txt"), "a\n");
    const ownEnv = {
      ...env,
      UMBRA_HOME: join(base, "auto-data"),
      XDG_CONFIG_HOME: join(base, "auto-config"),
    };
    mkdirSync(join(base, "auto-config", "umbra"), { recursive: true });
    writeFileSync(join(base, "auto-config", "umbra", "config.json"), '{"mcp":{"autoAccept":true}}\n');
    const agent = await McpClient.open({ root: own, env: ownEnv, name: "auto" });
    try {
      const made = (await agent.ok("branch_create", {})).id;
      await agent.ok("write_file", { branch: made, path: "a.txt", content: "a2\n" });
      const accepted = await agent.ok("accept", { branch: made });
      expect(accepted.confirmed).toBe(true);
      expect(accepted.applied).toEqual(["a.txt"]);
      expect(readFileSync(join(own, "a.txt"), "utf8")).toBe("a2\n");
    } finally {
      await agent.close();
      await stopEngine(ownEnv);
    }
  });

  it("attack root: a tool call naming another root stays in its own workspace", async () => {
    const otherRoot = { root: other };
    // call() fails on the other workspace's content; its file's name is not listed either
    await refused("read_file", { ...otherRoot, path: "other-secret.txt" });
    for (const outcome of [
      await call("list_files", { ...otherRoot, path: "" }),
      await call("grep", { ...otherRoot, pattern: "OTHER_ROOT" }),
      await call("search", { ...otherRoot, query: "other secret" }),
    ])
      expect(`${outcome.text}${JSON.stringify(outcome.data ?? {})}`).not.toContain("other-secret");
    const status = await call("status", otherRoot);
    if (!status.isError) expect(status.data?.root).toBe(root);
    const made = await call("branch_create", otherRoot);
    if (!made.isError && made.data) {
      await refused("read_file", { branch: made.data.id, path: "other-secret.txt" });
      expect((await works("read_file", { branch: made.data.id, path: "billing/money.ts" })).text).toContain(
        "export",
      );
    }
  });

  it("attack root: roots the client declares do not override --root", async () => {
    const rooted = await McpClient.open({ root, env, roots: [other], name: "roots" });
    try {
      expect((await rooted.ok("status")).root).toBe(root);
      const read = await rooted.call("read_file", { path: "other-secret.txt" });
      expect(refusal(read)).toBe(true);
      expect(read.text).not.toContain("OTHER_ROOT_SECRET");
    } finally {
      await rooted.close();
    }
  });

  it("attack branch-id: `../../x`, `..`, absolute and odd ids to branch_* and every tool taking a branch", async () => {
    for (const id of [
      "../../x",
      "..",
      ".",
      "../..",
      "a/../../..",
      "/tmp",
      base,
      `../${branch}`,
      `${branch}/..`,
      "x\u0000y",
      "%2e%2e",
    ]) {
      await refused("branch_discard", { branch: id });
      await refused("read_file", { branch: id, path: "README.md" });
      await refused("write_file", { branch: id, path: "pwned.txt", content: "pwned\n" });
      await refused("diff", { branch: id });
      await refused("run", { branch: id, command: "touch pwned.txt" });
      await refused("accept", { branch: id });
      await refused("rebase", { branch: id });
    }
    // the real branch is still there, whole
    expect((await works("branch_list", {})).branches.map((b) => b.id)).toContain(branch);
    expect((await works("read_file", { branch, path: "notes/new.md" })).text).toContain("new");
    await expectUntouched();
  });

  it("work: branch_list lists the branches, branch_discard removes one", async () => {
    const agent = await client();
    const own = (await agent.ok("branch_create", { label: "to discard" })).id;
    expect((await agent.ok("branch_list")).branches.map((b) => b.id)).toContain(own);
    expect((await agent.ok("branch_discard", { branch: own })).discarded).toBe(own);
    expect((await agent.ok("branch_list")).branches.map((b) => b.id)).not.toContain(own);
  });
});

describe("git through MCP", () => {
  it("attack git: a cloned repository's core.fsmonitor and pager never ran while umbra served it", () => {
    // every probe above (search, grep, status, diff, lints, run, accept) has been served by now
    expect(existsSync(join(base, "ran-fsmonitor"))).toBe(false);
    expect(existsSync(join(base, "ran-pager"))).toBe(false);
  });
});
