import { execFileSync } from "node:child_process";
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientHooks } from "../../src/engine/api.js";
import { type EngineConnection, inProcess } from "../../src/engine/client.js";
import { Engine } from "../../src/engine/engine.js";
import { engineFailure as failure } from "../helpers/engine.js";

// The engine in this process, through the same connection type the front ends use: every operation's
// behaviour, the trust rules on what a client sends, and the questions it asks the client.

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

let base: string;
let root: string;
let engine: Engine;
let api: EngineConnection;
const answers = { network: false, accept: true, asked: [] as string[] };
const hooks: ClientHooks = {
  approveNetwork: async (question) => {
    answers.asked.push(`network: ${question.command}`);
    return answers.network;
  },
  confirmAccept: async (question) => {
    answers.asked.push(`accept: ${question.branch}`);
    return answers.accept;
  },
};

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "umbra-engine-"));
  root = join(base, "repo");
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src", "math.js"), "export function add(a, b) {\n  return a + b;\n}\n");
  writeFileSync(join(root, "README.md"), "# demo\nadds numbers\n");
  writeFileSync(join(root, ".umbraignore"), ".env\n");
  writeFileSync(join(root, ".env"), "SECRET=hunter2\n");
  symlinkSync("/etc/passwd", join(root, "passwd-link"));
  execFileSync("git", ["init", "-q"], { cwd: root });
  engine = new Engine({ watch: false });
  api = inProcess(engine, { name: "test", hooks });
});

