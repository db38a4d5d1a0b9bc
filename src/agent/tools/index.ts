import { applyPatchTool } from "./apply-patch.js";
import { definitionTool } from "./definition.js";
import { editTool } from "./edit.js";
import { lintsTool } from "./lints.js";
import { listFilesTool } from "./list-files.js";
import { readFileTool } from "./read-file.js";
import { referencesTool } from "./references.js";
import { runCommandTool } from "./run-command.js";
import { searchCodeTool } from "./search-code.js";
import type { AgentTool } from "./types.js";

export { lintFeedback } from "./lint-feedback.js";
export type { AgentTool, ToolContext, ToolResult } from "./types.js";

/** Every tool the agent has, in the order they are offered to the model. */
export const ALL_TOOLS: readonly AgentTool[] = [
  listFilesTool,
  searchCodeTool,
  readFileTool,
  editTool,
  applyPatchTool,
  runCommandTool,
  lintsTool,
  definitionTool,
  referencesTool,
];

export {
  applyPatchTool,
  definitionTool,
  editTool,
  lintsTool,
  listFilesTool,
  readFileTool,
  referencesTool,
  runCommandTool,
  searchCodeTool,
};
