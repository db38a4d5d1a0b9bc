/**
 * The no-byte-lost matrix driven through the HTTP API's accept, as the page sends it (session cookie +
 * CSRF header): the agent writes in a branch (an engine connection of its own), the user edits their
 * folder (a git repository) meanwhile, the page accepts all, one file or one hunk, and undoes. After
 * every case the folder holds exactly the expected merge, or on a conflict exactly the user's bytes.
 * The cases are those of matrix-shadow.test.ts that take distinct paths through the accept.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { UndoResult } from "../../src/accept/index.js";
import type { AcceptResult, BranchSummary } from "../../src/engine/api.js";
import { type EngineConnection, inProcess } from "../../src/engine/client.js";
import { Engine } from "../../src/engine/engine.js";
import { type HttpApi, serveHttpApi, workspaceId } from "../../src/http/server.js";
import { NO_HOOKS } from "../helpers/engine.js";
import { isolatedEnv } from "../helpers/mcp.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { type Answer, type ApiClient, body, signIn } from "../http/client.js";
import { replaceLine, snapshot } from "./helpers.js";
import {
  AGENT,
  BASE,
  BOTH,
  type Folder,
  SAVE_STYLES,
  save,
  USER,
  USER_SAME_LINE,
  userFolder,
} from "./matrix.js";

let home: string;
let engine: Engine;
let http: HttpApi;
let agent: EngineConnection;
let page: ApiClient;
let bearer: ApiClient;
const folders: Folder[] = [];
let f: Folder;
let ws: string;

beforeAll(async () => {
  home = await tempDir("matrix-http");
  engine = new Engine({ env: isolatedEnv(home), watch: false });
  agent = inProcess(engine, { name: "agent", hooks: NO_HOOKS });
  http = await serveHttpApi({ engine, port: 0, log: () => {} });
  ({ page, bearer } = await signIn(http.port, http.token));
});

afterAll(async () => {
  await http?.close();
  await agent?.close();
  await engine?.close();
  await cleanup(home, ...folders.map((folder) => folder.base));
});

beforeEach(async () => {
  f = userFolder();
  folders.push(f);
  await agent.call("status", { root: f.ws });
  ws = `/api/workspaces/${workspaceId(f.ws)}`;
});

/** A branch in which the agent wrote `files` (path → content); its id. */
async function agentBranch(files: Record<string, string>): Promise<string> {
  const made = await bearer.send("POST", `${ws}/branches`, { label: "agent" });
  expect(made.status, made.text).toBe(201);
  const id = body<BranchSummary>(made).id;
  for (const [path, content] of Object.entries(files)) {
    const written = await agent.call("writeFile", { root: f.ws, branch: id, path, content });
    expect(written.ok, written.text).toBe(true);
  }
  return id;
}

/** The page's accept of `id` (all, or what `payload` names): the answer. */
function accept(id: string, payload: Record<string, unknown> = {}, as: ApiClient = page): Promise<Answer> {
  return as.send("POST", `${ws}/branches/${id}/accept`, payload);
}

/** An accept that answered 200: its result. */
async function accepted(id: string, payload: Record<string, unknown> = {}): Promise<AcceptResult> {
  const answer = await accept(id, payload);
  expect(answer.status, answer.text).toBe(200);
  return body<AcceptResult>(answer);
}

/** An accept that wrote nothing because of conflicts: the conflicting paths. */
async function conflicted(id: string): Promise<string[]> {
  const result = await accepted(id);
  expect(result.written).toBe(false);
  return result.conflicts.map((conflict) => conflict.path);
}

/** Every file of the user's folder but .git: path → kind, mode and content. */
const files = () => snapshot(f.ws);

/** Fails unless the user's folder holds exactly the files `contents` (path → content), folders aside. */
function expectFiles(contents: Record<string, string>): void {
  const now = Object.entries(files()).filter(([, entry]) => entry !== "dir");
  expect(now.map(([path]) => path).sort()).toEqual(Object.keys(contents).sort());
  for (const [path, content] of Object.entries(contents)) expect(f.read(path), path).toBe(content);
}

const branchIds = async (): Promise<string[]> =>
  body<{ branches: BranchSummary[] }>(await page.get(`${ws}/branches`)).branches.map((b) => b.id);

