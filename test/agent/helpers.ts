import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LanguageModel } from "ai";
import { createModel, type FetchFunction } from "../../src/agent/providers.js";
import { loadConfig, type UmbraConfig } from "../../src/config/config.js";
import { type ChatRequest, type FakeAction, type ScriptedTurn, sseBody } from "../fakes/fake-openai.js";
import { tempDir } from "../helpers/workspace.js";

export type { ScriptedTurn };

/**
 * A scripted model behind the same interface as the real provider: the OpenAI-compatible provider of
 * the AI SDK, whose fetch answers each request from the script instead of the network.
 */
export function scriptedModel(script: FakeAction[] | ((request: ChatRequest, n: number) => FakeAction)): {
  model: LanguageModel;
  fetch: FetchFunction;
  requests: ChatRequest[];
} {
  const requests: ChatRequest[] = [];
  const fetch: FetchFunction = async (_input, init) => {
    const body = JSON.parse(String(init?.body)) as ChatRequest;
    const n = requests.length;
    requests.push(body);
    const action =
      typeof script === "function" ? script(body, n) : (script[n] ?? { text: "(no more answers)" });
    if (action.kind === "fail")
      return new Response(JSON.stringify({ error: { message: "scripted failure" } }), {
        status: action.status,
        headers: { "content-type": "application/json" },
      });
    if (action.kind === "hang" || action.kind === "break")
      throw new Error("use the fake server for hang and break");
    return new Response(sseBody(action), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const model = createModel(
    {
      provider: "openai-compatible",
      baseUrl: "http://scripted.invalid/v1",
      model: "scripted",
      apiKey: undefined,
    },
    fetch,
  );
  return { model, fetch, requests };
}

/**
 * A data directory and configuration for a test (no user config leaks in). The user config gives
 * language servers the time a heavily loaded machine needs (the defaults, 10 s per request and 15 s per
 * lint, return partial lints there and the agent then sees no diagnostics); these are bounds, not waits.
 */
export async function testEnv(): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
  const home = await tempDir("agent-home");
  await mkdir(join(home, "config", "umbra"), { recursive: true });
  await writeFile(
    join(home, "config", "umbra", "config.json"),
    JSON.stringify({ lsp: { requestTimeoutMs: 90_000, lintTimeoutMs: 100_000 } }),
  );
  return { home, env: { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") } };
}

export function testConfig(
  root: string,
  env: NodeJS.ProcessEnv,
  agent: Partial<UmbraConfig["agent"]> = {},
): UmbraConfig {
  const config = loadConfig({ workspaceRoot: root, env });
  return { ...config, agent: { ...config.agent, ...agent } };
}

/** The tool results a request carries (role "tool" messages), oldest first. */
export function toolOutputs(request: ChatRequest | undefined): string[] {
  return (request?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}
