import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ClientCapabilities, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ClientHooks } from "../../src/engine/api.js";
import { type EngineConnection, NO_HOOKS, type OpenEngineOptions } from "../../src/engine/client.js";
import { tempDir } from "./workspace.js";

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
export async function gitFixture(): Promise<string> {
  const root = join(await tempDir("mcp-ws"), "repo");
  await mkdir(root);
  await writeFile(join(root, "math.ts"), MATH_TS);
  await writeFile(join(root, "use.ts"), USE_TS);
  await writeFile(join(root, "tsconfig.json"), '{ "compilerOptions": { "strict": true, "noEmit": true } }\n');
  await writeFile(join(root, ".gitignore"), ".env\n");
  await writeFile(join(root, ".umbraignore"), ".env\n");
  await writeFile(join(root, ".env"), "SECRET=hunter2\n");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: root });
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "init");
  return root;
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

/** A fake engine connection (tests only): records calls, answers with `answer` (which may ask the client's hooks). */
export function fakeEngine(
  answer: (name: string, params: Record<string, unknown>, hooks: ClientHooks) => Promise<unknown>,
) {
  const state = { calls: [] as Recorded[], opened: [] as OpenEngineOptions[], closed: 0 };
  const open = async (options: OpenEngineOptions): Promise<EngineConnection> => {
    state.opened.push(options);
    return {
      call: async (name: string, params: Record<string, unknown>) => {
        state.calls.push({ name, params });
        return answer(name, params, options.hooks ?? NO_HOOKS);
      },
      close: async () => {
        state.closed++;
      },
    } as unknown as EngineConnection;
  };
  return { state, open };
}
