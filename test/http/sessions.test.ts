import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  AcceptResult,
  ApprovalItem,
  BranchSummary,
  DiffResult,
  LiveEvent,
  SavedRule,
  SessionDetail,
  SessionInfo,
} from "../../src/engine/api.js";
import { Engine } from "../../src/engine/engine.js";
import { saveEvalRun } from "../../src/eval/store.js";
import { type HttpApi, serveHttpApi, workspaceId } from "../../src/http/server.js";
import { type ChatRequest, type FakeOpenAI, sseBody, startFakeOpenAI } from "../fakes/fake-openai.js";
import { evalResults } from "../helpers/eval-results.js";
import { gitFixture, isolatedEnv } from "../helpers/mcp.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";
import { type ApiClient, body, errorOf, raw, signIn } from "./client.js";
import { type EventStream, openEvents } from "./events.js";

// Agent sessions held by the engine, driven over the HTTP API: started from the page against the fake
// OpenAI-compatible server on loopback (or a cassette), their events streamed over SSE, their network
// requests queued for the page, stopped and resumed; the eval runs and the verified accept. Every bad
// request gets the one error shape and changes nothing.

let home: string;
let root: string;
let engine: Engine;
let http: HttpApi;
let port: number;
let ws: string;
let page: ApiClient;
let bearer: ApiClient;
let cookie: string;
let fake: FakeOpenAI;
let stream: EventStream;

/** The task's first word picks the fake model's script; the turn is how many tool results came back. */
function script(request: ChatRequest) {
  const user = request.messages.find((m) => m.role === "user");
  const task = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
  const turn = request.messages.filter((m) => m.role === "tool").length;
  const name = /^create (\w+)/.exec(task)?.[1];
  if (task.startsWith("hang")) return { kind: "hang" as const };
  if (turn > 0) return { text: "done", usage: { input: 50, output: 5 } };
  if (name)
    return {
      toolCalls: [{ name: "edit", input: { path: `${name}.txt`, search: "", replace: `${name}\n` } }],
      usage: { input: 120, output: 30 },
    };
  if (task.startsWith("hide the command"))
    return {
      toolCalls: [
        {
          name: "run_command",
          input: { command: "echo ok \u202e# kcah", network: true, reason: "line\nbreak" },
        },
      ],
    };
  if (task.startsWith("use the network"))
    return {
      toolCalls: [
        {
          name: "run_command",
          input: { command: "echo net-ok", network: true, reason: "it needs the registry" },
        },
      ],
    };
  return { text: "nothing to do" };
}

const MODEL = () => ({ provider: "openai-compatible", baseUrl: fake.url, model: "fake-model" });

async function start(task: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await page.send("POST", `${ws}/sessions`, { task, model: MODEL(), ...extra });
  expect(answer.status, answer.text).toBe(201);
  return body<{ id: string }>(answer).id;
}

const sessions = async (): Promise<SessionInfo[]> =>
  body<{ sessions: SessionInfo[] }>(await page.get(`${ws}/sessions`)).sessions;

const sessionOf = async (id: string): Promise<SessionDetail> =>
  body<SessionDetail>(await page.get(`${ws}/sessions/${id}`));

async function ended(id: string): Promise<SessionDetail> {
  await waitUntil(async () => !(await sessionOf(id)).live, `session ${id} to end`, 120_000);
  return sessionOf(id);
}

const queue = async (): Promise<ApprovalItem[]> =>
  body<{ approvals: ApprovalItem[] }>(await page.get("/api/approvals")).approvals;

/** The first request in the approvals queue, once there is one. */
async function waitingRequest(): Promise<ApprovalItem | undefined> {
  await waitUntil(async () => (await queue()).length > 0, "a request in the approvals queue");
  return (await queue())[0];
}

const eventsOf = (id: string, type?: string): LiveEvent[] =>
  stream.events.filter((event) => event.session === id && (type === undefined || event.type === type));

/** Runs `act`; checks that the folder, the sessions, the queue and the rules are as they were. */
async function changesNothing(act: () => Promise<void>): Promise<void> {
  const state = async () => [
    await fingerprint(root),
    JSON.stringify((await sessions()).map((s) => s.id)),
    (await page.get("/api/approvals")).text,
    (await page.get("/api/rules")).text,
  ];
  const before = await state();
  await act();
  expect(await state()).toEqual(before);
}

