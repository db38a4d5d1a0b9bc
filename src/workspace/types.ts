/** Why a path found by the scan is not part of the file set. */
export type ScanSkipReason = "ignored" | "excluded-dir" | "too-large" | "symlink" | "unreadable" | "special";

/** Why a path is not chunked and indexed: a scan skip, or content that is not UTF-8 text. */
export type SkipReason = ScanSkipReason | "binary" | "invalid-utf8";

export interface SkippedEntry {
  /** Posix path relative to the workspace root. */
  path: string;
  reason: SkipReason;
  /** E.g. the ignore file that matched (`.gitignore`, `sub/.umbraignore`), or an error code. */
  detail?: string;
  /** True when the path is a directory (reported once; nothing inside it was looked at). */
  dir?: boolean;
}

export interface ScannedFile {
  /** Posix path relative to the workspace root. */
  path: string;
  size: number;
  mtimeMs: number;
}

export interface ScanResult {
  /** Sorted by path (code-unit order). */
  files: ScannedFile[];
  /** Sorted by path (code-unit order). */
  skipped: SkippedEntry[];
}

export type ContentKind = "text" | "binary" | "invalid-utf8";

export interface FileEntry {
  size: number;
  mtimeMs: number;
  /** sha256 hex of the file's bytes. */
  hash: string;
  content: ContentKind;
}

export interface Snapshot {
  version: 1;
  /** Equal to `dirs[""]`. */
  rootHash: string;
  files: Record<string, FileEntry>;
  /** Directory path ("" is the root) → directory hash. */
  dirs: Record<string, string>;
  skipped: SkippedEntry[];
  /** ISO time at which the snapshot was started. */
  scannedAt: string;
}