describe("the page's accept while the user edits", () => {
  it.each(SAVE_STYLES)(
    "the user saves other lines (%s): merged, both kept, the branch is gone",
    async (style) => {
      const id = await agentBranch({ "f.txt": AGENT, "added.txt": "new\n" });
      save(f, "f.txt", USER, style);
      const result = await accepted(id);
      expect(result).toMatchObject({ confirmed: true, written: true, conflicts: [] });
      expect(result.applied.sort()).toEqual(["added.txt", "f.txt"]);
      expectFiles({ "added.txt": "new\n", "f.txt": BOTH });
      expect(await branchIds()).toEqual([]);
    },
  );

  it.each(SAVE_STYLES)(
    "the user saves the same line (%s): conflict, nothing written, the branch stays",
    async (style) => {
      const id = await agentBranch({ "f.txt": AGENT, "added.txt": "new\n" });
      save(f, "f.txt", USER_SAME_LINE, style);
      const before = files();
      expect(await conflicted(id)).toEqual(["f.txt"]);
      // all or nothing: the clean file is not written either
      expect(files()).toEqual(before);
      expectFiles({ "f.txt": USER_SAME_LINE });
      expect(await branchIds()).toEqual([id]);
    },
  );

  it("the user deletes the file the agent changed: conflict, the file is not brought back", async () => {
    const id = await agentBranch({ "f.txt": AGENT });
    rmSync(join(f.ws, "f.txt"));
    expect(await conflicted(id)).toEqual(["f.txt"]);
    expect(files()).toEqual({});
  });

  it("CRLF lines and no final newline: the user's bytes kept exactly", async () => {
    const crlf = (text: string) => text.replace(/\n/g, "\r\n").replace(/\r\n$/, "");
    writeFileSync(join(f.ws, "w.txt"), crlf(BASE));
    f.git("add", "-A");
    f.git("commit", "-qm", "crlf");
    const id = await agentBranch({ "w.txt": crlf(AGENT) });
    save(f, "w.txt", crlf(BASE).replace(/20$/, "twenty-by-user"), "atomic rename");
    expect((await accepted(id)).written).toBe(true);
    expect(f.read("w.txt")).toBe(crlf(AGENT).replace(/20$/, "twenty-by-user"));
  });

  it("two agents change the same lines: the second conflicts; the first agent's and the user's lines stay", async () => {
    const first = await agentBranch({ "f.txt": AGENT });
    const second = await agentBranch({ "f.txt": replaceLine(BASE, 2, "two-by-second") });
    save(f, "f.txt", USER, "in place");
    expect((await accepted(first)).written).toBe(true);
    expect(await conflicted(second)).toEqual(["f.txt"]);
    expectFiles({ "f.txt": BOTH });
  });
});

