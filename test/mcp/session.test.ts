import { mkdir, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EngineError } from "../../src/engine/errors.js";
import { McpSession } from "../../src/mcp/session.js";
import {
  type Answer,
  approve,
  callTool,
  fakeEngine,
  refuse,
  TOOL_NAMES,
  testClient,
} from "../helpers/mcp.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

/**
 * An MCP session in this process against a fake engine connection (tests only): what the session
 * sends the engine, what it makes of the engine's answers and errors, and how the engine's questions
 * reach the user through elicitation. The real engine behind the same tools: stdio.test.ts, http.test.ts.
 */

let dir: string;
let root: string;
const open: { session: McpSession; client: Client }[] = [];

beforeEach(async () => {
  dir = await tempDir("mcp-session");
  root = join(dir, "ws");
  await mkdir(root);
  root = await realpath(root);
});
afterEach(async () => {
  for (const { session, client } of open.splice(0)) {
    await client.close();
    await session.close();
  }
  await cleanup(dir);
});

/** A session on `root` as if named with --root; with `given: null`, none named and `here` the start folder. */
async function connect(
  engine: ReturnType<typeof fakeEngine>,
  options: { given?: string | null; here?: string; answer?: Answer; roots?: string[] } = {},
) {
  const given = options.given === undefined ? root : options.given;
  const here = options.here ?? dir;
  const session = new McpSession({
    root: { ...(given !== null ? { given } : {}), here: async () => here },
    env: process.env,
    log: () => {},
    open: engine.open,
  });
  const { client, questions } = testClient(
    options.answer,
    options.roots ? { roots: { listChanged: true } } : {},
  );
  const roots = options.roots;
  if (roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((path) => ({ uri: pathToFileURL(path).href })),
    }));
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  await session.connect(serverEnd);
  await client.connect(clientEnd);
  open.push({ session, client });
  return { session, client, questions };
}

const echo = fakeEngine(async (name, params) => ({ name, params, text: "ok" }));

