import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fake OpenAI-compatible chat-completions endpoint on loopback: it streams scripted answers (text and
 * tool calls) as server-sent events, and can answer 429 or 500, hang, or break a stream in the middle.
 * No model is involved: every answer is written by the test.
 */

export interface ScriptedToolCall {
  id?: string;
  name: string;
  input: unknown;
}

/** One model answer: some text, then tool calls (none: the model is done). */
export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: { input: number; output: number };
}

export type FakeAction =
  | ({ kind?: "turn" } & ScriptedTurn)
  | { kind: "fail"; status: number; retryAfterSeconds?: number; message?: string }
  | { kind: "hang" }
  | { kind: "break"; afterEvents: number; turn: ScriptedTurn };

export interface ChatRequest {
  model?: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** Decides the answer to the n-th request (0-based) from the request itself. */
export type FakeScript = FakeAction[] | ((request: ChatRequest, n: number) => FakeAction);

let callCounter = 0;

/** The server-sent events of one streamed chat completion answering with `turn`. */
export function sseEvents(turn: ScriptedTurn, model = "fake-model"): string[] {
  const id = "chatcmpl-fake";
  const chunk = (delta: unknown, finish: string | null) =>
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created: 0,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  const events: string[] = [chunk({ role: "assistant", content: "" }, null)];
  if (turn.text) {
    // two pieces, so that consumers see a real stream
    const half = Math.ceil(turn.text.length / 2);
    events.push(chunk({ content: turn.text.slice(0, half) }, null));
    if (turn.text.length > half) events.push(chunk({ content: turn.text.slice(half) }, null));
  }
  (turn.toolCalls ?? []).forEach((call, index) => {
    const args = JSON.stringify(call.input);
    const callId = call.id ?? `call_${++callCounter}`;
    events.push(
      chunk(
        {
          tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: "" } }],
        },
        null,
      ),
    );
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }, null));
  });
  const finish = turn.toolCalls?.length ? "tool_calls" : "stop";
  events.push(chunk({}, finish));
  const usage = turn.usage ?? { input: 100, output: 20 };
  events.push(
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created: 0,
      model,
      choices: [],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    }),
  );
  events.push("[DONE]");
  return events;
}

/** The body of a streamed answer (what the endpoint sends), as text. */
export function sseBody(turn: ScriptedTurn, model?: string): string {
  return sseEvents(turn, model)
    .map((event) => `data: ${event}\n\n`)
    .join("");
}

export interface FakeOpenAI {
  /** The base URL to give the provider (ends in /v1). */
  url: string;
  /** Every request body received, parsed. */
  requests: ChatRequest[];
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    request.on("error", reject);
  });
}

function actionFor(script: FakeScript, request: ChatRequest, n: number): FakeAction {
  if (typeof script === "function") return script(request, n);
  return script[n] ?? { text: "(the script has no more answers)" };
}

/** Starts the fake endpoint on 127.0.0.1 at a free port. */
export async function startFakeOpenAI(script: FakeScript): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer(async (request, response) => {
    const text = await readBody(request);
    if (!request.url?.endsWith("/chat/completions")) {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.parse(text) as ChatRequest;
    const n = requests.length;
    requests.push(body);
    const action = actionFor(script, body, n);
    if (action.kind === "fail") {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (action.retryAfterSeconds !== undefined) headers["retry-after"] = String(action.retryAfterSeconds);
      response.writeHead(action.status, headers);
      response.end(JSON.stringify({ error: { message: action.message ?? `fake failure ${action.status}` } }));
      return;
    }
    if (action.kind === "hang") {
      hanging.add(response);
      response.on("close", () => hanging.delete(response));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (action.kind === "break") {
      const events = sseEvents(action.turn, body.model);
      for (const event of events.slice(0, action.afterEvents)) response.write(`data: ${event}\n\n`);
      // a connection cut in the middle of the stream
      setTimeout(() => response.socket?.destroy(), 10);
      return;
    }
    response.end(sseBody(action, body.model));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: async () => {
      for (const response of hanging) response.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The tool results (role "tool" messages) of a request, newest last. */
export function toolResults(request: ChatRequest): string[] {
  return request.messages
    .filter((message) => message.role === "tool")
    .map((message) =>
      typeof message.content === "string" ? message.content : JSON.stringify(message.content),
    );
}
