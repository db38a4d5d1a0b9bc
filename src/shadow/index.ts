export {
  Branch,
  type BranchChange,
  type BranchInfo,
  type BranchSandboxView,
  type DirEntry,
  diff,
  discard,
  type EntryKind,
  type ForkOptions,
  fork,
  type GcOptions,
  type GcResult,
  gc,
  listBranches,
  type MaterializeRefusal,
  openBranch,
  removeBranch,
} from "./branch.js";
export { type ChangeKind, changeDetail } from "./changes.js";
export { type DiffOptions, formatDiff, LARGE_FILE_BYTES, shownAsText } from "./diff.js";
export { ShadowError, type ShadowErrorCode } from "./errors.js";
export { type AccessRules, BranchFiles } from "./files.js";
export { helperLocation } from "./helper.js";
export { type BranchMode, type ModeChoice, type ModeSetting, type ProbeResult, probeModes } from "./modes.js";
export type { BaseState, FileState, RecordedChange, UnknownBase } from "./recorded.js";
export { type RunOptions, type RunResult, run } from "./run.js";
export { userFolderFiles } from "./user-folder.js";
