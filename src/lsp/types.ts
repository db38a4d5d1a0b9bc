import type { ChildProcess } from "node:child_process";

/**
 * A branch's view of a workspace, as the host needs it. Shadow branches have exactly these members.
 * Paths are workspace-relative and use `/`.
 */
export interface DocumentSource {
  /** Identifies the branch: the scheduler is fair across distinct ids. */
  readonly id: string;
  /** The user's folder this branch forks (absolute, symlink-free). Servers see files under it. */
  readonly workspaceRoot: string;
  /** The branch's content of a file, or undefined when the file does not exist in the branch. */
  readText(relPath: string): Promise<string | undefined>;
  /** Paths whose content in the branch differs from the user's folder. */
  changes(): Promise<{ path: string; kind: "added" | "modified" | "deleted" }[]>;
}

/** How to start a server process. */
export interface LaunchSpec {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Starts a server process with piped stdin, stdout and stderr. The product passes one that runs the
 * server inside a shadow branch mounted at the workspace's own path.
 */
export type Launcher = (spec: LaunchSpec) => ChildProcess;

export type Severity = "error" | "warning" | "information" | "hint";

/** A diagnostic in a workspace file. Lines and columns are 1-based; columns count UTF-16 code units. */
export interface Diag {
  path: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: Severity;
  code?: string;
  source?: string;
  message: string;
}

/** A 1-based position in a file; the column counts UTF-16 code units, as LSP does. */
export interface Position {
  line: number;
  column: number;
}

/** A range in a file. `path` is workspace-relative, or absolute when the file is outside the workspace. */
export interface Location {
  path: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /** True when the file lies outside the workspace (a library, the standard library, ...). */
  external: boolean;
}

export interface LintResult {
  path: string;
  language: string;
  /** Every diagnostic of the file in its linted content. */
  diagnostics: Diag[];
  /** The diagnostics the edit introduced: not present in the same file unedited. */
  introduced: Diag[];
  /** Other files whose diagnostics the edit changed, with what it introduced there. */
  otherFiles: { path: string; introduced: Diag[] }[];
  /**
   * The other files that were checked for cross-file effects: the importers most likely affected (those
   * that mention the symbols the edit touched first), then the branch's other changes.
   */
  checkedFiles: string[];
  /** Importers that were not checked because of the per-language limit, most relevant first. */
  skippedFiles: string[];
  /**
   * True when the lists may be incomplete: diagnostics did not settle within the lint timeout, or the
   * server reported that it could not load the project (a module's dependencies missing, a broken
   * go.mod or tsconfig.json, no writable build cache, ...).
   */
  partial: boolean;
  /** Why the result is partial, one line each, in the server's own words where it gave any. */
  partialReasons: string[];
  /** The document version the server checked. */
  version: number;
  elapsedMs: number;
}

export interface HoverResult {
  /** The hover text (Markdown or plain text as the server sent it). */
  text: string;
  range?: Omit<Location, "path" | "external">;
}

export interface SymbolInfo {
  name: string;
  /** The LSP symbol kind in words: "function", "class", "method", ... */
  kind: string;
  location: Location;
  /** The enclosing symbol's name path, e.g. "Outer.inner", when known. */
  container?: string;
  detail?: string;
}
