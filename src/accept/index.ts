export { type AcceptConflict, type AcceptReport, type AcceptRequest, acceptChanges } from "./accept.js";
export { conflictLine, hunkLines } from "./describe.js";
export { AcceptError, type AcceptErrorCode } from "./errors.js";
export { applyHunks, hunkCount } from "./hunks.js";
export {
  type ConflictHunk,
  type MergeOptions,
  type MergeOutcome,
  mergeChange,
  type Resolution,
} from "./merge.js";
export { type MergeIntoReport, mergeInto, type RebaseReport, rebaseBranch } from "./rebase.js";
export type { Refusal } from "./rules.js";
export { type Settlement, userVersion } from "./settle.js";
export { fileState, LARGE_FILE_BYTES, readUserEntry } from "./state.js";
export { type UndoResult, undoLastAccept } from "./undo.js";
