import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { firstDifference, readCassette } from "../../src/agent/cassette.js";
import type { AgentEvent } from "../../src/agent/loop.js";
import { resolveModelSpec } from "../../src/agent/providers.js";
import { runSession } from "../../src/agent/run.js";
import { loadConfig } from "../../src/config/config.js";
import { type FakeAction, type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { cleanup, copyExamples } from "../helpers/workspace.js";
import { testConfig, testEnv } from "./helpers.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
let server: FakeOpenAI | undefined;

beforeEach(async () => {
  ({ home, env } = await testEnv());
  root = await copyExamples();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanup(home, join(root, ".."));
});

const READ: FakeAction = {
  toolCalls: [{ id: "c1", name: "read_file", input: { path: "billing/tax.ts", endLine: 2 } }],
};
const DONE: FakeAction = { text: "done" };

async function session(
  script: FakeAction[],
  agent: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  server = await startFakeOpenAI(script);
  const events: AgentEvent[] = [];
  const config = testConfig(root, env, { baseUrl: server.url, model: "fake-model", maxRetries: 2, ...agent });
  const result = await runSession({
    root,
    task: "t",
    config,
    env,
    lsp: null,
    retryBaseMs: 5,
    onEvent: (event) => events.push(event),
    ...extra,
  });
  return { result, events, server };
}

describe("model provider (fake OpenAI-compatible server)", () => {
  it("streams a tool call, then text, and counts tokens and cost", async () => {
    const { result, events } = await session([READ, DONE], {
      price: { inputPerMillion: 3, outputPerMillion: 15 },
    });
    expect(result.outcome.status).toBe("done");
    expect(
      events
        .filter((e) => e.type === "text")
        .map((e) => (e as { text: string }).text)
        .join(""),
    ).toBe("done");
    expect(result.outcome.usage).toEqual({
      inputTokens: 200,
      outputTokens: 40,
      totalTokens: 240,
      calls: 2,
      costUsd: 0.0012,
    });
  });

  it("retries 429 and 500 with backoff", async () => {
    const { result, events, server } = await session([
      { kind: "fail", status: 429, retryAfterSeconds: 0 },
      { kind: "fail", status: 500 },
      READ,
      DONE,
    ]);
    expect(result.outcome.status).toBe("done");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(2);
    expect(server.requests).toHaveLength(4);
  });

  it("gives up after agent.maxRetries and does not retry a 400", async () => {
    const exhausted = await session(
      [500, 500, 500, 500].map((status) => ({ kind: "fail" as const, status })),
    );
    expect(exhausted.result.outcome.status).toBe("model-error");
    expect(exhausted.result.outcome.message).toMatch(/after 3 attempts: HTTP 500/);
    await server?.close();
    const bad = await session([{ kind: "fail", status: 400 }, DONE]);
    expect(bad.result.outcome.status).toBe("model-error");
    expect(bad.server.requests).toHaveLength(1);
  });

  it("times out a call that hangs, and retries it", async () => {
    const { result, events } = await session([{ kind: "hang" }, DONE], { requestTimeoutMs: 300 });
    expect(result.outcome.status).toBe("done");
    expect(events.find((e) => e.type === "retry")).toMatchObject({
      reason: expect.stringMatching(/did not answer within 300 ms/),
    });
  });

  it("retries a stream broken in the middle", async () => {
    const { result, events } = await session([
      { kind: "break", afterEvents: 2, turn: { text: "hello there" } },
      DONE,
    ]);
    expect(result.outcome.status).toBe("done");
    expect(events.some((e) => e.type === "retry")).toBe(true);
  });

  it("records a cassette and replays it without a server, strictly; drift fails strict and warns lenient", async () => {
    const cassette = join(home, "c.jsonl");
    const live = await session([READ, DONE], {}, { record: cassette });
    await server?.close();
    server = undefined;
    const recorded = readCassette(cassette);
    expect(recorded.header).toMatchObject({ provider: "openai-compatible", model: "fake-model" });
    expect(recorded.exchanges).toHaveLength(2);
    expect(recorded.exchanges[1]?.response.body).toContain("chat.completion.chunk");

    const config = testConfig(root, env);
    const replayed = await runSession({
      root,
      task: "t",
      config,
      env,
      lsp: null,
      replay: cassette,
      strict: true,
    });
    expect(replayed.outcome.status).toBe("done");
    expect(replayed.outcome.toolCalls).toEqual(live.result.outcome.toolCalls);
    expect(replayed.diff).toBe(live.result.diff);

    const strict = await runSession({
      root,
      task: "another task",
      config,
      env,
      lsp: null,
      replay: cassette,
      strict: true,
    });
    expect(strict.outcome.status).toBe("model-error");
    expect(strict.outcome.message).toMatch(
      /request 1 differs from the recording at messages\[1\]\.content \(strict replay\)/,
    );

    const warnings: string[] = [];
    const lenient = await runSession({
      root,
      task: "another task",
      config,
      env,
      lsp: null,
      replay: cassette,
      onWarning: (w) => warnings.push(w),
    });
    expect(lenient.outcome.status).toBe("done");
    expect(lenient.drifts).toHaveLength(2);
    expect(warnings[0]).toMatch(/differs from the recording/);
    expect(readFileSync(cassette, "utf8").split("\n")[0]).toContain('"type":"cassette"');
  });
});

describe("model configuration", () => {
  it("comes from agent.* or UMBRA_MODEL_* and names what is missing", () => {
    const fromEnv = loadConfig({
      env: {
        UMBRA_MODEL_BASE_URL: "http://127.0.0.1:9/v1",
        UMBRA_MODEL: "m",
        XDG_CONFIG_HOME: "/nonexistent",
      },
    });
    expect(resolveModelSpec(fromEnv.agent, { UMBRA_MODEL_API_KEY: "k" })).toEqual({
      provider: "openai-compatible",
      baseUrl: "http://127.0.0.1:9/v1",
      model: "m",
      apiKey: "k",
    });
    const none = loadConfig({ env: { XDG_CONFIG_HOME: "/nonexistent" } });
    expect(() => resolveModelSpec(none.agent, {})).toThrow(/no model configured/);
    const anthropic = { ...none.agent, provider: "anthropic" as const, model: "claude-x" };
    expect(() => resolveModelSpec(anthropic, {})).toThrow(/ANTHROPIC_API_KEY/);
    expect(resolveModelSpec(anthropic, { ANTHROPIC_API_KEY: "a" })).toMatchObject({
      provider: "anthropic",
      apiKey: "a",
    });
  });
});

describe("comparing a request with the recorded one", () => {
  it("sees a key named like a member of Object.prototype that only one side has", () => {
    const parse = (text: string): unknown => JSON.parse(text);
    expect(firstDifference(parse('{"a": 1}'), parse('{"a": 1, "__proto__": {}}'))).toBe("__proto__");
    expect(firstDifference(parse('{"a": {"__proto__": {}}}'), parse('{"a": {}}'))).toBe("a.__proto__");
    expect(firstDifference(parse('{"a": 1}'), parse('{"a": 1, "constructor": 1}'))).toBe("constructor");
    expect(
      firstDifference(parse('{"__proto__": {"b": 1}}'), parse('{"__proto__": {"b": 1}}')),
    ).toBeUndefined();
  });
});
