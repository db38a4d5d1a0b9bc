import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { shownPath } from "../workspace/errors.js";
import {
  type Caller,
  type CallOptions,
  type ClientHooks,
  OPERATIONS,
  type OperationName,
  type ResultOf,
} from "./api.js";
import { ApprovalQueue } from "./approvals.js";
import { EngineError } from "./errors.js";
import { EventLog } from "./events.js";
import { type EngineServices, runOperation } from "./operations.js";
import { SessionHub } from "./sessions.js";
import { WorkspaceHub } from "./workspaces.js";

export interface EngineOptions {
  /** The environment for the data directory, configuration and the servers (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Keep each open workspace's index fresh with a watcher (default true). */
  watch?: boolean;
  /** A branch no request worked in for this long is let go: written out, unmounted, no longer owned (default 30 s). */
  branchIdleMs?: number;
  /** Called with one-line warnings (a language server that cannot start, a failed sync). */
  onWarning?: (message: string) => void;
  /** How long a client's network request waits in the approvals queue for the page's answer (default 10 min). */
  pageAnswerMs?: number;
}

const PAGE_ANSWER_MS = 10 * 60_000;

/**
 * The queue's name for a client that is not an agent session (an MCP or API client); the name is the
 * client's own word, shown with its control characters escaped.
 */
function clientSession(caller: Caller): string {
  return `${shownPath(caller.name)} (client ${caller.id.slice(0, 8)})`;
}

/**
 * The engine: the one place that acts. It holds every workspace a client touched (its index open and
 * kept fresh, its language servers warm, its branches) and serves any number of clients at once; front
 * ends (the socket, MCP, HTTP) only carry requests to `call` and results back.
 */
export class Engine {
  readonly startedAt = new Date().toISOString();
  private readonly clients = new Map<string, Caller>();
  private readonly hub: WorkspaceHub;
  /** Live events of the agent sessions and approvals (the HTTP API streams them). */
  readonly events = new EventLog();
  private readonly services: EngineServices;
  private closed = false;

  constructor(options: EngineOptions = {}) {
    const env = options.env ?? process.env;
    const approvals = new ApprovalQueue(this.events, env);
    this.services = { approvals, sessions: new SessionHub(this.events, approvals) };
    const pageAnswerMs = options.pageAnswerMs ?? PAGE_ANSWER_MS;
    this.hub = new WorkspaceHub({
      env,
      watch: options.watch ?? true,
      onWarning: options.onWarning ?? (() => {}),
      // a client that cannot ask its user: the page's queue, while a page is open to answer
      askOnPage: async (caller, question) =>
        this.events.watchers > 0 &&
        this.clients.has(caller.id) &&
        approvals.ask({ ...question, session: clientSession(caller) }, pageAnswerMs),
      ...(options.branchIdleMs !== undefined ? { branchIdleMs: options.branchIdleMs } : {}),
    });
  }

  /** A new client (one connection): the hooks are how the engine asks it (and its user) questions. */
  connect(name: string, hooks: ClientHooks): Caller {
    const caller: Caller = { id: randomUUID(), name: name.slice(0, 200) || "client", hooks };
    this.clients.set(caller.id, caller);
    return caller;
  }

  /** The client is gone; its branches stay (listed, never lost). */
  disconnect(caller: Caller): void {
    this.clients.delete(caller.id);
    this.services.approvals.drop(clientSession(caller));
  }

  /** The workspaces a client touched, open now (their real paths). */
  workspaces(): string[] {
    return this.hub.roots();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Agent sessions running in the engine now (it does not stop for idleness while one runs). */
  get runningSessions(): number {
    return this.services.sessions.running;
  }

  /** Runs one operation for `caller`; `params` is untrusted and checked against the operation's schema. */
  async call<N extends OperationName>(
    caller: Caller,
    name: N,
    params: unknown,
    options: CallOptions = {},
  ): Promise<ResultOf<N>> {
    if (this.closed) throw new EngineError("NO_ENGINE", "the engine is stopping");
    if (!Object.hasOwn(OPERATIONS, name))
      throw new EngineError("BAD_REQUEST", `no operation ${String(name)}`);
    const schema: z.ZodTypeAny = OPERATIONS[name];
    const parsed = schema.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new EngineError(
        "BAD_REQUEST",
        `${name}: ${issue ? `${issue.path.join(".") || "parameters"}: ${issue.message}` : "bad parameters"}`,
      );
    }
    if (options.signal?.aborted) throw new EngineError("CANCELLED", "the request was cancelled");
    return runOperation(
      this.hub,
      caller,
      name,
      parsed.data,
      options,
      {
        pid: process.pid,
        startedAt: this.startedAt,
        clients: this.clients.size,
      },
      this.services,
    );
  }

  /** Stops everything: watchers, language servers; held branches are closed (kept on disk). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.services.sessions.close();
    await this.hub.close();
  }
}
