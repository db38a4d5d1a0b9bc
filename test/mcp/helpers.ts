import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { OperationName, ResultOf } from "../../src/engine/api.js";
import { CLI } from "../helpers/cli.js";
import { processesOf } from "../helpers/engine.js";
import { scaled, waitUntil } from "../helpers/wait.js";
import { tempDir } from "../helpers/workspace.js";

/**
 * `umbra mcp` as an agent's MCP client sees it: the SDK's own Client over stdio, spawning the built
 * `node dist/cli/main.js mcp --root ROOT` with the environment a test gives (its own UMBRA_HOME, HOME
 * and XDG_CONFIG_HOME). Tools are called by their MCP names with the engine operation's parameters
 * minus `root`; a result's `structuredContent` is the engine's result object.
 */

/** How the client answers the server's elicitation requests: "none" declares no elicitation capability. */
export type Elicit = "accept" | "decline" | "cancel" | "none";

/** The MCP tool of each engine operation. */
const TOOLS = {
  search: "search",
  grep: "grep",
  read_file: "readFile",
  list_files: "listFiles",
  branch_create: "branchCreate",
  branch_list: "branchList",
  branch_discard: "branchDiscard",
  edit: "edit",
  apply_patch: "applyPatch",
  write_file: "writeFile",
  lints: "lints",
  definition: "definition",
  references: "references",
  hover: "hover",
  document_symbols: "documentSymbols",
  run: "run",
  diff: "diff",
  accept: "accept",
  rebase: "rebase",
  status: "status",
} as const satisfies Record<string, OperationName>;

export type ToolName = keyof typeof TOOLS;
export type ToolResult<T extends ToolName> = ResultOf<(typeof TOOLS)[T]>;

export interface CallOutcome<T extends ToolName> {
  isError: boolean;
  /** The text content, joined. */
  text: string;
  /** The structured result (the engine's result object), when the call succeeded. */
  data: ToolResult<T> | undefined;
}

export interface McpClientOptions {
  /** `--root` (absent: no flag, the server takes the client's roots or its current directory). */
  root?: string;
  env: NodeJS.ProcessEnv;
  elicit?: Elicit;
  /** The clientInfo name (shown in branch lists). */
  name?: string;
  /** Roots the client declares (file:// URIs made from these folders); absent: no roots capability. */
  roots?: string[];
}

/** A bound for one call that only catches a hang: lints and test runs on a loaded machine are slow. */
const CALL_TIMEOUT_MS = scaled(600_000);

/** Fills an elicitation form the way a user who says yes would: every yes/no field yes. */
function yesContent(request: ElicitRequest["params"]): Record<string, boolean> {
  const properties = "requestedSchema" in request ? request.requestedSchema.properties : {};
  return Object.fromEntries(
    Object.entries(properties)
      .filter(([, property]) => property.type === "boolean")
      .map(([key]) => [key, true]),
  );
}

export class McpClient {
  /** Every elicitation the server sent this client, in order. */
  readonly elicitations: ElicitRequest["params"][] = [];
  private stderrText = "";

  private constructor(
    readonly client: Client,
    private readonly transport: StdioClientTransport,
  ) {
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrText = (this.stderrText + chunk.toString()).slice(-20_000);
    });
  }

  static async open(options: McpClientOptions): Promise<McpClient> {
    const elicit = options.elicit ?? "none";
    const capabilities: Record<string, object> = {};
    if (elicit !== "none") capabilities.elicitation = {};
    if (options.roots) capabilities.roots = { listChanged: false };
    const client = new Client({ name: options.name ?? "umbra-test", version: "1.0.0" }, { capabilities });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", ...(options.root ? ["--root", options.root] : [])],
      env: Object.fromEntries(
        Object.entries(options.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
      stderr: "pipe",
    });
    const mcp = new McpClient(client, transport);
    if (elicit !== "none")
      client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
        mcp.elicitations.push(request.params);
        if (elicit === "accept") return { action: "accept", content: yesContent(request.params) };
        return { action: elicit };
      });
    if (options.roots) {
      const roots = options.roots.map((dir) => ({ uri: `file://${dir}`, name: dir }));
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
    }
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    return mcp;
  }

  /** What the server wrote on stderr (the last 20 kB), for failure messages. */
  get stderr(): string {
    return this.stderrText;
  }

  get pid(): number | null {
    return this.transport.pid;
  }

  /** Calls a tool; `args` is sent as it is (tests send hostile input on purpose). */
  async call<T extends ToolName>(tool: T, args: Record<string, unknown> = {}): Promise<CallOutcome<T>> {
    const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
      timeout: CALL_TIMEOUT_MS,
    });
    const content = Array.isArray(result.content)
      ? (result.content as { type: string; text?: string }[])
      : [];
    const text = content.map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("\n");
    const isError = result.isError === true;
    const data = isError ? undefined : (result.structuredContent as ToolResult<T> | undefined);
    return { isError, text, data };
  }

  /** Calls a tool that must succeed (no error result, and not `ok: false`); its structured result. */
  async ok<T extends ToolName>(tool: T, args: Record<string, unknown> = {}): Promise<ToolResult<T>> {
    const outcome = await this.call(tool, args);
    if (refusal(outcome) || outcome.data === undefined)
      throw new Error(
        `${tool} ${JSON.stringify(args).slice(0, 300)} failed: ${outcome.text}\n${this.stderr}`,
      );
    return outcome.data;
  }

  /** Closes the session and waits for the server process to be gone. */
  async close(): Promise<void> {
    await this.client.close();
  }
}

