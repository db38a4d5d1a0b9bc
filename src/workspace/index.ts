export { type ChangeSet, diffFiles, isEmpty } from "./changes.js";
export { CorruptStateError, WorkspaceError, type WorkspaceErrorCode } from "./errors.js";
export { BINARY_EXTENSIONS, classifyContent, hasBinaryExtension, sha256Hex } from "./hash.js";
export { findGlobalExcludesFile, IGNORE_FILE_NAMES } from "./ignore-rules.js";
export { computeDirHashes } from "./merkle.js";
export { resolveRoot } from "./root.js";
export { DEFAULT_EXCLUDED_DIRS, DEFAULT_MAX_FILE_BYTES, type ScanOptions, scanWorkspace } from "./scan.js";
export {
  fileHashes,
  indexableFiles,
  loadSnapshot,
  saveSnapshot,
  skippedForIndex,
  type TakeSnapshotOptions,
  type TakeSnapshotResult,
  takeSnapshot,
} from "./snapshot.js";
export type {
  ContentKind,
  FileEntry,
  ScannedFile,
  ScanResult,
  ScanSkipReason,
  SkippedEntry,
  SkipReason,
  Snapshot,
} from "./types.js";