describe("the page's accept while the user works with git", () => {
  it("git checkout of another branch meanwhile: the agent's change lands on what is checked out", async () => {
    const id = await agentBranch({ "f.txt": AGENT });
    f.commitOnOther(() => save(f, "f.txt", USER, "in place"));
    f.git("checkout", "-q", "other");
    expect((await accepted(id)).written).toBe(true);
    expect(f.read("f.txt")).toBe(BOTH);
    expect(f.git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("other");
    expect(f.git("status", "--porcelain")).toBe(" M f.txt\n");
  });

  it("git stash of the very lines the agent changed: conflict, nothing written; the stash pops clean", async () => {
    save(f, "f.txt", USER_SAME_LINE, "in place");
    const id = await agentBranch({ "f.txt": replaceLine(USER_SAME_LINE, 2, "two-by-agent") });
    f.git("stash", "-q");
    expect(await conflicted(id)).toEqual(["f.txt"]);
    expectFiles({ "f.txt": BASE });
    f.git("stash", "pop", "-q");
    expectFiles({ "f.txt": USER_SAME_LINE });
  });

  it("never writes the repository's metadata: HEAD, index and refs stay the user's", async () => {
    const head = f.git("rev-parse", "HEAD");
    const id = await agentBranch({ "f.txt": AGENT });
    expect((await accepted(id)).written).toBe(true);
    expect(f.git("rev-parse", "HEAD")).toBe(head);
    expect(f.git("status", "--porcelain")).toBe(" M f.txt\n");
  });
});

describe("per file, per hunk, verify and undo through the page", () => {
  it("one file, then one hunk of another: the rest stays in the branch; a hunk that is not there changes nothing", async () => {
    const agentText = replaceLine(replaceLine(BASE, 2, "two-by-agent"), 18, "eighteen-by-agent");
    const id = await agentBranch({ "f.txt": agentText, "new.txt": "n\n" });
    const user = replaceLine(BASE, 10, "ten-by-user");
    save(f, "f.txt", user, "in place");
    expect((await accepted(id, { files: ["new.txt"] })).applied).toEqual(["new.txt"]);
    expectFiles({ "f.txt": user, "new.txt": "n\n" });
    const before = files();
    for (const payload of [{ files: ["f.txt"], hunks: [3] }, { hunks: [1] }, { files: ["nope.txt"] }]) {
      const bad = await accept(id, payload);
      expect(bad.status, JSON.stringify(payload)).toBe(400);
      expect(files()).toEqual(before);
    }
    expect((await accepted(id, { files: ["f.txt"], hunks: [2] })).written).toBe(true);
    expectFiles({ "f.txt": replaceLine(user, 18, "eighteen-by-agent"), "new.txt": "n\n" });
    expect(await branchIds()).toEqual([id]);
    // the whole branch now: hunk 1 is what is left to bring in
    expect((await accepted(id)).written).toBe(true);
    expectFiles({
      "f.txt": replaceLine(replaceLine(user, 18, "eighteen-by-agent"), 2, "two-by-agent"),
      "new.txt": "n\n",
    });
  });

  it("partial: the files that merge are written, the conflicting one stays the user's and in the branch", async () => {
    const id = await agentBranch({ "f.txt": AGENT, "new.txt": "n\n" });
    save(f, "f.txt", USER_SAME_LINE, "atomic rename");
    const result = await accepted(id, { partial: true });
    expect(result).toMatchObject({ written: true, applied: ["new.txt"], discarded: false });
    expect(result.conflicts.map((conflict) => conflict.path)).toEqual(["f.txt"]);
    expectFiles({ "f.txt": USER_SAME_LINE, "new.txt": "n\n" });
    expect(await branchIds()).toEqual([id]);
  });

  it("verify: a failing check in the merged result writes nothing; a passing one writes the merge", async () => {
    const id = await agentBranch({ "f.txt": AGENT });
    save(f, "f.txt", USER, "in place");
    const refused = await accepted(id, {
      verify: "grep -q two-by-agent f.txt && ! grep -q nineteen-by-user f.txt",
    });
    expect(refused).toMatchObject({ written: false, verification: { passed: false } });
    expectFiles({ "f.txt": USER });
    // the check sees the merge (both lines) in a fresh branch, not the user's folder
    const passed = await accepted(id, {
      verify: "grep -q two-by-agent f.txt && grep -q nineteen-by-user f.txt",
    });
    expect(passed).toMatchObject({ written: true, verification: { passed: true } });
    expectFiles({ "f.txt": BOTH });
  });

  it("undo restores the user's bytes and removes the agent's new file; a second undo has nothing to take back", async () => {
    const id = await agentBranch({ "f.txt": AGENT, "deep/new.txt": "n\n" });
    save(f, "f.txt", USER, "atomic rename");
    expect((await accepted(id)).written).toBe(true);
    expectFiles({ "deep/new.txt": "n\n", "f.txt": BOTH });
    const undo = await page.send("POST", `${ws}/undo`);
    expect(undo.status, undo.text).toBe(200);
    expectFiles({ "f.txt": USER });
    expect(body<UndoResult>(undo).found).toBe(true);
    const again = await page.send("POST", `${ws}/undo`);
    expect(body<UndoResult>(again)).toMatchObject({ found: false, restored: [] });
    expectFiles({ "f.txt": USER });
  });

  it("undo leaves a file the user changed after the accept", async () => {
    const id = await agentBranch({ "f.txt": AGENT, "new.txt": "n\n" });
    expect((await accepted(id)).written).toBe(true);
    save(f, "f.txt", "mine after the accept\n", "in place");
    const undo = body<UndoResult>(await page.send("POST", `${ws}/undo`));
    expect(undo.left.map((file) => file.path)).toEqual(["f.txt"]);
    expectFiles({ "f.txt": "mine after the accept\n" });
  });

  it("a bearer client's accept and undo write nothing", async () => {
    const id = await agentBranch({ "f.txt": AGENT });
    save(f, "f.txt", USER, "in place");
    const before = files();
    const answer = await accept(id, {}, bearer);
    expect(body<AcceptResult>(answer)).toMatchObject({ confirmed: false, written: false });
    expect((await bearer.send("POST", `${ws}/undo`)).status).toBe(403);
    expect(files()).toEqual(before);
  });
});
