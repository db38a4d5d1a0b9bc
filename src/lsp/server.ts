import type { PublishDiagnosticsParams } from "vscode-languageserver-protocol";
import { LspConnection } from "./connection.js";
import { LspError } from "./errors.js";
import type { ServerMessage } from "./load-problems.js";
import type { LanguageDefinition } from "./registry.js";
import type { Launcher } from "./types.js";

export interface ServerOptions {
  definition: LanguageDefinition;
  workspaceRoot: string;
  rootUri: string;
  launcher: Launcher;
  env: NodeJS.ProcessEnv;
  requestTimeoutMs: number;
  /** Shut the server down after this long without use. */
  idleMs: number;
  onDiagnostics(params: PublishDiagnosticsParams): void;
  onMessage(message: ServerMessage, shown: boolean): void;
  /** The process exited: a crash (`crashed`) or a shutdown (`shut-down`). */
  onExit(error: LspError): void;
}

export type ServerState = "stopped" | "starting" | "running";

/**
 * One language server for one workspace: started on first use, shut down after `idleMs` without use,
 * started again on the next use after a crash.
 */
export class LanguageServer {
  private connection: LspConnection | undefined;
  private starting: Promise<LspConnection> | undefined;
  private busy = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  starts = 0;
  crashes = 0;
  idleShutdowns = 0;
  /** Restarts because the server stopped answering. */
  unresponsiveRestarts = 0;
  private strikes = 0;
  description = "";

  constructor(private readonly options: ServerOptions) {}

  get label(): string {
    return `${this.options.definition.id} server for ${this.options.workspaceRoot}`;
  }

  get state(): ServerState {
    if (this.connection?.alive) return "running";
    return this.starting ? "starting" : "stopped";
  }

  get pid(): number | undefined {
    return this.connection?.alive ? this.connection.pid : undefined;
  }

  /** The running server, started if needed. */
  async ensure(): Promise<LspConnection> {
    if (this.closed) throw new LspError("shut-down", `${this.label} is shut down`);
    if (this.connection?.alive) return this.connection;
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<LspConnection> {
    const { definition } = this.options;
    const spec = definition.resolveServer();
    this.description = spec.description;
    this.starts++;
    const connection = await LspConnection.start({
      spec,
      launcher: this.options.launcher,
      workspaceRoot: this.options.workspaceRoot,
      rootUri: this.options.rootUri,
      env: this.options.env,
      settings: definition.settings,
      initializationOptions: definition.initializationOptions,
      requestTimeoutMs: this.options.requestTimeoutMs,
      ...(definition.dynamicPullDiagnosticsMs
        ? { awaitPullRegistrationMs: definition.dynamicPullDiagnosticsMs }
        : {}),
      onDiagnostics: (params) => {
        if (this.connection === connection) this.options.onDiagnostics(params);
      },
      // Also while starting: a server may report a failed project load right after `initialized`.
      onMessage: (message, shown) => {
        if (this.connection === undefined || this.connection === connection)
          this.options.onMessage(message, shown);
      },
      label: this.label,
    });
    if (this.closed) {
      await connection.kill();
      throw new LspError("shut-down", `${this.label} is shut down`);
    }
    this.connection = connection;
    connection.onExitEvent((error) => {
      if (this.connection !== connection) return;
      this.connection = undefined;
      if (error.code === "crashed") this.crashes++;
      this.options.onExit(error);
    });
    return connection;
  }

  /**
   * Records whether a job got its answers in time. After `limit` jobs in a row that timed out (or
   * settled only partially) without the server writing anything since `since` (epoch ms, the job's
   * start), the server is considered stuck: it is killed and the next use starts a fresh one. A server
   * that kept talking is slow, not stuck (a loaded machine): killing it would only add a cold start.
   */
  recordOutcome(answered: boolean, since?: number, limit = 3): void {
    if (answered) {
      this.strikes = 0;
      return;
    }
    if (since !== undefined && this.connection?.heardSince(since)) return;
    this.strikes++;
    if (this.strikes >= limit && this.connection?.alive) {
      this.strikes = 0;
      this.unresponsiveRestarts++;
      void this.connection.kill();
    }
  }

  /** Marks the server in use: no idle shutdown until the matching `release`. */
  acquire(): void {
    this.busy++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  release(): void {
    this.busy = Math.max(0, this.busy - 1);
    if (this.busy > 0 || this.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.busy === 0 && this.connection?.alive) {
        this.idleShutdowns++;
        void this.connection.stop();
      }
    }, this.options.idleMs);
    this.idleTimer.unref();
  }

  /** Stops the server now; with `final`, it never starts again. */
  async stop(final = false): Promise<void> {
    if (final) this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const starting = this.starting;
    if (starting) await starting.catch(() => undefined);
    await this.connection?.stop();
  }
}