beforeAll(async () => {
  home = await tempDir("http-sessions");
  root = await gitFixture();
  fake = await startFakeOpenAI((request) => script(request));
  engine = new Engine({ env: isolatedEnv(home), watch: false });
  http = await serveHttpApi({ engine, port: 0, log: () => {} });
  port = http.port;
  const opener = engine.connect("test", {
    approveNetwork: async () => false,
    confirmAccept: async () => false,
  });
  await engine.call(opener, "status", { root });
  engine.disconnect(opener);
  ws = `/api/workspaces/${workspaceId(root)}`;
  ({ cookie, page, bearer } = await signIn(port, http.token));
  stream = await openEvents(port, "/api/events", { cookie });
}, 120_000);

afterAll(async () => {
  stream?.close();
  await http?.close();
  await engine?.close();
  await fake?.close();
  await cleanup(home, root ? join(root, "..") : undefined);
});

describe("agent sessions", () => {
  it("runs two sessions at once; their events stream live; each leaves a branch with its change", async () => {
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    const [a, b] = await Promise.all([start("create alpha"), start("create beta")]);
    const [doneA, doneB] = await Promise.all([ended(a), ended(b)]);
    for (const [id, done, name] of [
      [a, doneA, "alpha"],
      [b, doneB, "beta"],
    ] as const) {
      expect(done).toMatchObject({
        id,
        state: "done",
        task: `create ${name}`,
        changedFiles: [`${name}.txt`],
        toolCalls: 1,
        steps: 2,
      });
      expect(done.tokens).toEqual({ input: 170, output: 35 });
      expect(done.endedAt).toBeDefined();
      await waitUntil(
        () => eventsOf(id, "session").some((e) => e.state === "done"),
        `the end of ${id} on the stream`,
      );
      const tools = eventsOf(id, "tool");
      expect(tools.map((e) => [e.phase, e.name])).toEqual([
        ["call", "edit"],
        ["result", "edit"],
      ]);
      expect(tools[1]).toMatchObject({ ok: true, workspace: workspaceId(root) });
      expect(eventsOf(id, "usage").at(-1)?.tokens).toEqual({ input: 170, output: 35 });
      expect(eventsOf(id, "session")[0]?.state).toBe("running");
      // what the page opens later: the same story from the transcript
      expect(done.events.filter((e) => e.type === "tool").map((e) => e.phase)).toEqual(["call", "result"]);
      const diff = body<DiffResult>(await page.get(`${ws}/branches/${done.branch}/diff`));
      expect(diff.files).toEqual([{ path: `${name}.txt`, kind: "added" }]);
    }
    // every event named as its type, numbered in order
    expect(stream.names).toEqual(stream.events.map((e) => e.type));
    const ids = stream.events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    const listed = await sessions();
    expect(listed.map((s) => s.id)).toEqual(expect.arrayContaining([a, b]));
    // nothing reached the user's folder
    await expect(readFile(join(root, "alpha.txt"), "utf8")).rejects.toThrow();
  }, 240_000);

  it("replays what came after Last-Event-ID (or since=) to a page that reconnects", async () => {
    const last = stream.events.at(-1)?.id ?? 0;
    const id = await start("create gamma");
    await ended(id);
    await waitUntil(() => eventsOf(id, "session").some((e) => e.state === "done"), "gamma's end");
    const live = stream.events.filter((e) => e.id > last).map((e) => e.id);
    for (const headers of [{ "last-event-id": String(last) }, {}] as Record<string, string>[]) {
      const again = await openEvents(
        port,
        `/api/events?workspace=${workspaceId(root)}${"last-event-id" in headers ? "" : `&since=${last}`}`,
        { cookie, ...headers },
      );
      await waitUntil(() => again.events.length >= live.length, "the replay");
      expect(again.events.map((e) => e.id)).toEqual(live);
      again.close();
    }
    for (const [path, headers, status, code] of [
      ["/api/events", { "last-event-id": "x1" }, 400, "BAD_REQUEST"],
      ["/api/events?since=-1", {}, 400, "BAD_REQUEST"],
      ["/api/events?workspace=0123456789abcdef", {}, 404, "NOT_FOUND"],
    ] as const) {
      const bad = await raw(port, "GET", path, { cookie, ...headers });
      expect(bad.status, path).toBe(status);
      expect(errorOf(bad)?.code).toBe(code);
    }
    // no credential, a wrong one, a foreign origin: no stream
    for (const headers of [
      {},
      { authorization: "Bearer wrong" },
      { cookie: `umbra_session_${port}=wrong` },
    ] as Record<string, string>[]) {
      const refused = await raw(port, "GET", "/api/events", headers);
      expect(refused.status).toBe(401);
    }
    const foreign = await raw(port, "GET", "/api/events", { cookie, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
  }, 240_000);

  it("stops a running session and resumes it in a new one; stopping twice or an unknown one is an error", async () => {
    const id = await start("hang forever");
    await waitUntil(
      async () => fake.requests.some((r) => JSON.stringify(r.messages).includes("hang forever")),
      "the model call",
    );
    expect((await sessions()).find((s) => s.id === id)).toMatchObject({ state: "running", live: true });
    const stopped = await page.send("POST", `${ws}/sessions/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(body<SessionInfo>(stopped)).toMatchObject({ id, state: "stopped", live: false });
    await changesNothing(async () => {
      for (const [path, status, code] of [
        [`${ws}/sessions/${id}/stop`, 400, "BAD_REQUEST"],
        [`${ws}/sessions/no-such-session/stop`, 404, "NOT_FOUND"],
        [`${ws}/sessions/no-such-session/resume`, 404, "NOT_FOUND"],
        [`${ws}/sessions/..%2F..%2Fetc/resume`, 400, "BAD_REQUEST"],
      ] as const) {
        const answer = await page.send("POST", path, {});
        expect(answer.status, path).toBe(status);
        expect(errorOf(answer)?.code).toBe(code);
      }
      expect((await page.get(`${ws}/sessions/no-such-session`)).status).toBe(404);
    });
    const resumed = await page.send("POST", `${ws}/sessions/${id}/resume`, {
      task: "create delta",
      model: MODEL(),
    });
    expect(resumed.status).toBe(201);
    const next = body<{ id: string }>(resumed).id;
    expect(next).not.toBe(id);
    expect(await ended(next)).toMatchObject({ state: "done", resumedFrom: id, changedFiles: ["delta.txt"] });
  }, 240_000);

  it("replays a session from a cassette the page names; a bearer client may not name one", async () => {
    const dir = await tempDir("cassettes");
    const file = join(dir, "epsilon.jsonl");
    const turns = [
      {
        toolCalls: [
          { id: "call_1", name: "edit", input: { path: "epsilon.txt", search: "", replace: "epsilon\n" } },
        ],
      },
      { text: "done" },
    ];
    await writeFile(
      file,
      [
        {
          type: "cassette",
          version: 1,
          note: "hand-written for a test",
          provider: "openai-compatible",
          model: "recorded",
          baseUrl: "http://127.0.0.1:9/v1",
        },
        ...turns.map((turn, n) => ({
          type: "exchange",
          n,
          request: { method: "POST", path: "/v1/chat/completions", body: {} },
          response: { status: 200, headers: { "content-type": "text/event-stream" }, body: sseBody(turn) },
        })),
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    );
    const requestsBefore = fake.requests.length;
    const answer = await page.send("POST", `${ws}/sessions`, { task: "anything", cassette: file });
    expect(answer.status, answer.text).toBe(201);
    const done = await ended(body<{ id: string }>(answer).id);
    expect(done).toMatchObject({ state: "done", changedFiles: ["epsilon.txt"] });
    expect(fake.requests.length).toBe(requestsBefore);
    await changesNothing(async () => {
      for (const payload of [
        { task: "x", cassette: file },
        { task: "x", model: { baseUrl: "https://evil.example/v1" } },
        { task: "x", model: { provider: "anthropic" } },
        { task: "x", model: { apiKeyEnv: "GITHUB_TOKEN" } },
      ]) {
        const refused = await bearer.send("POST", `${ws}/sessions`, payload);
        expect(refused.status, JSON.stringify(payload)).toBe(403);
        expect(errorOf(refused)?.code).toBe("FORBIDDEN");
      }
      const missing = await page.send("POST", `${ws}/sessions`, {
        task: "x",
        cassette: join(dir, "none.jsonl"),
      });
      expect(missing.status).toBe(400);
      expect(errorOf(missing)?.message).toContain("cannot read the cassette");
    });
  }, 240_000);

  it("refuses malformed starts, unknown workspaces, wrong tokens and foreign origins: nothing starts", async () => {
    await changesNothing(async () => {
      for (const payload of [
        {},
        { task: "" },
        { task: "   " },
        { task: 7 },
        { task: "x", extra: true },
        { task: "x", maxSteps: 0 },
        { task: "x", model: { name: "gpt" } },
        { task: "x", model: { baseUrl: "not a url" } },
        { task: "x", root: "/etc" },
        "[]",
        "{not json",
      ]) {
        const bad = await page.send("POST", `${ws}/sessions`, payload);
        expect(bad.status, JSON.stringify(payload)).toBe(400);
        expect(errorOf(bad)?.code).toBe("BAD_REQUEST");
        expect(errorOf(bad)?.message).not.toContain("\n");
      }
      // no model configured, none given: said at once
      const noModel = await page.send("POST", `${ws}/sessions`, { task: "x" });
      expect(noModel.status).toBe(400);
      expect(errorOf(noModel)?.message).toContain("no model configured");
      expect(
        (await page.send("POST", "/api/workspaces/0123456789abcdef/sessions", { task: "x", model: MODEL() }))
          .status,
      ).toBe(404);
      expect(
        (
          await raw(
            port,
            "POST",
            `${ws}/sessions`,
            { authorization: "Bearer wrong", "content-type": "application/json" },
            JSON.stringify({ task: "x", model: MODEL() }),
          )
        ).status,
      ).toBe(401);
      expect(
        (
          await page.send(
            "POST",
            `${ws}/sessions`,
            { task: "x", model: MODEL() },
            { origin: "https://evil.example" },
          )
        ).status,
      ).toBe(403);
      expect(
        (
          await raw(
            port,
            "POST",
            `${ws}/sessions`,
            { cookie, "content-type": "application/json" },
            JSON.stringify({ task: "x", model: MODEL() }),
          )
        ).status,
      ).toBe(403);
    });
  });
});

describe("the approvals queue", () => {
  it("queues a session's network request; the page approves it for the repository and the command goes on", async () => {
    const id = await start("use the network");
    const item = await waitingRequest();
    expect(item).toMatchObject({
      session: id,
      workspace: workspaceId(root),
      command: 'sh -c "echo net-ok"',
      reason: "it needs the registry",
      rule: "sh -c echo net-ok",
    });
    expect((await sessions()).find((s) => s.id === id)?.state).toBe("waiting");
    expect(eventsOf(id, "approval")[0]).toMatchObject({ state: "queued", approval: item?.id });
    const approval = `/api/approvals/${item?.id}`;
    await changesNothing(async () => {
      const refused = await bearer.send("POST", approval, { decision: "once" });
      expect(refused.status).toBe(403);
      for (const payload of [{}, { decision: "always" }, { decision: "once", extra: 1 }]) {
        const bad = await page.send("POST", approval, payload);
        expect(bad.status, JSON.stringify(payload)).toBe(400);
      }
      expect((await page.send("POST", "/api/approvals/no-such-request", { decision: "once" })).status).toBe(
        404,
      );
    });
    const answered = await page.send("POST", approval, { decision: "repository" });
    expect(answered.status).toBe(200);
    expect(body<{ rule: SavedRule }>(answered).rule).toMatchObject({ rule: "sh -c echo net-ok", root });
    const done = await ended(id);
    expect(done.state).toBe("done");
    const result = eventsOf(id, "tool").find((e) => e.phase === "result");
    expect(result).toMatchObject({ name: "run_command", ok: true });
    expect(
      eventsOf(id, "output")
        .map((e) => e.text)
        .join(""),
    ).toContain("net-ok");
    // saved on the user's side, never in the workspace
    await expect(readFile(join(root, ".umbra", "config.json"), "utf8")).rejects.toThrow();
    const rules = body<{ rules: SavedRule[] }>(await page.get("/api/rules")).rules;
    expect(rules).toEqual([
      expect.objectContaining({ rule: "sh -c echo net-ok", workspace: workspaceId(root) }),
    ]);
    // the next session's same request needs no asking
    const again = await start("use the network again");
    expect((await ended(again)).state).toBe("done");
    expect(eventsOf(again, "approval")).toEqual([]);
    await changesNothing(async () => {
      expect((await bearer.send("DELETE", `/api/rules/${rules[0]?.id}`)).status).toBe(403);
      expect((await page.send("DELETE", "/api/rules/no-such-rule")).status).toBe(404);
    });
    expect((await page.send("DELETE", `/api/rules/${rules[0]?.id}`)).status).toBe(200);
    expect(body<{ rules: SavedRule[] }>(await page.get("/api/rules")).rules).toEqual([]);
  }, 240_000);

  it("a denied request is not run: the agent reads why and goes on", async () => {
    const id = await start("use the network, denied");
    const item = await waitingRequest();
    expect((await page.send("POST", `/api/approvals/${item?.id}`, { decision: "deny" })).status).toBe(200);
    expect((await ended(id)).state).toBe("done");
    const result = eventsOf(id, "tool").find((e) => e.phase === "result");
    expect(result).toMatchObject({ name: "run_command", ok: false });
    expect(String(result?.summary)).toContain("not approved");
    expect(eventsOf(id, "output")).toEqual([]);
    expect(await queue()).toEqual([]);
  }, 240_000);
});

describe("a request whose words hold control characters", () => {
  it("shows them escaped and offers no rule: the page cannot be shown another command than the one that runs", async () => {
    const id = await start("hide the command");
    const item = await waitingRequest();
    expect(item).toMatchObject({
      session: id,
      command: 'sh -c "echo ok \\u202e# kcah"',
      reason: "line\\nbreak",
      rule: "",
    });
    await changesNothing(async () => {
      const refused = await page.send("POST", `/api/approvals/${item?.id}`, { decision: "repository" });
      expect(refused.status).toBe(400);
      expect(errorOf(refused)?.message).toContain("control characters");
    });
    expect((await page.send("POST", `/api/approvals/${item?.id}`, { decision: "once" })).status).toBe(200);
    expect((await ended(id)).state).toBe("done");
    expect(eventsOf(id, "tool").find((e) => e.phase === "result")).toMatchObject({ ok: true });
  }, 240_000);
});

describe("a session stopped while its request waits", () => {
  it("drops the request: denied, gone from the queue, the command never runs", async () => {
    const id = await start("use the network, then be stopped");
    await waitingRequest();
    const stopped = await page.send("POST", `${ws}/sessions/${id}/stop`);
    expect(body<SessionInfo>(stopped)).toMatchObject({ state: "stopped", live: false });
    expect(await queue()).toEqual([]);
    expect(eventsOf(id, "approval").map((e) => [e.state, e.decision])).toEqual([
      ["queued", undefined],
      ["answered", "dropped"],
    ]);
    expect(eventsOf(id, "output")).toEqual([]);
  }, 240_000);
});

describe("eval runs", () => {
  const results = (model: string, passed: boolean[]) =>
    evalResults(model, passed, "<script>alert(1)</script>");

  it("lists stored runs, serves a report sandboxed and compares two; unknown runs are NOT_FOUND", async () => {
    const a = await saveEvalRun(
      root,
      results("a-model", [true, false, false]),
      [],
      isolatedEnv(home),
      new Date("2026-01-01T00:00:00Z"),
    );
    const b = await saveEvalRun(
      root,
      results("b-model", [true, true, true]),
      [],
      isolatedEnv(home),
      new Date("2026-01-02T00:00:00Z"),
    );
    const runs = body<{ runs: { id: string; model: string; passed: number }[] }>(
      await page.get(`${ws}/evals`),
    ).runs;
    expect(runs.map((run) => [run.id, run.model, run.passed])).toEqual([
      [b, "b-model", 3],
      [a, "a-model", 1],
    ]);
    const report = await page.get(`${ws}/evals/${a}/report`);
    expect(report.status).toBe(200);
    expect(report.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(report.headers["content-security-policy"]).toContain("sandbox");
    expect(report.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(report.text).toContain("&#60;script&#62;alert(1)");
    expect(report.text).not.toContain("<script>alert");
    const compare = await page.get(`${ws}/evals/compare?a=${a}&b=${b}`);
    expect(compare.status).toBe(200);
    expect(body<{ rows: { scope: string; passA: number; passB: number }[] }>(compare).rows[0]).toMatchObject({
      scope: "overall",
      passA: 1,
      passB: 3,
    });
    for (const [path, status] of [
      [`${ws}/evals/no-such-run/report`, 404],
      [`${ws}/evals/compare?a=${a}&b=no-such-run`, 404],
      [`${ws}/evals/compare?a=${a}`, 400],
      [`${ws}/evals/compare?a=${a}&b=..`, 404],
      [`${ws}/evals/compare?a=${a}&b=%2Fetc`, 400],
    ] as const) {
      const answer = await page.get(path);
      expect(answer.status, path).toBe(status);
      expect(errorOf(answer)).toBeDefined();
    }
  });
});

describe("accept with verify", () => {
  it("checks the accepted hunks in a fresh branch first: a failing check writes nothing, a passing one accepts", async () => {
    const id = body<BranchSummary>(await page.send("POST", `${ws}/branches`, {})).id;
    const agent = engine.connect("agent", {
      approveNetwork: async () => false,
      confirmAccept: async () => false,
    });
    await engine.call(agent, "writeFile", { root, branch: id, path: "notes.txt", content: "verified\n" });
    engine.disconnect(agent);
    const folder = await fingerprint(root);
    const failing = await page.send("POST", `${ws}/branches/${id}/accept`, { verify: "test ! -f notes.txt" });
    expect(failing.status).toBe(200);
    expect(body<AcceptResult>(failing)).toMatchObject({
      written: false,
      confirmed: true,
      verification: { passed: false, tests: { command: "test ! -f notes.txt", passed: false } },
    });
    expect(await fingerprint(root)).toBe(folder);
    const bad = await page.send("POST", `${ws}/branches/${id}/accept`, { verify: "" });
    expect(bad.status).toBe(400);
    const passing = await page.send("POST", `${ws}/branches/${id}/accept`, {
      verify: 'test "$(cat notes.txt)" = verified',
    });
    expect(body<AcceptResult>(passing)).toMatchObject({ written: true, verification: { passed: true } });
    expect(await readFile(join(root, "notes.txt"), "utf8")).toBe("verified\n");
  }, 240_000);
});

describe("the OpenAPI description", () => {
  it("describes every new endpoint with its input", async () => {
    const doc = body<{
      paths: Record<string, Record<string, { requestBody?: unknown; parameters?: { name: string }[] }>>;
    }>(await page.get("/api/openapi.json"));
    const sessionsPath = doc.paths["/api/workspaces/{workspace}/sessions"];
    expect(sessionsPath?.post?.requestBody).toBeDefined();
    // results described by their schema where the engine has one
    const listed = JSON.stringify(sessionsPath?.get);
    for (const field of ["sessions", "state", "tokens", "toolCalls", "waiting"])
      expect(listed).toContain(field);
    expect(JSON.stringify(doc.paths["/api/approvals"]?.get)).toContain("rule");
    expect(doc.paths["/api/events"]?.get?.parameters?.map((p) => p.name)).toEqual([
      "workspace",
      "since",
      "Last-Event-ID",
    ]);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/events",
        "/api/approvals",
        "/api/approvals/{approval}",
        "/api/rules",
        "/api/rules/{rule}",
        "/api/workspaces/{workspace}/sessions/{session}/stop",
        "/api/workspaces/{workspace}/evals/{run}/report",
      ]),
    );
    expect(
      doc.paths["/api/workspaces/{workspace}/evals/compare"]?.get?.parameters?.map((p) => p.name),
    ).toEqual(["workspace", "a", "b"]);
  });
});
