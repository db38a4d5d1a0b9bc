export { type AcceptReport, type AcceptRequest, acceptChanges } from "./accept.js";
export { AcceptError, type AcceptErrorCode } from "./errors.js";
export {
  type ConflictHunk,
  type MergeOptions,
  type MergeOutcome,
  mergeChange,
  type Resolution,
} from "./merge.js";
export { protectedName, type Refusal } from "./rules.js";
export { type ScreenOptions, screenDiff } from "./screen.js";
export { type UndoResult, undoLastAccept } from "./undo.js";