afterAll(async () => {
  await api.close();
  await engine.close();
  rmSync(base, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("timed out waiting");
}

describe("engine operations", () => {
  it("reads and lists the user's folder, refusing hidden files and links out", async () => {
    const read = await api.call("readFile", { root, path: "src/math.js" });
    expect(read.ok).toBe(true);
    expect(read.text).toContain("return a + b;");
    const secret = await api.call("readFile", { root, path: ".env" });
    expect(secret.ok).toBe(false);
    expect(secret.text).not.toContain("hunter2");
    const link = await api.call("readFile", { root, path: "passwd-link" });
    expect(link.ok).toBe(false);
    expect(link.text).not.toContain("root:");
    const up = await api.call("readFile", { root, path: "../../etc/passwd" });
    expect(up.ok).toBe(false);
    const list = await api.call("listFiles", { root });
    expect(list.text).toContain("src/math.js");
    expect(list.text).not.toContain(".env");
  });

  it("rejects malformed requests with a one-line BAD_REQUEST", async () => {
    const error = await failure(api.call("readFile", { root } as never));
    expect(error.code).toBe("BAD_REQUEST");
    const unknown = await failure(api.call("nope" as never, { root } as never));
    expect(unknown.code).toBe("BAD_REQUEST");
  });

  it("edits in a branch, never the user's folder, and diffs base → branch", async () => {
    const before = readFileSync(join(root, "src", "math.js"), "utf8");
    const branch = await api.call("branchCreate", { root, label: "agent-1" });
    expect(branch.held).toBe(true);
    const edit = await api.call("edit", {
      root,
      branch: branch.id,
      path: "src/math.js",
      search: "return a + b;",
      replace: "return a + b + 0;",
    });
    expect(edit.ok).toBe(true);
    expect(edit.changed).toEqual(["src/math.js"]);
    expect(readFileSync(join(root, "src", "math.js"), "utf8")).toBe(before);
    const inBranch = await api.call("readFile", { root, branch: branch.id, path: "src/math.js" });
    expect(inBranch.text).toContain("a + b + 0");
    const diff = await api.call("diff", { root, branch: branch.id });
    expect(diff.files).toEqual([{ path: "src/math.js", kind: "modified" }]);
    expect(diff.diff).toContain("+  return a + b + 0;");
    const listed = await api.call("branchList", { root });
    expect(listed.branches.find((b) => b.id === branch.id)?.label).toBe("agent-1");
    const protectedWrite = await api.call("writeFile", {
      root,
      branch: branch.id,
      path: ".git/config",
      content: "[core]\n\tfsmonitor = evil\n",
    });
    expect(protectedWrite.ok).toBe(false);
    await api.call("branchDiscard", { root, branch: branch.id });
    const gone = await failure(api.call("diff", { root, branch: branch.id }));
    expect(gone.code).toBe("NOT_FOUND");
    const hostile = await failure(api.call("diff", { root, branch: "../../x" }));
    expect(hostile.code).toBe("NOT_FOUND");
  });

  it("lets an idle branch go (written out, not owned) and takes it back on the next request", async () => {
    const idle = new Engine({ watch: false, branchIdleMs: 50 });
    const other = inProcess(idle, { name: "idle", hooks });
    try {
      const branch = await other.call("branchCreate", { root, label: "idle" });
      await other.call("writeFile", { root, branch: branch.id, path: "kept.txt", content: "kept\n" });
      await waitFor(async () => {
        const listed = (await other.call("branchList", { root })).branches.find((b) => b.id === branch.id);
        return listed?.held === false;
      });
      const listed = (await other.call("branchList", { root })).branches.find((b) => b.id === branch.id);
      expect(listed).toMatchObject({ held: false, busy: false, label: "idle" });
      const read = await other.call("readFile", { root, branch: branch.id, path: "kept.txt" });
      expect(read.text).toContain("kept");
      await waitFor(async () => {
        const again = (await other.call("branchList", { root })).branches.find((b) => b.id === branch.id);
        return again?.held === false;
      });
      // let go, the branch is the user's to accept from the CLI (another process)
      execFileSync(process.execPath, [CLI, "shadow", "apply", branch.id, "--root", root], { stdio: "pipe" });
      expect(readFileSync(join(root, "kept.txt"), "utf8")).toBe("kept\n");
      rmSync(join(root, "kept.txt"));
      const gone = await failure(other.call("readFile", { root, branch: branch.id, path: "kept.txt" }));
      expect(gone.code).toBe("NOT_FOUND");
    } finally {
      await other.close();
      await idle.close();
    }
  });

  it("runs commands sandboxed in the branch; network only when the client approves", async () => {
    const branch = await api.call("branchCreate", { root });
    const run = await api.call("run", {
      root,
      branch: branch.id,
      command: "echo made > out.txt && cat out.txt",
    });
    expect(run.ran).toBe(true);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("made\n");
    expect(() => readFileSync(join(root, "out.txt"))).toThrow();
    answers.network = false;
    const denied = await api.call("run", {
      root,
      branch: branch.id,
      command: "echo 'a b'",
      network: true,
      reason: "x",
    });
    expect(denied.ran).toBe(false);
    // quoted as it runs: the user is asked about exactly the words of the command
    expect(answers.asked).toContain(`network: sh -c "echo 'a b'"`);
    const grep = await api.call("grep", { root, branch: branch.id, pattern: "made" });
    expect(grep.matches).toEqual([{ path: "out.txt", line: 1, text: "made" }]);
    const userGrep = await api.call("grep", { root, pattern: "made" });
    expect(userGrep.matches).toEqual([]);
    await api.call("branchDiscard", { root, branch: branch.id });
  });

  it("asks on the page, through the approvals queue, for a client that cannot ask its own user", async () => {
    const unasked: ClientHooks = { approveNetwork: async () => undefined, confirmAccept: async () => false };
    // the client names itself (untrusted): a bidirectional override in it is shown escaped on the page
    const mute = inProcess(engine, { name: "mute-client\u202e", hooks: unasked });
    const branch = await mute.call("branchCreate", { root });
    const run = (command: string) =>
      mute.call("run", { root, branch: branch.id, command, network: true, reason: "fetch the fixtures" });
    const queue = async () => (await api.call("approvalList", {})).approvals;
    const queued = async () => {
      await waitFor(async () => (await queue()).length > 0);
      return (await queue())[0];
    };
    // no page open: nobody can answer, denied at once
    expect((await run("echo alone")).ran).toBe(false);
    expect(await queue()).toEqual([]);
    const events: { state?: unknown; decision?: unknown }[] = [];
    const unsubscribe = engine.events.subscribe((event) => {
      if (event.type === "approval") events.push(event as { state?: unknown; decision?: unknown });
    });
    try {
      const approved = run("echo fetched");
      const item = await queued();
      expect(item).toMatchObject({
        root: realpathSync(root),
        branch: branch.id,
        command: 'sh -c "echo fetched"',
        reason: "fetch the fixtures",
      });
      expect(item?.session).toContain("mute-client");
      expect(item?.session).not.toContain("\u202e");
      await api.call("approvalAnswer", { approval: item?.id ?? "", decision: "once" });
      const done = await approved;
      expect(done.ran).toBe(true);
      expect(done.stdout).toBe("fetched\n");
      const denied = run("echo refused");
      await api.call("approvalAnswer", { approval: (await queued())?.id ?? "", decision: "deny" });
      expect((await denied).ran).toBe(false);
      expect(events.map((event) => [event.state, event.decision ?? null])).toEqual([
        ["queued", null],
        ["answered", "once"],
        ["queued", null],
        ["answered", "deny"],
      ]);
      // the client goes away: what it asked is dropped (denied), not left in the queue
      const left = run("echo gone");
      await queued();
      await mute.close();
      expect((await left).ran).toBe(false);
      expect(await queue()).toEqual([]);
    } finally {
      unsubscribe();
      await api.call("branchDiscard", { root, branch: branch.id });
    }
  });

  it("denies a client's request the page did not answer in time", async () => {
    const timed = new Engine({ watch: false, pageAnswerMs: 300 });
    const client = inProcess(timed, {
      name: "mute-client",
      hooks: { approveNetwork: async () => undefined, confirmAccept: async () => false },
    });
    const seen: unknown[][] = [];
    const unsubscribe = timed.events.subscribe((event) => {
      const { state, decision } = event as { state?: unknown; decision?: unknown };
      if (event.type === "approval") seen.push([state, decision ?? null]);
    });
    try {
      const branch = await client.call("branchCreate", { root });
      const run = await client.call("run", { root, branch: branch.id, command: "echo late", network: true });
      expect(run.ran).toBe(false);
      expect(seen).toEqual([
        ["queued", null],
        ["answered", "expired"],
      ]);
      expect((await client.call("approvalList", {})).approvals).toEqual([]);
      await client.call("branchDiscard", { root, branch: branch.id });
    } finally {
      unsubscribe();
      await client.close();
      await timed.close();
    }
  });

  it("hides from the next command a file the user hid a moment ago", async () => {
    writeFileSync(join(root, "later.txt"), "LATER-SECRET\n");
    const branch = await api.call("branchCreate", { root });
    try {
      const before = await api.call("run", { root, branch: branch.id, command: "cat later.txt || true" });
      expect(before.stdout).toContain("LATER-SECRET");
      writeFileSync(join(root, ".umbraignore"), ".env\nlater.txt\n");
      const after = await api.call("run", { root, branch: branch.id, command: "cat later.txt || true" });
      expect(after.stdout + after.stderr).not.toContain("LATER-SECRET");
      const read = await api.call("readFile", { root, branch: branch.id, path: "later.txt" });
      expect(read.text).not.toContain("LATER-SECRET");
    } finally {
      writeFileSync(join(root, ".umbraignore"), ".env\n");
      rmSync(join(root, "later.txt"));
      await api.call("branchDiscard", { root, branch: branch.id });
    }
  });

  it("stops a command when the caller cancels the request", async () => {
    const branch = await api.call("branchCreate", { root });
    const stop = new AbortController();
    const running = api.call(
      "run",
      { root, branch: branch.id, command: "echo started; sleep 600" },
      { signal: stop.signal },
    );
    // cancelled once the command is up (it wrote its first line into the branch's view of the world)
    setTimeout(() => stop.abort(), 1500);
    const result = await running;
    expect(result.ran).toBe(true);
    expect(result.exitCode).not.toBe(0);
    await api.call("branchDiscard", { root, branch: branch.id });
    const cancelled = await failure(api.call("status", { root }, { signal: AbortSignal.abort() }));
    expect(cancelled.code).toBe("CANCELLED");
  });

  it("accepts only what the client confirmed, merging into the user's folder", async () => {
    const branch = await api.call("branchCreate", { root });
    await api.call("writeFile", { root, branch: branch.id, path: "NOTES.md", content: "notes\n" });
    answers.accept = false;
    const declined = await api.call("accept", { root, branch: branch.id });
    expect(declined.confirmed).toBe(false);
    expect(declined.written).toBe(false);
    expect(() => readFileSync(join(root, "NOTES.md"))).toThrow();
    answers.accept = true;
    const accepted = await api.call("accept", { root, branch: branch.id });
    expect(accepted.confirmed).toBe(true);
    expect(accepted.applied).toEqual(["NOTES.md"]);
    expect(accepted.discarded).toBe(true);
    expect(readFileSync(join(root, "NOTES.md"), "utf8")).toBe("notes\n");
    rmSync(join(root, "NOTES.md"));
  });

  it("accepts without asking only when the user's own config says so, never the repository's", async () => {
    answers.accept = false;
    mkdirSync(join(root, ".umbra"), { recursive: true });
    writeFileSync(join(root, ".umbra", "config.json"), JSON.stringify({ mcp: { autoAccept: true } }));
    const branch = await api.call("branchCreate", { root });
    await api.call("writeFile", { root, branch: branch.id, path: "AUTO.md", content: "auto\n" });
    const refused = await api.call("accept", { root, branch: branch.id });
    expect(refused.confirmed).toBe(false);
    expect(() => readFileSync(join(root, "AUTO.md"))).toThrow();
    rmSync(join(root, ".umbra"), { recursive: true });
    const userConfig = join(process.env.XDG_CONFIG_HOME ?? "", "umbra");
    mkdirSync(userConfig, { recursive: true });
    writeFileSync(join(userConfig, "config.json"), JSON.stringify({ mcp: { autoAccept: true } }));
    try {
      const asked = answers.asked.length;
      const accepted = await api.call("accept", { root, branch: branch.id });
      expect(accepted.confirmed).toBe(true);
      expect(answers.asked.length).toBe(asked);
      expect(readFileSync(join(root, "AUTO.md"), "utf8")).toBe("auto\n");
    } finally {
      rmSync(join(userConfig, "config.json"));
      rmSync(join(root, "AUTO.md"), { force: true });
      answers.accept = true;
    }
  });

  it("searches (building the index when asked) and reports status", async () => {
    const missing = await failure(api.call("search", { root, query: "add numbers" }));
    expect(missing.code).toBe("UNAVAILABLE");
    const progress: string[] = [];
    const found = await api.call(
      "search",
      { root, query: "add", build: true },
      { onProgress: (p) => progress.push(p.message) },
    );
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((message) => message.startsWith("indexing: "))).toBe(true);
    expect(found.hits.map((hit) => hit.path)).toContain("src/math.js");
    // a hit shows its first lines as the file holds them now
    expect(found.hits.find((hit) => hit.path === "src/math.js")?.preview).toContain("a + b");
    expect(found.hits.every((hit) => hit.path !== ".env")).toBe(true);
    // one name is read as an identifier (its definition first)
    expect(found.intent).toBe("identifier");
    const status = await api.call("status", { root });
    expect(status.index.indexed).toBe(true);
    expect(status.engine.clients).toBe(1);
    // a client's glob: one that sends a backtracking matcher into hours answers at once, and one that
    // cannot be read is refused as a bad request
    const globbed = await api.call("search", { root, query: "add", path: "*.js" });
    expect(globbed.hits.map((hit) => hit.path)).toContain("src/math.js");
    const hostile = await api.call("search", { root, query: "add", path: `**/${"*?".repeat(40)}#` });
    expect(hostile.hits).toEqual([]);
    const bad = await failure(api.call("search", { root, query: "add", path: "{a,b}".repeat(9) }));
    expect(bad.code).toBe("BAD_REQUEST");
    expect(bad.message).toMatch(/more than 256 alternatives/);
  });

  it("shows a hit's kept preview only while the file is the same and visible", async () => {
    const paths = async () => (await api.call("search", { root, query: "add", build: true })).hits;
    const math = join(root, "src", "math.js");
    const original = readFileSync(math, "utf8");
    expect((await paths()).find((hit) => hit.path === "src/math.js")?.preview).toContain("a + b");
    // hidden by a rule added since: left out, kept text or not
    writeFileSync(join(root, ".umbraignore"), ".env\nsrc/math.js\n");
    expect((await paths()).map((hit) => hit.path)).not.toContain("src/math.js");
    writeFileSync(join(root, ".umbraignore"), ".env\n");
    expect((await paths()).map((hit) => hit.path)).toContain("src/math.js");
    // the same name, now another name of the hidden .env: never its text
    rmSync(math);
    linkSync(join(root, ".env"), math);
    try {
      const hits = await paths();
      expect(JSON.stringify(hits)).not.toContain("hunter2");
      expect(hits.map((hit) => hit.path)).not.toContain("src/math.js");
    } finally {
      rmSync(math);
      writeFileSync(math, original);
    }
    // changed since: read again
    writeFileSync(math, original.replace("a + b", "b + a"));
    try {
      expect((await paths()).find((hit) => hit.path === "src/math.js")?.preview).toContain("b + a");
    } finally {
      writeFileSync(math, original);
    }
  });
});
