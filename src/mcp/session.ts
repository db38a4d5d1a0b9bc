import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { ParamsOf, ResultOf } from "../engine/api.js";
import { type EngineConnection, type OpenEngineOptions, openEngine } from "../engine/client.js";
import { elicitationHooks } from "./hooks.js";
import { INSTRUCTIONS, inputShape, TOOLS, type ToolOperation } from "./tools.js";
import { type RootChoice, sessionRoot } from "./workspace.js";

export interface McpSessionOptions {
  /** The workspace: the folder the user named, else the client's roots, else the folder umbra started in. */
  root: RootChoice;
  env: NodeJS.ProcessEnv;
  /** One line for the user (stderr; never stdout, which carries the protocol over stdio). */
  log: (line: string) => void;
  /** How the engine is reached (default: openEngine, the user's engine). */
  open?: (options: OpenEngineOptions) => Promise<EngineConnection>;
}

interface Attached {
  connection: EngineConnection;
  root: string;
}

/** The one line of an error, for a tool result the model reads (the engine's errors are one line already). */
function errorLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] || "the tool failed";
}

/** The text of a result; should the text fail, the result as JSON (what was done stays reported). */
function resultText<N extends ToolOperation>(operation: N, result: ResultOf<N>): string {
  try {
    return TOOLS[operation].text(result);
  } catch {
    return JSON.stringify(result, null, 2);
  }
}

/** A result that says the tool did not do its work (the agent's tools' failures, a command not run). */
function failed(result: unknown): boolean {
  const { ok, ran } = result as { ok?: unknown; ran?: unknown };
  return ok === false || ran === false;
}

/**
 * One MCP session (a client over stdio, or one HTTP session): an MCP server whose tools call the engine
 * through one connection of its own (its own caller, so its own branches and questions). The workspace
 * and the connection are fixed at the first tool call (by then the client said who it is and what it
 * can do) and kept for the session.
 */
export class McpSession {
  readonly server: McpServer;
  private attached: Promise<Attached> | undefined;
  /** The tool calls running now, by request id: where the engine's questions go (see hooks.ts). */
  private readonly running = new Map<RequestId, { operation: ToolOperation; branch?: string }>();
  private closed = false;

  constructor(private readonly options: McpSessionOptions) {
    this.server = new McpServer(
      { name: "umbra", title: "umbra: search, branches, lints and a sandbox for agents", version: "0.1.0" },
      { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
    );
    for (const operation of Object.keys(TOOLS) as ToolOperation[]) this.register(operation);
  }

  async connect(transport: Transport): Promise<void> {
    await this.server.connect(transport);
  }

  /** Ends the session: the engine connection is released (its branches stay), the transport closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const attached = this.attached;
    this.attached = undefined;
    await this.server.close().catch(() => {});
    if (attached) await (await attached.catch(() => undefined))?.connection.close();
  }

  private register<N extends ToolOperation>(operation: N): void {
    const spec = TOOLS[operation];
    this.server.registerTool(
      spec.name,
      {
        title: spec.title,
        description: spec.description,
        inputSchema: inputShape(operation),
        annotations: { title: spec.title, ...spec.annotations },
      },
      (args: Record<string, unknown>, extra) => this.call(operation, args, extra.requestId),
    );
  }

  private async call<N extends ToolOperation>(
    operation: N,
    args: Record<string, unknown>,
    requestId: RequestId,
  ): Promise<CallToolResult> {
    const branch = typeof args.branch === "string" ? args.branch : undefined;
    this.running.set(requestId, { operation, ...(branch !== undefined ? { branch } : {}) });
    try {
      const { connection, root } = await this.attach();
      // the arguments passed the tool's schema, which is the operation's without root; the engine checks
      // them again against the operation's own schema
      const params = { ...args, ...TOOLS[operation].fixed, root } as ParamsOf<N>;
      const result = await connection.call(operation, params);
      return {
        content: [{ type: "text", text: resultText(operation, result) }],
        structuredContent: result as unknown as Record<string, unknown>,
        ...(failed(result) ? { isError: true } : {}),
      };
    } catch (error) {
      return { content: [{ type: "text", text: errorLine(error) }], isError: true };
    } finally {
      this.running.delete(requestId);
    }
  }

  /** The session's workspace and engine connection, made at the first call; a failure is tried again. */
  private attach(): Promise<Attached> {
    if (this.closed) return Promise.reject(new Error("the session is closed"));
    if (!this.attached) {
      const attempt = this.open();
      this.attached = attempt;
      attempt.catch(() => {
        if (this.attached === attempt) this.attached = undefined;
      });
    }
    return this.attached;
  }

  private async open(): Promise<Attached> {
    const { env, log } = this.options;
    const root = await sessionRoot(this.options.root, this.server.server, log);
    const hooks = elicitationHooks(this.server.server, (kind, branch) => this.relatedCall(kind, branch), log);
    const name = this.server.server.getClientVersion()?.name ?? "mcp client";
    const connection = await (this.options.open ?? openEngine)({ name, hooks, env });
    if (this.closed) {
      await connection.close();
      throw new Error("the session is closed");
    }
    log(`${name}: workspace ${root}`);
    return { connection, root };
  }

  /** The running call a question belongs to: a `kind` call on `branch`, else any running call. */
  private relatedCall(kind: "run" | "accept", branch: string): RequestId | undefined {
    let any: RequestId | undefined;
    for (const [id, call] of this.running) {
      if (call.operation === kind && call.branch === branch) return id;
      any ??= id;
    }
    return any;
  }
}
