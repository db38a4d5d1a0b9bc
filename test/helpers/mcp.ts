import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ClientCapabilities, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallOptions, ClientHooks } from "../../src/engine/api.js";
import type { EngineConnection, OpenEngineOptions } from "../../src/engine/client.js";
import { CLI } from "./cli.js";
import { waitUntil } from "./wait.js";
import { committedRepository } from "./workspace.js";

/** The 20 tools `umbra mcp` serves. */
export const TOOL_NAMES = [
  "search",
  "grep",
  "read_file",
  "list_files",
  "branch_create",
  "branch_list",
  "branch_discard",
  "edit",
  "apply_patch",
  "write_file",
  "lints",
  "definition",
  "references",
  "hover",
  "document_symbols",
  "run",
  "diff",
  "accept",
  "rebase",
  "status",
].sort();

export const MATH_TS = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";
export const USE_TS = 'import { add } from "./math";\n\nexport const three: number = add(1, 2);\n';

/**
 * A small git repository: two TypeScript files (one using the other), a tsconfig, and a secret the
 * user hides from agents (.env, in .umbraignore). Returns its folder (inside a temporary parent to clean up).
 */
export function gitFixture(): Promise<string> {
  return committedRepository("mcp-ws", {
    "math.ts": MATH_TS,
    "use.ts": USE_TS,
    "tsconfig.json": '{ "compilerOptions": { "strict": true, "noEmit": true } }\n',
    ".gitignore": ".env\n",
    ".umbraignore": ".env\n",
    ".env": "SECRET=hunter2\n",
  });
}

/** The environment of a spawned `umbra mcp`: this one's, with its own data and config folders. */
export function isolatedEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return { ...env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
}

export type Answer = (message: string) => ElicitResult;

/**
 * An SDK client; with `answer`, it declares form elicitation and answers each question with it
 * (recording the messages in `questions`).
 */
export function testClient(answer?: Answer, capabilities: ClientCapabilities = {}) {
  const questions: string[] = [];
  const client = new Client(
    { name: "umbra-test", version: "1.0.0" },
    { capabilities: { ...capabilities, ...(answer ? { elicitation: { form: {} } } : {}) } },
  );
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(request.params.message);
      return answer(request.params.message);
    });
  return { client, questions };
}

export const approve: Answer = () => ({ action: "accept", content: { approve: true } });
export const refuse: Answer = () => ({ action: "accept", content: { approve: false } });

/** A tool call's text and structured result. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ text: string; data: Record<string, unknown>; isError: boolean }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  return { text, data: result.structuredContent ?? {}, isError: result.isError === true };
}

interface Recorded {
  name: string;
  params: Record<string, unknown>;
}

/**
 * A fake engine connection (tests only): records calls, answers with `answer` (which may ask the
 * client's hooks, report progress, or wait for the call to be cancelled).
 */
export function fakeEngine(
  answer: (
    name: string,
    params: Record<string, unknown>,
    hooks: ClientHooks,
    options: CallOptions,
  ) => Promise<unknown>,
) {
  const state = { calls: [] as Recorded[], opened: [] as OpenEngineOptions[], closed: 0 };
  const open = async (options: OpenEngineOptions): Promise<EngineConnection> => {
    state.opened.push(options);
    return {
      call: async (name: string, params: Record<string, unknown>, callOptions: CallOptions = {}) => {
        state.calls.push({ name, params });
        return answer(name, params, options.hooks, callOptions);
      },
      close: async () => {
        state.closed++;
      },
    } as unknown as EngineConnection;
  };
  return { state, open };
}

/** A running `umbra mcp --http` (a child process), as a user starts it. */
export interface ServedCli {
  child: ChildProcess;
  url: string;
  port: number;
  token: string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
}

/** Starts `umbra mcp --http --root ROOT --token-file FILE` and waits until it prints its URL and token. */
export async function serveCli(root: string, home: string, tokenFile: string): Promise<ServedCli> {
  const child = spawn(process.execPath, [CLI, "mcp", "--http", "--root", root, "--token-file", tokenFile], {
    env: isolatedEnv(home),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  await waitUntil(() => /token \S+/.test(stderr) || child.exitCode !== null, "umbra mcp --http to listen");
  const url = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(stderr);
  const token = /token (\S+)/.exec(stderr)?.[1];
  if (!url?.[1] || !url[2] || !token) {
    await stop();
    throw new Error(`umbra mcp --http did not start: ${stderr}`);
  }
  return { child, url: url[1], port: Number(url[2]), token, stderr: () => stderr, exited, stop };
}
