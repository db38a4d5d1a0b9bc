import type { ChildProcess } from "node:child_process";
import {
  CancellationTokenSource,
  createMessageConnection,
  ErrorCodes,
  type MessageConnection,
  type RequestType,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import type {
  ClientCapabilities,
  ConfigurationParams,
  InitializeParams,
  InitializeResult,
  PublishDiagnosticsParams,
  RegistrationParams,
  ServerCapabilities,
  ShowMessageParams,
  UnregistrationParams,
} from "vscode-languageserver-protocol";
import { LspError } from "./errors.js";
import type { ServerMessage } from "./load-problems.js";
import { killProcessTree, trackChild } from "./processes.js";
import type { ServerSpec } from "./registry.js";
import type { Launcher } from "./types.js";

/** What umbra tells servers it supports: enough for diagnostics (pull and versioned push) and navigation. */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  general: { positionEncodings: ["utf-16"] },
  textDocument: {
    synchronization: { dynamicRegistration: false, didSave: false, willSave: false },
    diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
    publishDiagnostics: { versionSupport: true, relatedInformation: false },
    hover: { dynamicRegistration: false, contentFormat: ["markdown", "plaintext"] },
    definition: { dynamicRegistration: false, linkSupport: true },
    references: { dynamicRegistration: false },
    documentSymbol: { dynamicRegistration: false, hierarchicalDocumentSymbolSupport: true },
  },
  workspace: {
    configuration: true,
    workspaceFolders: true,
    symbol: { dynamicRegistration: false },
    didChangeWatchedFiles: { dynamicRegistration: false },
  },
  window: { workDoneProgress: false },
};

function withDynamicPullDiagnostics(capabilities: ClientCapabilities): ClientCapabilities {
  return {
    ...capabilities,
    textDocument: {
      ...capabilities.textDocument,
      diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
    },
  };
}

const STDERR_TAIL_CHARS = 4000;

/**
 * The least time a server gets to answer `initialize`. Starting is not a request like the others: the
 * process, its runtime and its bundle load first (pyright, tsserver: seconds on a busy machine), so it is
 * not held to `requestTimeoutMs`, which is sized for requests to a running server.
 */
const INITIALIZE_TIMEOUT_MS = 60_000;

export interface ConnectionOptions {
  spec: ServerSpec;
  launcher: Launcher;
  workspaceRoot: string;
  rootUri: string;
  /** Environment the server starts with (the spec's own variables are added). */
  env: NodeJS.ProcessEnv;
  /** Answers to `workspace/configuration`, by section. */
  settings?: Record<string, unknown>;
  initializationOptions?: unknown;
  requestTimeoutMs: number;
  /**
   * The server registers pull diagnostics dynamically (pyright): tell it the client supports that, and
   * wait at most this long after `initialized` for the registration.
   */
  awaitPullRegistrationMs?: number;
  /** Called with every `textDocument/publishDiagnostics` the server sends. */
  onDiagnostics?: (params: PublishDiagnosticsParams) => void;
  /** Called with every `window/showMessage` (`shown`) and `window/logMessage` the server sends. */
  onMessage?: (message: ServerMessage, shown: boolean) => void;
  /** Names the server in error messages, e.g. "typescript server for /repo". */
  label: string;
}

interface Pending {
  reject(error: LspError): void;
}

/** A started, initialized language server speaking JSON-RPC over its stdio. */
export class LspConnection {
  private readonly pending = new Set<Pending>();
  private stderr = "";
  /** When the server last wrote to its stdout (epoch ms). */
  private lastHeard = 0;
  private exitError: LspError | undefined;
  private stopping = false;
  private readonly exitListeners: ((error: LspError) => void)[] = [];
  /** Dynamic registrations: id → method. */
  private readonly registrations = new Map<string, string>();
  private readonly registrationListeners = new Set<() => void>();
  /** Settles when the process has exited, with the error pending requests were rejected with. */
  readonly exited: Promise<LspError>;
  capabilities: ServerCapabilities = {};

  private constructor(
    private readonly child: ChildProcess,
    private readonly rpc: MessageConnection,
    private readonly options: ConnectionOptions,
  ) {
    this.exited = new Promise((resolve) => this.exitListeners.push(resolve));
  }

