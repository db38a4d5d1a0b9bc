/**
 * File edits for the agent's tools: `applyEdit` (search/replace) and `applyPatch` (unified diff). Both work
 * on strings and write nothing; the caller reads and writes files.
 */
export { applyEdit, type EditCandidate, type EditOptions, type EditResult } from "./edit.js";
export type { MatchStage } from "./match.js";
export {
  applyPatch,
  type HunkLine,
  type ParsedFilePatch,
  type ParsedHunk,
  type PatchFileResult,
  type PatchHunkResult,
  type PatchResult,
  parsePatch,
} from "./patch.js";
