export type AcceptErrorCode =
  /** The request itself is wrong: hunks without exactly one file, a file or hunk that is not there. */
  | "USAGE"
  /** A file of the user's changed between the merge and its replacement; nothing was changed. */
  | "CHANGED"
  /** The last accept was interrupted (a crash): it must be undone before the next one. */
  | "INTERRUPTED"
  /** Another accept or undo of the same folder is running. */
  | "BUSY"
  /** The journal in the data directory cannot be read. */
  | "CORRUPT_JOURNAL"
  /** git merge-file failed (not a conflict: git itself). */
  | "MERGE_FAILED";

/** An accept or undo failure. The message is one line, fit to show to a user. */
export class AcceptError extends Error {
  override readonly name = "AcceptError";
  readonly code: AcceptErrorCode;

  constructor(code: AcceptErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
