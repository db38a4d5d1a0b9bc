/**
 * The engine's one error type. Every failure a front end gets from the engine is an EngineError with a
 * code (what kind of failure, for exit statuses and MCP error results) and a one-line message (for the
 * user or the model). It crosses the socket as `{code, message}`.
 */
export type EngineErrorCode =
  /** The request is malformed: unknown operation, parameters that do not fit the schema. */
  | "BAD_REQUEST"
  /** A file, branch or workspace that does not exist. */
  | "NOT_FOUND"
  /** The trust rules say no: a hidden or protected path, a link out of the workspace, an unconfirmed accept. */
  | "REFUSED"
  /** Another process holds what the request needs (a branch an agent session works in). */
  | "BUSY"
  /** What the request was made from changed since (the user's file, edited after its conflict was shown). */
  | "STALE"
  /** What the request needs is not there: no index yet, no language server for the file. */
  | "UNAVAILABLE"
  /** The caller stopped the request (an MCP cancellation, Ctrl-C). */
  | "CANCELLED"
  /** The engine is not running or cannot be reached. */
  | "NO_ENGINE"
  /** Anything else: a bug or an I/O failure. */
  | "INTERNAL";

const CODES: ReadonlySet<string> = new Set<EngineErrorCode>([
  "BAD_REQUEST",
  "NOT_FOUND",
  "REFUSED",
  "BUSY",
  "STALE",
  "UNAVAILABLE",
  "CANCELLED",
  "NO_ENGINE",
  "INTERNAL",
]);

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message.split("\n")[0] ?? message);
    this.name = "EngineError";
  }

  toWire(): { code: EngineErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }

  /** The error a wire value stands for (anything unexpected becomes INTERNAL). */
  static fromWire(value: unknown): EngineError {
    const record = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
    const code = typeof record.code === "string" && CODES.has(record.code) ? record.code : "INTERNAL";
    const message = typeof record.message === "string" ? record.message : "the engine failed";
    return new EngineError(code as EngineErrorCode, message);
  }
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}
