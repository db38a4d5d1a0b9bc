export type WorkspaceErrorCode = "ENOENT_ROOT" | "NOT_A_DIRECTORY" | "EACCES_ROOT" | "ROOT_UNREADABLE";

/** The workspace root itself cannot be scanned. The message is one line, fit to show to a user. */
export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
  readonly code: WorkspaceErrorCode;
  readonly root: string;

  constructor(code: WorkspaceErrorCode, root: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.root = root;
  }
}

/** A state file (such as merkle.json) exists but cannot be used; the caller should rebuild it. */
export class CorruptStateError extends Error {
  override readonly name = "CorruptStateError";
  readonly file: string;

  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(`${file} is corrupt (${reason}); it will be rebuilt`, options);
    this.file = file;
  }
}

/** The `code` of a Node.js system error, if it has one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}
