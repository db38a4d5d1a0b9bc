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

export type FileAccessErrorCode =
  /** Not a canonical relative path (absolute, `..`, empty segment, NUL). */
  | "INVALID_PATH"
  /** A symlink stands on the way or at the path, where none may be followed. */
  | "SYMLINK"
  /** The path resolves outside the workspace (through a symlink). */
  | "OUTSIDE"
  /** A folder on the way is not a folder. */
  | "NOT_DIR"
  /** A FIFO, device or socket: never opened. */
  | "NOT_REGULAR"
  | "MISSING"
  /** The entry was replaced between its check and its opening. */
  | "CHANGED"
  | "TOO_LARGE"
  /** Hidden from agents (.umbraignore/.cursorignore match, credential file, or the same file by another name). */
  | "HIDDEN"
  /** Read-only for agents (git metadata, editor and umbra settings, ignore files). */
  | "PROTECTED";

/** A refused or failed workspace/branch file access. The message is one line and names `path` only. */
export class FileAccessError extends Error {
  override readonly name = "FileAccessError";
  readonly code: FileAccessErrorCode;
  readonly path: string;

  constructor(code: FileAccessErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.path = path;
  }
}

/**
 * A path as it may be shown to a model or printed: control characters (newlines, terminal escapes)
 * written as `\n`, `\x1b`, …, so that a name can neither fake lines of output nor drive a terminal.
 */
export function shownPath(path: string): string {
  return path.replace(SHOWN_ESCAPES, (char) => {
    if (char === "\n") return "\\n";
    if (char === "\t") return "\\t";
    const code = char.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** C0 and C1 controls, DEL, the Unicode line and paragraph separators, and bidirectional overrides. */
const C0 = "\\u0000-\\u001f";
const SHOWN_ESCAPES = new RegExp(`[${C0}\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]`, "g");
