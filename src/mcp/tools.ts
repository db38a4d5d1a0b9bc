import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import {
  OPERATIONS,
  type OperationName,
  type ParamsOf,
  type ResultOf,
  type ViewOperation,
} from "../engine/api.js";
import {
  acceptText,
  branchCreateText,
  branchListText,
  diffText,
  grepText,
  rebaseText,
  searchText,
  statusText,
} from "./texts.js";

/**
 * The MCP tools: one per engine operation (all but `lint`, which the CLI uses, and `undo`, which only the
 * user asks), each a thin adapter.
 * Its input is the operation's parameters without `root` (the session's workspace, never the agent's
 * choice), from the same zod schema the engine checks; its result is the engine's result as
 * structured content plus a text a model reads well.
 */

/** How the sandbox works, for the model: the server's instructions, and referred to by the tools. */
export const INSTRUCTIONS = [
  "umbra gives you a workspace (the user's folder) and copy-on-write branches of it.",
  "Read anywhere with search, grep, read_file and list_files (without `branch`: the user's folder, read-only).",
  "To change anything, make a branch (branch_create) and pass its id as `branch`: edit, apply_patch and",
  "write_file change only the branch, and run executes commands sandboxed inside the branch. The user's",
  "folder is never written except by an accept the user confirms. Commands have no network unless you",
  "ask with network: true and a reason, and the user approves. Protected files (.git/config, git hooks,",
  "editor and umbra settings, ignore files) are read-only; hidden files (those the user's .umbraignore,",
  ".cursorignore or settings hide, e.g. secrets) are invisible to every tool and command. When done:",
  "diff to review, then accept to ask the user to merge the branch into their folder.",
].join(" ");

/** The operations that are tools. */
export type ToolOperation = Exclude<OperationName, "lint" | "undo" | ViewOperation>;

export interface ToolSpec<N extends ToolOperation> {
  /** The MCP tool name (snake_case). */
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** The text content of a result. */
  text: (result: ResultOf<N>) => string;
  /** Parameters the tool sets itself (left out of its input). */
  fixed?: Partial<ParamsOf<N>>;
}

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Changes a branch only: the user's folder is untouched, the branch can be discarded. */
const BRANCH_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

const WHERE_READ =
  "Without `branch` it reads the user's folder (read-only); with `branch` it reads that branch, edits included. " +
  "Hidden files (.umbraignore, .cursorignore, the user's settings) are invisible; git-ignored ones are readable.";
const WHERE_WRITE =
  "Changes only the branch `branch` (from branch_create), never the user's folder. Protected files " +
  "(.git/config, git hooks, editor/umbra settings, ignore files) are read-only and hidden files invisible. " +
  "The result reports the lints the change introduced.";
const POSITION =
  "Position: `path`, 1-based `line`, and either a 1-based `column` or the `symbol` name on that line. " +
  "Without `branch`: the user's folder; with it: the branch's unsaved edits, as the language server sees them.";

/** The text a result carries itself (the agent's tools' words, the lints' and the run's reports). */
function own<N extends ToolOperation>(result: ResultOf<N>): string {
  return (result as { text: string }).text;
}