/**
 * Whether a call was refused: an engine error (an error result), or a file tool's `ok: false` (the
 * agent's tools answer a path they will not touch that way, with the reason in `text`).
 */
export function refusal(outcome: CallOutcome<ToolName>): boolean {
  return outcome.isError || (outcome.data as { ok?: unknown } | undefined)?.ok === false;
}

/**
 * A temporary folder (real path) for one test file: `root` (its `project` folder, not made yet), a home
 * folder, and umbra's data and config folders, named in `env`. Remove `base` when done.
 */
export async function testPlace(
  prefix: string,
): Promise<{ base: string; root: string; env: NodeJS.ProcessEnv }> {
  const base = realpathSync(await tempDir(prefix));
  mkdirSync(join(base, "home"));
  const env = {
    ...process.env,
    HOME: join(base, "home"),
    UMBRA_HOME: join(base, "data"),
    XDG_CONFIG_HOME: join(base, "config"),
  };
  return { base, root: join(base, "project"), env };
}

/** Opens a client for each `options`, all at once. */
export function openAll(options: McpClientOptions[]): Promise<McpClient[]> {
  return Promise.all(options.map((option) => McpClient.open(option)));
}

/**
 * Every entry below `root` (`.git` included), one line each: kind, path, mode, link count, and content
 * hash and mtime or link target. Equal fingerprints mean the same bytes, modes and links, no entry
 * gained or lost, and nothing even rewritten.
 */
export async function fingerprintTree(root: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const path = join(dir, name);
      const rel = `${prefix}${name}`;
      const info = await lstat(path);
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isSymbolicLink()) lines.push(`l ${rel} -> ${await readlink(path)}`);
      else if (info.isDirectory()) {
        lines.push(`d ${rel} ${mode}`);
        await walk(path, `${rel}/`);
      } else if (info.isFile()) {
        const hash = createHash("sha256")
          .update(await readFile(path))
          .digest("hex");
        lines.push(`f ${rel} ${mode} ${info.nlink} ${hash} ${info.mtimeMs}`);
      } else lines.push(`o ${rel} ${mode}`);
    }
  };
  await walk(root, "");
  return lines;
}

/** Whether a process with this pid is running. */
export function alive(pid: number | null | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The engines (`umbra serve`) among the processes of `env`'s data directory. */
function enginesOf(env: NodeJS.ProcessEnv): number[] {
  return processesOf(env.UMBRA_HOME ?? "").filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("serve");
    } catch {
      return false;
    }
  });
}

/**
 * Stops the engine a test's MCP servers started (SIGTERM, as at logout) and waits until no process of
 * that data directory is left (SIGKILL after a bound, so that a hung engine fails loudly, not forever).
 */
export async function stopEngine(env: NodeJS.ProcessEnv): Promise<void> {
  for (const pid of enginesOf(env)) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  try {
    await waitUntil(
      () => processesOf(env.UMBRA_HOME ?? "").length === 0,
      "the engine and the MCP servers to exit",
      60_000,
    );
  } finally {
    for (const pid of processesOf(env.UMBRA_HOME ?? "")) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}
