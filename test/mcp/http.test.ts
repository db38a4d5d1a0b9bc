import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serveHttp } from "../../src/mcp/http.js";
import { McpSession } from "../../src/mcp/session.js";
import { CLI, requireBuiltCli } from "../helpers/cli.js";
import {
  approve,
  callTool,
  fakeEngine,
  gitFixture,
  isolatedEnv,
  TOOL_NAMES,
  testClient,
} from "../helpers/mcp.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

/** `umbra mcp --http` as a user starts it, reached as a client (or a hostile page) would. */

interface Served {
  child: ChildProcess;
  url: string;
  port: number;
  token: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

let home: string;
let root: string;
let tokenFile: string;
let served: Served | undefined;
const clients: { close(): Promise<void> }[] = [];

async function serve(): Promise<Served> {
  const child = spawn(process.execPath, [CLI, "mcp", "--http", "--root", root, "--token-file", tokenFile], {
    env: isolatedEnv(home),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await waitUntil(() => /token \S+/.test(stderr) || child.exitCode !== null, "umbra mcp --http to listen");
  const url = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(stderr);
  const token = /token (\S+)/.exec(stderr)?.[1];
  if (!url?.[1] || !url[2] || !token) throw new Error(`umbra mcp --http did not start: ${stderr}`);
  return { child, url: url[1], port: Number(url[2]), token, stderr: () => stderr, exited };
}

/** A raw request (any Host, Origin, token): its status and body. */
function raw(
  port: number,
  headers: Record<string, string>,
  body: unknown,
  method = "POST",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

async function httpClient(s: Served) {
  const { client } = testClient();
  const transport = new StreamableHTTPClientTransport(new URL(s.url), {
    requestInit: { headers: { authorization: `Bearer ${s.token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("mcp-http-home");
  root = await gitFixture();
  tokenFile = join(home, "token");
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  if (served && served.child.exitCode === null) {
    served.child.kill("SIGTERM");
    await served.exited;
  }
  served = undefined;
  await cleanup(home, join(root, ".."));
});

describe("umbra mcp --http", () => {
  it("serves the tools to a client with this start's token, in sessions of their own", async () => {
    served = await serve();
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect((await readFile(tokenFile, "utf8")).trim()).toBe(served.token);
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);

    const one = await httpClient(served);
    const two = await httpClient(served);
    expect(one.transport.sessionId).toMatch(/\S/);
    expect(two.transport.sessionId).not.toBe(one.transport.sessionId);
    const { tools } = await one.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
    const status = await callTool(two.client, "status");
    expect(status.isError).toBe(false);
    expect(status.data.root).toBe(root);
  });

  it("refuses requests without the token, from other Hosts and from other sites' pages", async () => {
    served = await serve();
    const { port, token } = served;
    const host = `127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${token}` };
    expect((await raw(port, { host }, initialize)).status).toBe(401);
    expect((await raw(port, { host, authorization: "Bearer wrong" }, initialize)).status).toBe(401);
    expect((await raw(port, { ...auth, host: `evil.example:${port}` }, initialize)).status).toBe(403);
    expect((await raw(port, { ...auth, host, origin: "http://evil.example" }, initialize)).status).toBe(403);
    // the same request, rightly addressed, makes a session
    const ok = await raw(
      port,
      { ...auth, host: `localhost:${port}`, origin: "http://localhost:6274" },
      initialize,
    );
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/"serverInfo"/);
    // without a session, only an initialize is answered
    const orphan = await raw(port, { ...auth, host }, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(orphan.status).toBe(400);
    const unknown = await raw(
      port,
      { ...auth, host, "mcp-session-id": "nope" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    );
    expect(unknown.status).toBe(404);
  });

  it("ends a session on DELETE, and removes the token file when stopped", async () => {
    served = await serve();
    const { client, transport } = await httpClient(served);
    await client.listTools();
    const id = transport.sessionId ?? "";
    await transport.terminateSession();
    const after = await raw(
      served.port,
      { authorization: `Bearer ${served.token}`, host: `127.0.0.1:${served.port}`, "mcp-session-id": id },
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
    );
    expect(after.status).toBe(404);
    served.child.kill("SIGTERM");
    expect(await served.exited).toBe(0);
    expect(existsSync(tokenFile)).toBe(false);
  });

  it("asks the user on the stream of the tool call, and releases a session's engine connection when it ends", async () => {
    const engine = fakeEngine(async (_name, params, hooks) => {
      const ran = await hooks.approveNetwork({
        command: String(params.command),
        branch: String(params.branch),
      });
      return { ran, text: ran ? "ran" : "not approved" };
    });
    const http = await serveHttp({
      port: 0,
      tokenFile,
      newSession: () =>
        new McpSession({
          root: { given: root, here: async () => root },
          env: process.env,
          log: () => {},
          open: engine.open,
        }),
      log: () => {},
    });
    try {
      const { client, questions } = testClient(approve);
      // a client that opens no standalone stream (it is optional): the question must come on the call's
      const transport = new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { authorization: `Bearer ${http.token}` } },
        fetch: (url, init) =>
          init?.method === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : fetch(url, init),
      });
      await client.connect(transport);
      const run = await callTool(client, "run", { branch: "b1", command: "curl example.com", network: true });
      expect(run.data.ran).toBe(true);
      expect(questions[0]).toMatch(/curl example\.com/);
      expect(engine.state.closed).toBe(0);
      await transport.terminateSession();
      await waitUntil(() => engine.state.closed === 1, "the session's engine connection to be released");
      await client.close();
    } finally {
      await http.close();
    }
    expect(existsSync(tokenFile)).toBe(false);
  });

  it("serves clients at once, each in its own branch, none seeing another's edits", async () => {
    served = await serve();
    const s = served;
    const agents = await Promise.all([1, 2, 3, 4].map(() => httpClient(s)));
    const outcomes = await Promise.all(
      agents.map(async ({ client }, i) => {
        const branch = String((await callTool(client, "branch_create", { label: `agent ${i}` })).data.id);
        // odd agents break the types, even ones do not: each branch's lints must be its own
        const content = `export const who: ${i % 2 ? "string" : "number"} = ${i};\n`;
        const write = await callTool(client, "write_file", { branch, path: "who.ts", content });
        const lints = await callTool(client, "lints", { branch });
        const read = await callTool(client, "read_file", { branch, path: "who.ts" });
        const run = await callTool(client, "run", { branch, command: "cat who.ts" });
        return { i, branch, write, lints, read, run };
      }),
    );
    expect(new Set(outcomes.map((outcome) => outcome.branch)).size).toBe(4);
    for (const { i, write, lints, read, run } of outcomes) {
      const content = `export const who: ${i % 2 ? "string" : "number"} = ${i};`;
      expect(write.isError).toBe(false);
      expect(lints.data.errors).toBe(i % 2);
      expect(read.text).toContain(content);
      expect(run.data.stdout).toBe(`${content}\n`);
    }
    expect(existsSync(join(root, "who.ts"))).toBe(false);
  });
});