export const TOOLS: { [N in ToolOperation]: ToolSpec<N> } = {
  search: {
    name: "search",
    title: "Search the code",
    description:
      "Hybrid search (lexical + vector + exact) over the workspace's index: finds code by meaning or by name. " +
      "Each hit has its path, line range, score and a preview as the file is now; `stale` hits come from a " +
      "file that changed since it was indexed. Searches the user's folder (branches are not indexed). " +
      "`path` narrows to a glob, `lang` to a language. The first search of a workspace without an index " +
      "builds it (that one takes longer).",
    annotations: READ,
    text: searchText,
    fixed: { build: true },
  },
  grep: {
    name: "grep",
    title: "Grep",
    description: `Exact or regex search (ripgrep) for \`pattern\`; \`fixed\` for a literal string. ${WHERE_READ}`,
    annotations: READ,
    text: grepText,
  },
  readFile: {
    name: "read_file",
    title: "Read a file",
    description:
      'Reads a file\'s lines with line numbers ("  12| text"); at most 400 lines a call: give ' +
      `startLine/endLine for a range, a cut output says how to read on. ${WHERE_READ} ` +
      "A protected file can be read; a hidden one cannot.",
    annotations: READ,
    text: own<"readFile">,
  },
  listFiles: {
    name: "list_files",
    title: "List files",
    description: `Lists the files below the folder \`path\` (default: the workspace root), \`depth\` levels deep. ${WHERE_READ}`,
    annotations: READ,
    text: own<"listFiles">,
  },
  branchCreate: {
    name: "branch_create",
    title: "Create a branch",
    description:
      "Makes a copy-on-write branch of the user's folder: your own place to edit and run commands. " +
      "Returns its id, which the editing, run, lints, diff and accept tools take as `branch`. " +
      "`label` says what it is for (shown in branch lists). Branches outlive this session until discarded or accepted.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    text: branchCreateText,
  },
  branchList: {
    name: "branch_list",
    title: "List branches",
    description:
      "The workspace's branches: yours, other clients' and agents' (a busy one is read-only here).",
    annotations: READ,
    text: branchListText,
  },
  branchDiscard: {
    name: "branch_discard",
    title: "Discard a branch",
    description:
      "Throws a branch away with all its changes. The user's folder is not touched; what was not accepted is lost.",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    text: (result) => `discarded branch ${result.discarded}`,
  },
  edit: {
    name: "edit",
    title: "Edit a file in a branch",
    description:
      "Replaces the text `search` with `replace` in `path` (`replaceAll` for every occurrence; else it must " +
      "match once; copy it from read_file without the line-number prefix). Small differences in indentation or " +
      "whitespace are tolerated and reported; a failed match says why. An empty `search` on a file that does " +
      `not exist creates it with \`replace\`. ${WHERE_WRITE}`,
    annotations: { ...BRANCH_WRITE, idempotentHint: false },
    text: own<"edit">,
  },
  applyPatch: {
    name: "apply_patch",
    title: "Apply a patch in a branch",
    description:
      "Applies a unified diff (as `git diff` prints it: ---/+++ headers with a/ and b/ prefixes, @@ hunks; " +
      "adds, deletes and several files at once). Hunks whose lines drifted a little are still placed. All or " +
      `nothing: if any file fails, nothing is applied. ${WHERE_WRITE}`,
    annotations: { ...BRANCH_WRITE, idempotentHint: false },
    text: own<"applyPatch">,
  },
  writeFile: {
    name: "write_file",
    title: "Write a file in a branch",
    description: `Writes \`content\` as the whole of \`path\` (created if missing). ${WHERE_WRITE}`,
    annotations: { ...BRANCH_WRITE, idempotentHint: true },
    text: own<"writeFile">,
  },
  lints: {
    name: "lints",
    title: "Lints of a branch's edits",
    description:
      "The diagnostics the branch's edits introduced (not those that were already there), awaited for " +
      "exactly the branch's current version, including errors in other files that use what you changed. " +
      "`path` limits it to one file. Language servers run sandboxed, reading the branch.",
    annotations: READ,
    text: own<"lints">,
  },
  definition: {
    name: "definition",
    title: "Go to definition",
    description: `Where the symbol at a position is defined. ${POSITION}`,
    annotations: READ,
    text: own<"definition">,
  },
  references: {
    name: "references",
    title: "Find references",
    description: `Every use of the symbol at a position. ${POSITION}`,
    annotations: READ,
    text: own<"references">,
  },
  hover: {
    name: "hover",
    title: "Hover",
    description: `The type and documentation of the symbol at a position. ${POSITION}`,
    annotations: READ,
    text: own<"hover">,
  },
  documentSymbols: {
    name: "document_symbols",
    title: "Symbols of a file",
    description: `The outline of a file: its classes, functions, methods, ... with their lines. ${WHERE_READ}`,
    annotations: READ,
    text: own<"documentSymbols">,
  },
  run: {
    name: "run",
    title: "Run a command in a branch's sandbox",
    description:
      "Runs a shell command (sh -c, from the workspace root) in the branch `branch`, inside a kernel sandbox: " +
      "it sees the branch's files and its writes stay in the branch; the user's folder and the rest of the " +
      "system are read-only, protected files read-only, hidden files absent, /tmp private; no network but " +
      "its own loopback (servers on 127.0.0.1 work). Use it for tests, builds, type checks. If the command needs the network (installing " +
      "packages, ...), pass network: true and a `reason`: the user is asked to approve (where this client " +
      "cannot ask, in umbra's web page, while one is open); when they refuse or nobody can answer, " +
      "it does not run and the notes say so. The result has the exit code, " +
      "stdout, stderr and notes on what the sandbox blocked and what would allow it. `timeoutSeconds` bounds it.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    text: own<"run">,
  },
  diff: {
    name: "diff",
    title: "Diff of a branch",
    description:
      "The branch's changes against the user's folder as it was when the branch was made (a git-style diff).",
    annotations: READ,
    text: diffText,
  },
  accept: {
    name: "accept",
    title: "Accept a branch into the user's folder",
    description:
      "Asks the user to merge the branch into their folder (three-way: edits the user made meanwhile are " +
      "kept; overlapping changes are conflicts, left as the user has them). Nothing is written unless the " +
      "user confirms (or enabled accepts in their own settings); when the client cannot ask, nothing is " +
      "accepted and the result says so. `files` accepts only those (`hunks`, with one file: only those " +
      "hunks of it, numbered as in its diff); `partial` writes what merges cleanly " +
      "even when other files conflict. `resolve` settles a conflicting file the way the user chose (ours, " +
      "theirs, markers, or an edited text guarded by the conflict's yoursSha256); a path that does not " +
      "conflict is refused. A fully accepted branch is discarded.",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    text: acceptText,
  },
  rebase: {
    name: "rebase",
    title: "Rebase a branch",
    description:
      "Brings the user's changes since the branch was made into the branch (three-way merge of each file " +
      "both changed), so that diff and accept show only your changes. Changes only the branch.",
    annotations: { ...BRANCH_WRITE, idempotentHint: true },
    text: rebaseText,
  },
  status: {
    name: "status",
    title: "Status",
    description:
      "The workspace, how fresh its index is, the branches, the running language servers and the engine.",
    annotations: READ,
    text: statusText,
  },
};

/**
 * The tool's input schema: the operation's parameters (the same definition the engine checks) without
 * `root` and those the tool sets itself.
 */
export function inputShape(operation: ToolOperation): z.ZodRawShape {
  const left = new Set(["root", ...Object.keys(TOOLS[operation].fixed ?? {})]);
  return Object.fromEntries(Object.entries(OPERATIONS[operation].shape).filter(([key]) => !left.has(key)));
}