  /** Starts the server and runs the initialize handshake; throws LspError on failure or timeout. */
  static async start(options: ConnectionOptions): Promise<LspConnection> {
    const { spec, launcher, workspaceRoot } = options;
    let child: ChildProcess;
    try {
      child = launcher({
        command: spec.command,
        args: spec.args,
        cwd: workspaceRoot,
        env: { ...options.env, ...spec.env },
      });
    } catch (error) {
      throw new LspError("start-failed", `cannot start ${options.label}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (!child.stdin || !child.stdout) {
      child.kill("SIGKILL");
      throw new LspError("start-failed", `cannot start ${options.label}: the launcher gave no stdio pipes`);
    }
    trackChild(child);
    const rpc = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    const connection = new LspConnection(child, rpc, options);
    connection.wire();
    try {
      const result = await connection.request<InitializeParams, InitializeResult>(
        "initialize",
        {
          // null, not our pid: servers run in the sandbox's pid namespace, where our pid is someone else or
          // no one, and pyright (which polls the pid every 3 s) would exit on not finding it.
          processId: null,
          clientInfo: { name: "umbra" },
          rootUri: options.rootUri,
          rootPath: workspaceRoot,
          workspaceFolders: [{ uri: options.rootUri, name: workspaceRoot.split("/").pop() || "workspace" }],
          capabilities: options.awaitPullRegistrationMs
            ? withDynamicPullDiagnostics(CLIENT_CAPABILITIES)
            : CLIENT_CAPABILITIES,
          initializationOptions: options.initializationOptions ?? null,
        },
        Math.max(options.requestTimeoutMs, INITIALIZE_TIMEOUT_MS),
      );
      connection.capabilities = result.capabilities;
      connection.notify("initialized", {});
      if (options.awaitPullRegistrationMs) {
        await connection.registration("textDocument/diagnostic", options.awaitPullRegistrationMs);
      }
    } catch (error) {
      await connection.kill();
      if (error instanceof LspError) {
        const code = error.code === "timeout" || error.code === "not-installed" ? error.code : "start-failed";
        throw new LspError(code, `${options.label} did not initialize: ${error.message}`, {
          cause: error,
          ...(error.stderrTail ? { stderrTail: error.stderrTail } : {}),
        });
      }
      throw error;
    }
    return connection;
  }

  private wire(): void {
    const { child, rpc, options } = this;
    child.stdout?.on("data", () => {
      this.lastHeard = Date.now();
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderr += chunk;
      if (this.stderr.length > 2 * STDERR_TAIL_CHARS) this.stderr = this.stderr.slice(-STDERR_TAIL_CHARS);
    });
    child.stdin?.on("error", () => {
      // EPIPE after the server exits: the exit handler reports it.
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code === "ENOENT" ? "not-installed" : "start-failed";
      this.onExit(new LspError(code, `${options.label}: ${error.message}`, { cause: error }));
    });
    child.on("exit", (code, signal) => {
      const how = signal ? `signal ${signal}` : `exit status ${code}`;
      const tail = this.stderrTail();
      const message = this.stopping
        ? `${options.label} was shut down`
        : `${options.label} crashed (${how})${tail ? `: ${lastLine(tail)}` : ""}`;
      this.onExit(
        new LspError(
          this.stopping ? "shut-down" : "crashed",
          message,
          tail ? { stderrTail: tail } : undefined,
        ),
      );
    });
    rpc.onNotification((method: string, params: unknown) => {
      if (method === "textDocument/publishDiagnostics") {
        options.onDiagnostics?.(params as PublishDiagnosticsParams);
      } else if (method === "window/showMessage" || method === "window/logMessage") {
        const { type, message } = params as ShowMessageParams;
        options.onMessage?.({ type, text: String(message) }, method === "window/showMessage");
      }
    });
    rpc.onRequest((method: string, params: unknown) => this.serverRequest(method, params));
    rpc.onError(() => {
      // Malformed input from the server; a dead server is reported by the exit handler.
    });
    rpc.listen();
  }

  /** Answers requests a server makes of its client. */
  private serverRequest(method: string, params: unknown): unknown {
    switch (method) {
      case "workspace/configuration": {
        const items = (params as ConfigurationParams).items;
        return items.map((item) => (item.section ? (this.options.settings?.[item.section] ?? null) : null));
      }
      case "workspace/workspaceFolders":
        return [{ uri: this.options.rootUri, name: "workspace" }];
      case "workspace/applyEdit":
        return { applied: false, failureReason: "umbra does not apply server edits" };
      case "client/registerCapability": {
        for (const item of (params as RegistrationParams).registrations)
          this.registrations.set(item.id, item.method);
        for (const listener of this.registrationListeners) listener();
        return null;
      }
      case "client/unregisterCapability": {
        for (const item of (params as UnregistrationParams).unregisterations)
          this.registrations.delete(item.id);
        return null;
      }
      case "window/workDoneProgress/create":
      case "window/showMessageRequest":
      case "window/showDocument":
      case "workspace/diagnostic/refresh":
      case "workspace/semanticTokens/refresh":
      case "workspace/inlayHint/refresh":
      case "workspace/inlineValue/refresh":
      case "workspace/codeLens/refresh":
        return null;
      default:
        return new ResponseError(ErrorCodes.MethodNotFound, `umbra does not handle ${method}`);
    }
  }

  private onExit(error: LspError): void {
    if (this.exitError) return;
    this.exitError = error;
    for (const pending of this.pending) pending.reject(error);
    this.pending.clear();
    this.rpc.dispose();
    for (const listener of this.exitListeners) listener(error);
  }

  /** Whether the server answers `textDocument/diagnostic` (statically or by dynamic registration). */
  get pullDiagnostics(): boolean {
    return Boolean(this.capabilities.diagnosticProvider) || this.registered("textDocument/diagnostic");
  }

  private registered(method: string): boolean {
    for (const registered of this.registrations.values()) if (registered === method) return true;
    return false;
  }

  /** Resolves once the server registered `method` dynamically, or after `timeoutMs` (false). */
  private registration(method: string, timeoutMs: number): Promise<boolean> {
    if (this.registered(method)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (value: boolean): void => {
        clearTimeout(timer);
        this.registrationListeners.delete(listener);
        resolve(value);
      };
      const listener = (): void => {
        if (this.registered(method)) done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.registrationListeners.add(listener);
      this.onExitEvent(() => done(false));
    });
  }

  /** Whether the server wrote anything (an answer, a notification, a request) at or after `since`. */
  heardSince(since: number): boolean {
    return this.lastHeard >= since;
  }

  get alive(): boolean {
    return this.exitError === undefined;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last few thousand characters the server wrote to stderr. */
  stderrTail(): string {
    return this.stderr.slice(-STDERR_TAIL_CHARS);
  }

  /** Registers a listener for the process's exit (called at once if it already exited). */
  onExitEvent(listener: (error: LspError) => void): void {
    if (this.exitError) listener(this.exitError);
    else this.exitListeners.push(listener);
  }

  /**
   * Sends a request and waits at most `timeoutMs` (default: the request timeout) for its answer.
   * Rejects with LspError `timeout` (the request is cancelled), `crashed` (the server exited),
   * or `server-error` (the server answered with an error).
   */
  request<P, R>(method: string | RequestType<P, R, unknown>, params: P, timeoutMs?: number): Promise<R> {
    const name = typeof method === "string" ? method : method.method;
    if (this.exitError) return Promise.reject(this.exitError);
    const limit = timeoutMs ?? this.options.requestTimeoutMs;
    return new Promise<R>((resolve, reject) => {
      const cancel = new CancellationTokenSource();
      let done = false;
      const finish = (): void => {
        done = true;
        clearTimeout(timer);
        this.pending.delete(entry);
        cancel.dispose();
      };
      const entry: Pending = {
        reject: (error) => {
          if (done) return;
          finish();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        if (done) return;
        cancel.cancel();
        finish();
        reject(new LspError("timeout", `${this.options.label}: ${name} got no answer within ${limit} ms`));
      }, limit);
      this.pending.add(entry);
      let sent: Promise<R>;
      try {
        // No params at all (not `[null]`) for requests such as `shutdown`.
        sent = (
          params === null || params === undefined
            ? this.rpc.sendRequest(name, cancel.token)
            : this.rpc.sendRequest(name, params, cancel.token)
        ) as Promise<R>;
      } catch {
        // The connection closed under us: the exit handler or the timeout settles this request.
        return;
      }
      sent.then(
        (result) => {
          if (done) return;
          finish();
          resolve(result);
        },
        (error: unknown) => {
          if (done) return;
          if (error instanceof ResponseError && error.code !== ErrorCodes.PendingResponseRejected) {
            finish();
            reject(
              new LspError("server-error", `${this.options.label}: ${name} failed: ${error.message}`, {
                cause: error,
              }),
            );
          }
          // Otherwise the connection is going away: the exit handler or the timeout settles it.
        },
      );
    });
  }

  /** Sends a notification; a dead server is ignored here (the next request reports it). */
  notify(method: string, params: unknown): void {
    if (this.exitError) return;
    try {
      const sent =
        params === null || params === undefined
          ? this.rpc.sendNotification(method)
          : this.rpc.sendNotification(method, params);
      sent.catch(() => undefined);
    } catch {
      // closed
    }
  }

  /** Polite shutdown (shutdown request, exit notification), then SIGKILL after `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    if (this.exitError) return;
    this.stopping = true;
    const deadline = Date.now() + graceMs;
    try {
      await this.request("shutdown", null, Math.max(1, Math.floor(graceMs / 2)));
      this.notify("exit", null);
    } catch {
      // unresponsive: killed below
    }
    const left = Math.max(1, deadline - Date.now());
    const exited = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), left).unref()),
    ]);
    if (!exited) await this.kill();
  }

  /** Kills the server (and its process group, when it leads one) and waits for it to exit. */
  async kill(): Promise<void> {
    this.stopping = true;
    if (this.exitError) return;
    killProcessTree(this.child);
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines[lines.length - 1] ?? "").slice(0, 300);
}
