/**
 * Why a language-server operation failed:
 * - `timeout`: the server did not answer within the request timeout;
 * - `crashed`: the server process exited while the request was pending (the next use restarts it);
 * - `not-installed`: the language's server cannot be found on this machine;
 * - `start-failed`: the server process could not be started or did not initialize;
 * - `unsupported`: no registered language handles the file, or the server lacks the feature;
 * - `not-found`: the file does not exist in the branch;
 * - `server-error`: the server answered the request with an error;
 * - `shut-down`: the host was shut down.
 */
export type LspErrorCode =
  | "timeout"
  | "crashed"
  | "not-installed"
  | "start-failed"
  | "unsupported"
  | "not-found"
  | "server-error"
  | "shut-down";

/** A language-server operation failed. The message is one line, fit to show to a user or an agent. */
export class LspError extends Error {
  override readonly name = "LspError";
  readonly code: LspErrorCode;
  /** The last lines the server wrote to stderr, when it crashed or failed to start. */
  readonly stderrTail: string | undefined;

  constructor(code: LspErrorCode, message: string, options?: { cause?: unknown; stderrTail?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.stderrTail = options?.stderrTail;
  }
}

export function isLspError(error: unknown, code?: LspErrorCode): error is LspError {
  return error instanceof LspError && (code === undefined || error.code === code);
}