describe("umbra mcp session", () => {
  it("lists the 20 tools with descriptions, annotations and input schemas without root", async () => {
    const { client } = await connect(echo);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(60);
      expect(tool.inputSchema.type).toBe("object");
      expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain("root");
      expect(tool.annotations?.readOnlyHint).toBeTypeOf("boolean");
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get("edit")?.inputSchema.required?.sort()).toEqual(["branch", "path", "replace", "search"]);
    expect(byName.get("run")?.description).toMatch(/network: true/);
    expect(byName.get("accept")?.annotations?.destructiveHint).toBe(true);
    expect(byName.get("read_file")?.annotations?.readOnlyHint).toBe(true);
  });

  it("calls the engine in the session's workspace, whatever root the agent sends", async () => {
    const engine = fakeEngine(async () => ({ ok: true, text: "a.ts\n2| b" }));
    const { client } = await connect(engine);
    const read = await callTool(client, "read_file", { path: "a.ts", startLine: 2, root: "/etc" });
    expect(engine.state.calls).toEqual([{ name: "readFile", params: { path: "a.ts", startLine: 2, root } }]);
    expect(read).toEqual({ isError: false, text: "a.ts\n2| b", data: { ok: true, text: "a.ts\n2| b" } });
    await callTool(client, "status");
    expect(engine.state.calls[1]).toEqual({ name: "status", params: { root } });
    // search builds a missing index (an agent cannot run umbra index)
    await callTool(client, "search", { query: "add", build: false });
    expect(engine.state.calls[2]).toEqual({
      name: "search",
      params: { query: "add", limit: 10, build: true, root },
    });
    // one connection for the session, named after the client
    expect(engine.state.opened.map((options) => options.name)).toEqual(["umbra-test"]);
  });

  it("marks a tool that did not do its work as an error, with what it did", async () => {
    const engine = fakeEngine(async () => ({ ok: false, text: "no match for search in a.ts" }));
    const { client } = await connect(engine);
    const edit = await callTool(client, "edit", { branch: "b", path: "a.ts", search: "x", replace: "y" });
    expect(edit).toMatchObject({ isError: true, text: "no match for search in a.ts", data: { ok: false } });
  });

  it("turns engine errors and bad arguments into error results the model can read", async () => {
    const engine = fakeEngine(async () => {
      throw new EngineError("REFUSED", ".env is hidden\nsecond line");
    });
    const { client } = await connect(engine);
    const refused = await callTool(client, "read_file", { path: ".env" });
    expect(refused).toMatchObject({ isError: true, text: ".env is hidden" });
    const bad = await callTool(client, "read_file", { startLine: 0 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/path/);
    expect(engine.state.calls).toHaveLength(1);
  });

  it("passes the engine's progress on to a client that asked for it, growing", async () => {
    const engine = fakeEngine(async (_name, _params, _hooks, options) => {
      for (const [message, done] of [
        ["hashing", 0],
        ["hashing", 2],
        ["hashing", 2],
        ["embedding", 1],
      ] as const)
        options.onProgress?.({ message, done, total: 2 });
      return { hits: [], index: { watched: true, syncing: false, files: 2, chunks: 2 } };
    });
    const { client } = await connect(engine);
    const notes: { progress: number; total?: number; message?: string }[] = [];
    await client.callTool({ name: "search", arguments: { query: "x" } }, undefined, {
      onprogress: (note) => void notes.push(note),
    });
    expect(notes).toEqual([
      { progress: 0, total: 2, message: "hashing" },
      { progress: 2, total: 2, message: "hashing" },
      { progress: 3, total: 4, message: "embedding" },
    ]);
    // without a progress token, the engine gets no progress callback
    let asked: unknown;
    const quiet = fakeEngine(async (_name, _params, _hooks, options) => {
      asked = options.onProgress;
      return { branches: [] };
    });
    await callTool((await connect(quiet)).client, "branch_list");
    expect(asked).toBeUndefined();
  });

  it("cancels the engine's call when the client cancels the tool call", async () => {
    let aborted: () => void = () => {};
    const seen = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    const engine = fakeEngine(
      (_name, _params, _hooks, options) =>
        new Promise((_resolve, reject) => {
          options.signal?.addEventListener("abort", () => {
            aborted();
            reject(new Error("cancelled"));
          });
        }),
    );
    const { client } = await connect(engine);
    const controller = new AbortController();
    const call = client.callTool(
      { name: "run", arguments: { branch: "b", command: "sleep 1000" } },
      undefined,
      { signal: controller.signal },
    );
    await waitUntil(() => engine.state.calls.length === 1, "the call to reach the engine");
    controller.abort();
    await expect(call).rejects.toThrow();
    await seen;
  });

  it("releases its engine connection when it closes", async () => {
    const engine = fakeEngine(async () => ({ branches: [] }));
    const { session, client } = await connect(engine);
    await callTool(client, "branch_list");
    expect(engine.state.closed).toBe(0);
    await session.close();
    expect(engine.state.closed).toBe(1);
  });

  describe("the engine's questions", () => {
    const asking = fakeEngine(async (name, params, hooks) => {
      if (name === "run") {
        const answer = await hooks.approveNetwork({
          command: String(params.command),
          reason: "fetch packages",
          branch: String(params.branch),
        });
        // as the engine does: a client that cannot ask is asked on the page, or denied (here: denied)
        const ran = answer === true;
        return { ran, unasked: answer === undefined, text: ran ? "ran" : "network not approved" };
      }
      const confirmed = await hooks.confirmAccept({
        branch: String(params.branch),
        summary: "1 file to write",
        diffstat: [{ path: "math.ts", added: 2, removed: 1 }],
      });
      const report = { written: confirmed, applied: [], unchanged: [], conflicts: [], refused: [] };
      return { ...report, confirmed, discarded: false, message: confirmed ? "accepted" : "not confirmed" };
    });
    const run = { branch: "b1", command: "npm install", network: true, reason: "fetch packages" };

    it("asks the user through elicitation and takes their answer", async () => {
      const yes = await connect(asking, { answer: approve });
      expect((await callTool(yes.client, "run", run)).data.ran).toBe(true);
      expect(yes.questions[0]).toMatch(/npm install/);
      expect(yes.questions[0]).toMatch(/fetch packages/);
      expect(yes.questions[0]).toMatch(/b1/);
      expect((await callTool(yes.client, "accept", { branch: "b1" })).data.confirmed).toBe(true);
      expect(yes.questions[1]).toMatch(/math\.ts {2}\+2 -1/);

      const no = await connect(asking, { answer: refuse });
      expect((await callTool(no.client, "run", run)).data.ran).toBe(false);
      expect((await callTool(no.client, "accept", { branch: "b1" })).data.confirmed).toBe(false);
      const declined = await connect(asking, { answer: () => ({ action: "decline" }) });
      expect((await callTool(declined.client, "run", run)).data.ran).toBe(false);
    });

    it("tells the engine it cannot ask when the client cannot, and answers an accept no", async () => {
      const { client, questions } = await connect(asking);
      const { data } = await callTool(client, "run", run);
      expect(data).toMatchObject({ ran: false, unasked: true });
      expect((await callTool(client, "accept", { branch: "b1" })).data.confirmed).toBe(false);
      expect(questions).toEqual([]);
    });

    it("shows the agent's words without control sequences or bidirectional controls", async () => {
      const yes = await connect(asking, { answer: approve });
      await callTool(yes.client, "run", { ...run, command: "echo \u001b]52;c;aGk=\u0007hi\u001b[2J\rfake" });
      expect(yes.questions[0]).toMatch(/echo \]52;c;aGk=hi\[2Jfake/);
      expect(yes.questions[0]).not.toContain("\u001b");
      // shown in the order it runs: no bidirectional override can make "rm -rf ~" read as something else
      await callTool(yes.client, "run", { ...run, command: "echo \u202e~ fr- mr\u202c; \u2067x\u2069" });
      expect(yes.questions[1]).toMatch(/echo ~ fr- mr; x/);
    });
  });

  describe("the workspace", () => {
    it("takes the client's first root that is a real folder, never / or the home folder, once", async () => {
      const second = join(dir, "second");
      await mkdir(second);
      const engine = fakeEngine(async () => ({ branches: [] }));
      const { client } = await connect(engine, {
        given: null,
        roots: ["/", homedir(), join(dir, "missing"), root, second],
      });
      await callTool(client, "branch_list");
      await client.sendRootsListChanged();
      await callTool(client, "branch_list");
      expect(engine.state.calls.map((call) => call.params.root)).toEqual([root, root]);
    });

    it("prefers --root to the client's roots", async () => {
      const other = join(dir, "other");
      await mkdir(other);
      const engine = fakeEngine(async () => ({ branches: [] }));
      const { client } = await connect(engine, { given: other, roots: [root] });
      await callTool(client, "branch_list");
      expect(engine.state.calls[0]?.params.root).toBe(other);
    });

    it("takes the folder it started in when the client has no roots, but never the home folder", async () => {
      const engine = fakeEngine(async () => ({ branches: [] }));
      const started = await connect(engine, { given: null, here: root });
      await callTool(started.client, "branch_list");
      expect(engine.state.calls[0]?.params.root).toBe(root);
      const home = await connect(engine, { given: null, here: await realpath(homedir()) });
      const result = await callTool(home.client, "branch_list");
      expect(result).toMatchObject({
        isError: true,
        text: expect.stringMatching(/^no workspace: .* --root DIR$/),
      });
      expect(engine.state.opened).toHaveLength(1);
    });
  });
});
