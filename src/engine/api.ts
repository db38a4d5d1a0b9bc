import { z } from "zod";
import type { AcceptReport, RebaseReport, UndoResult } from "../accept/index.js";
import type { Verification } from "../accept/verify.js";
import type { Comparison } from "../eval/compare.js";
import type { IntentKind } from "../index/search/intent.js";
import type { IndexStatus } from "../index/status.js";
import type { Diag, HoverResult, LintResult, ServerStatus, SymbolInfo } from "../lsp/index.js";
import { globSchema } from "../workspace/glob.js";

/**
 * The engine's API: every operation a front end (the CLI, `umbra mcp`, the HTTP API) can ask of the
 * engine, as data. Each operation has a zod schema for its parameters, checked wherever a request
 * enters the engine (the socket, an in-process call), and a result type. Everything a caller sends is
 * untrusted: paths are workspace-relative and resolved by the engine through the file door, never
 * followed out of the workspace.
 *
 * `root` is the workspace (an absolute path). It is chosen by the front end from what the user gave
 * (`--root`, the current directory, or a client's root the user's client declared), never per call by
 * an agent: MCP tools take no root.
 */

const root = z.string().min(1).describe("the workspace: an absolute path");
const path = z.string().min(1).max(4096).describe("a file path relative to the workspace root");
/** A branch id (`shadow list`); absent: the user's own folder, read-only. */
const branch = z.string().min(1).max(200);
const line = z.number().int().min(1).max(10_000_000);

export const searchParams = z.object({
  root,
  query: z.string().min(1).max(100_000),
  limit: z.number().int().min(1).max(200).default(10),
  path: globSchema.optional().describe("only paths matching this glob"),
  lang: z.string().max(100).optional(),
  /** Build the index first when the workspace has none (MCP); without it, a missing index is an error (CLI). */
  build: z.boolean().default(false),
});

export const grepParams = z.object({
  root,
  branch: branch.optional(),
  pattern: z.string().min(1).max(10_000),
  fixed: z.boolean().default(false),
  ignoreCase: z.boolean().default(false),
  path: z.string().max(1000).optional().describe("only below this folder"),
  limit: z.number().int().min(1).max(1_000_000).default(200),
});

export const readFileParams = z.object({
  root,
  branch: branch.optional(),
  path,
  startLine: line.optional(),
  endLine: line.optional(),
});

export const listFilesParams = z.object({
  root,
  branch: branch.optional(),
  path: z.string().max(4096).default("").describe("a folder relative to the workspace root; '' for the root"),
  depth: z.number().int().min(1).max(6).default(3).describe("how many folder levels to descend"),
});

export const branchCreateParams = z.object({ root, label: z.string().max(200).optional() });
export const branchParams = z.object({ root, branch });
export const branchListParams = z.object({ root });

export const editParams = z.object({
  root,
  branch,
  path,
  search: z.string().max(10_000_000),
  replace: z.string().max(10_000_000),
  replaceAll: z.boolean().default(false),
});

export const applyPatchParams = z.object({ root, branch, patch: z.string().min(1).max(10_000_000) });

export const writeFileParams = z.object({ root, branch, path, content: z.string().max(64 * 1024 * 1024) });

export const lintsParams = z.object({ root, branch, path: path.optional() });

export const positionParams = z.object({
  root,
  branch: branch.optional(),
  path,
  line,
  column: z.number().int().min(1).max(1_000_000).optional(),
  symbol: z.string().max(1000).optional().describe("the name on that line (instead of a column)"),
});

export const documentSymbolsParams = z.object({ root, branch: branch.optional(), path });

export const runParams = z.object({
  root,
  branch,
  command: z.string().min(1).max(100_000),
  timeoutSeconds: z.number().int().min(1).max(1800).optional(),
  network: z.boolean().default(false),
  reason: z.string().max(2000).optional(),
});

/** How the user settles one conflicting file (src/accept/settle.ts). */
export const resolutionParams = z
  .object({
    path,
    choice: z
      .enum(["ours", "theirs", "markers", "edited"])
      .describe(
        "ours: keep the user's side of each conflicting region; theirs: take the agent's; markers: write both with conflict markers, to edit after; edited: write `content` exactly",
      ),
    content: z
      .string()
      .max(16 * 1024 * 1024)
      .optional()
      .describe("with edited (only): the file's new text, written as UTF-8 exactly"),
    yoursSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "a SHA-256 in hex, as the conflict's yoursSha256")
      .optional()
      .describe(
        "the conflict's yoursSha256 (the user's file as merged): the accept is refused, nothing written, when the file changed since; required with edited",
      ),
  })
  .strict()
  .refine((r) => (r.choice === "edited") === (r.content !== undefined), {
    message: "content goes with choice edited, and only with it",
  })
  .refine((r) => r.choice !== "edited" || r.yoursSha256 !== undefined, {
    message: "choice edited needs the conflict's yoursSha256",
  });
export type ResolutionParams = z.infer<typeof resolutionParams>;

export const acceptParams = z.object({
  root,
  branch,
  files: z.array(path).max(100_000).optional(),
  hunks: z
    .array(z.number().int().min(1).max(1_000_000))
    .min(1)
    .max(100_000)
    .optional()
    .describe("with exactly one file in `files`: only these hunks of it, numbered from 1 as in its diff"),
  resolve: z
    .array(resolutionParams)
    .min(1)
    .max(10_000)
    .optional()
    .describe(
      "how to settle conflicting files, one entry per file (a path that does not conflict is refused, nothing written)",
    ),
  partial: z.boolean().default(false),
  verify: z
    .union([z.boolean(), z.string().min(1).max(100_000)])
    .optional()
    .describe(
      "before the user's folder is touched, check the result in a fresh branch (lints, then this command, or with true the configured test command); a failure refuses the accept",
    ),
});

export const statusParams = z.object({ root });

/** Takes the workspace's last accept back. Not an MCP tool: only the user asks it (the CLI, the web page). */
export const undoParams = z.object({ root });

export const lintParams = z.object({
  root,
  path,
  /** Lint as if the file held this (nothing is written); absent: the file as it is. */
  content: z
    .string()
    .max(64 * 1024 * 1024)
    .optional(),
});

const sessionId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\w.-]+$/, "a session id (GET .../sessions lists them)");

/**
 * A session's model, over the workspace's `agent` configuration. Only the user (the page, the CLI) may
 * name the endpoint, provider or key variable: a bearer client could otherwise send the code and a key
 * elsewhere (the HTTP API refuses those fields from it).
 */
export const modelSettings = z
  .object({
    provider: z.enum(["openai-compatible", "anthropic"]).optional(),
    model: z.string().min(1).max(200).optional(),
    baseUrl: z.string().url().max(2000).optional(),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,199}$/)
      .optional(),
    temperature: z.number().min(0).max(2).optional(),
  })
  .strict();

export const sessionStartParams = z.object({
  root,
  task: z.string().trim().min(1).max(100_000),
  model: modelSettings.optional(),
  cassette: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe("replay the model from this cassette (a path, relative to the workspace root or absolute)"),
  maxSteps: z.number().int().min(1).max(1000).optional(),
});
export const sessionListParams = z.object({ root });
export const sessionParams = z.object({ root, session: sessionId });
/** Continues a session in a new one: its changes and a briefing of what it did (src/agent/resume.ts). */
export const sessionResumeParams = sessionStartParams.omit({ task: true }).extend({
  session: sessionId,
  task: z.string().max(100_000).optional().describe("a further instruction"),
});

const approvalId = z.string().min(1).max(100);
export const approvalListParams = z.object({});
export const approvalAnswerParams = z.object({
  approval: approvalId,
  decision: z
    .enum(["once", "repository", "deny"])
    .describe("once: this command now; repository: a saved rule for the workspace; deny"),
});
export const ruleListParams = z.object({});
export const ruleDeleteParams = z.object({ rule: z.string().min(1).max(100) });

const evalRunId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\w.-]+$/, "an eval run id (GET .../evals lists them)");
export const evalListParams = z.object({ root });
export const evalRunParams = z.object({ root, run: evalRunId });
export const evalCompareParams = z.object({ root, a: evalRunId, b: evalRunId });

/** Every operation, by name: its parameter schema. */
export const OPERATIONS = {
  search: searchParams,
  grep: grepParams,
  readFile: readFileParams,
  listFiles: listFilesParams,
  branchCreate: branchCreateParams,
  branchList: branchListParams,
  branchDiscard: branchParams,
  edit: editParams,
  applyPatch: applyPatchParams,
  writeFile: writeFileParams,
  lints: lintsParams,
  definition: positionParams,
  references: positionParams,
  hover: positionParams,
  documentSymbols: documentSymbolsParams,
  run: runParams,
  diff: branchParams,
  accept: acceptParams,
  rebase: branchParams,
  status: statusParams,
  lint: lintParams,
  undo: undoParams,
  sessionStart: sessionStartParams,
  sessionList: sessionListParams,
  sessionGet: sessionParams,
  sessionStop: sessionParams,
  sessionResume: sessionResumeParams,
  approvalList: approvalListParams,
  approvalAnswer: approvalAnswerParams,
  ruleList: ruleListParams,
  ruleDelete: ruleDeleteParams,
  evalList: evalListParams,
  evalReport: evalRunParams,
  evalCompare: evalCompareParams,
} as const;

/** The operations of the engine as a whole, not of one workspace (they take no root). */
export const ENGINE_WIDE = ["approvalList", "approvalAnswer", "ruleList", "ruleDelete"] as const;
export type EngineWideName = (typeof ENGINE_WIDE)[number];

/**
 * The operations of the user's views (agent sessions, the approvals queue and its rules, eval runs):
 * never MCP tools (an agent must not answer its own network requests, nor start agents).
 */
export type ViewOperation =
  | "sessionStart"
  | "sessionList"
  | "sessionGet"
  | "sessionStop"
  | "sessionResume"
  | EngineWideName
  | "evalList"
  | "evalReport"
  | "evalCompare";

export type OperationName = keyof typeof OPERATIONS;
export type ParamsOf<N extends OperationName> = z.input<(typeof OPERATIONS)[N]>;
export type ParsedParamsOf<N extends OperationName> = z.output<(typeof OPERATIONS)[N]>;

// ---------------------------------------------------------------------------------------------
// Results. Every result is plain JSON (it crosses the socket). `text` fields, where present, are what a
// model or a terminal reads; the other fields are the same facts as data.

export interface SearchHit {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  symbol?: string;
  /** The definitions of code that start in the hit's lines (symbol paths, file order); absent when none. */
  defines?: string[];
  /** The file changed since it was indexed: the lines may have moved. */
  stale: boolean;
  /** The first lines of the hit, as the file is now (empty when it is gone). */
  preview: string;
}

/** How fresh the index is. */
export interface IndexFreshness {
  /** Whether the engine keeps it fresh (a watcher runs). */
  watched: boolean;
  /** When the last sync ended (ISO time), if known. */
  lastSync?: string;
  /** A sync is running now. */
  syncing: boolean;
  files: number;
  chunks: number;
}

export interface SearchResult {
  hits: SearchHit[];
  index: IndexFreshness;
  /** What the query was read as, which decides how it was ranked (see src/index/search/intent.ts). */
  intent: IntentKind;
}

export interface GrepResult {
  matches: { path: string; line: number; text: string }[];
  truncated: boolean;
}

/**
 * What a file or navigation tool did, in the words a model reads: the same tools as the agent's own
 * (src/agent/tools: one matcher, one door), so that MCP clients and umbra's agent see the same behaviour.
 */
export interface ToolOutcome {
  ok: boolean;
  /** read_file: the lines with numbers; edit: the match used and the lints; on failure: why. */
  text: string;
  /** Files the call changed in the branch. */
  changed?: string[];
  /** Errors the change introduced (the lints reported after an edit). */
  lintErrors?: number;
}

export interface BranchSummary {
  id: string;
  mode?: string;
  createdAt?: string;
  /** What the creating client called it. */
  label?: string;
  /** The engine holds it open now (else it is on disk, from an earlier engine or another process). */
  held: boolean;
  /** Held by another live process (an `umbra agent` session): readable, not writable here. */
  busy: boolean;
  /** The name of the client that made it (MCP clientInfo.name), when this engine made it. */
  client?: string;
}

export interface LintsResult {
  /** Files linted. */
  files: string[];
  /** Diagnostics the branch's edits introduced, in the files and in files that use them. */
  introduced: Diag[];
  errors: number;
  partial: boolean;
  partialReasons: string[];
  text: string;
}

export interface HoverToolResult {
  hover?: HoverResult;
  text: string;
}

export interface SymbolsResult {
  symbols: SymbolInfo[];
  text: string;
}

export interface RunToolResult {
  /** Whether the command ran (not when network access was refused). */
  ran: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** What the sandbox blocked and what would allow it; why network was refused. */
  notes: string[];
  network: boolean;
  text: string;
}

export interface DiffResult {
  diff: string;
  files: { path: string; kind: string }[];
  /** Changed files whose base could not be recorded: left out of the diff. */
  unknownBases: string[];
}

export interface AcceptResult extends Omit<AcceptReport, "planned"> {
  /** The user said yes (or enabled accepts in their own config). */
  confirmed: boolean;
  /** The branch was discarded (all of it is in the user's folder now). */
  discarded: boolean;
  /** With `verify`: what the check in a fresh branch found (nothing was written when it did not pass). */
  verification?: Verification;
}

// ---------------------------------------------------------------------------------------------
// Agent sessions, live events, approvals, eval runs

const sessionState = z.enum(["running", "waiting", "stopped", "done", "failed"]);
export type SessionState = z.infer<typeof sessionState>;

/** One agent session of a workspace: held by this engine now, or stored (a transcript of an earlier one). */
export const sessionInfoSchema = z.object({
  id: z.string(),
  task: z.string(),
  state: sessionState.describe("waiting: running, with a network request in the approvals queue"),
  branch: z.string().describe("the session's shadow branch ('' until it has one)"),
  model: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  message: z.string().optional().describe("why it ended, in words"),
  steps: z.number(),
  tokens: z.object({ input: z.number(), output: z.number() }),
  cost: z.number().optional().describe("US dollars, when agent.price is set"),
  toolCalls: z.number(),
  changedFiles: z.array(z.string()),
  resumedFrom: z.string().optional().describe("the session it continues"),
  live: z.boolean().describe("this engine runs it (else it is an earlier one's, or another process's)"),
});
export type SessionInfo = z.infer<typeof sessionInfoSchema>;

/**
 * What happened in a session (or to an approval): what the agents board shows. (Not Omit<LiveEvent, …>:
 * over a type with an index signature, Omit keeps only the index signature.)
 */
export interface SessionEvent {
  type: "session" | "tool" | "lint" | "output" | "usage" | "approval" | "text" | "notice";
  /** The workspace id (as in GET /api/workspaces). */
  workspace: string;
  session: string;
  at: string;
  [field: string]: unknown;
}

/** A live event, as it happens. Sent over SSE as `event: type`, `id: id`, `data: JSON`. */
export interface LiveEvent extends SessionEvent {
  /** Increasing; the SSE event id (Last-Event-ID replays what came after it). */
  id: number;
}

export interface SessionDetail extends SessionInfo {
  /** What the session did so far, from its transcript (tool calls and results, usage, notices). */
  events: SessionEvent[];
}

/** A network request of an agent's command, waiting for the user. */
export const approvalItemSchema = z.object({
  id: z.string(),
  session: z.string(),
  workspace: z.string().describe("the workspace id"),
  root: z.string(),
  branch: z.string(),
  command: z
    .string()
    .describe("the command line, quoted as it runs, control characters escaped (\\n, \\u202e)"),
  reason: z.string().describe("the agent's reason, control characters escaped"),
  rule: z
    .string()
    .describe(
      "the sandbox.network.allowCommands entry that would allow it; '' when the command holds control characters (no rule is offered)",
    ),
  askedAt: z.string(),
});
export type ApprovalItem = z.infer<typeof approvalItemSchema>;

/** A network rule the user saved for a workspace (in the data directory, never in the workspace). */
export const savedRuleSchema = z.object({
  id: z.string(),
  workspace: z.string(),
  root: z.string(),
  rule: z.string().describe("an allowCommands entry: a command name or a glob over the command line"),
  createdAt: z.string(),
});
export type SavedRule = z.infer<typeof savedRuleSchema>;

/** A stored eval run (written by `umbra eval` under the workspace's data folder). */
export const evalRunInfoSchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  agent: z.string(),
  model: z.string(),
  tasks: z.number(),
  passed: z.number(),
  passRate: z.number(),
});
export type EvalRunInfo = z.infer<typeof evalRunInfoSchema>;

const started = z.object({ id: z.string().describe("the new session's id") });

/** The results described in the OpenAPI document (the others are TypeScript types only). */
export const RESULT_SCHEMAS: Partial<Record<OperationName, z.ZodTypeAny>> = {
  sessionStart: started,
  sessionResume: started,
  sessionList: z.object({ sessions: z.array(sessionInfoSchema) }),
  sessionStop: sessionInfoSchema,
  approvalList: z.object({ approvals: z.array(approvalItemSchema) }),
  approvalAnswer: z.object({
    approval: z.string(),
    decision: z.enum(["once", "repository", "deny"]),
    rule: savedRuleSchema.optional(),
  }),
  ruleList: z.object({ rules: z.array(savedRuleSchema) }),
  ruleDelete: z.object({ deleted: z.string() }),
  evalList: z.object({ runs: z.array(evalRunInfoSchema) }),
};

export type RebaseResult = RebaseReport;

export interface StatusResult {
  root: string;
  /** What `umbra status` shows, plus whether the engine keeps it fresh. */
  index: IndexStatus & { watched: boolean; syncing: boolean };
  branches: BranchSummary[];
  servers: ServerStatus[];
  engine: { pid: number; startedAt: string; clients: number; rssBytes: number };
}

export interface ResultMap {
  search: SearchResult;
  grep: GrepResult;
  readFile: ToolOutcome;
  listFiles: ToolOutcome;
  branchCreate: BranchSummary;
  branchList: { branches: BranchSummary[] };
  branchDiscard: { discarded: string };
  edit: ToolOutcome;
  applyPatch: ToolOutcome;
  writeFile: ToolOutcome;
  lints: LintsResult;
  definition: ToolOutcome;
  references: ToolOutcome;
  hover: HoverToolResult;
  documentSymbols: SymbolsResult;
  run: RunToolResult;
  diff: DiffResult;
  accept: AcceptResult;
  rebase: RebaseResult;
  status: StatusResult;
  lint: LintResult;
  undo: UndoResult;
  sessionStart: { id: string };
  sessionList: { sessions: SessionInfo[] };
  sessionGet: SessionDetail;
  sessionStop: SessionInfo;
  sessionResume: { id: string };
  approvalList: { approvals: ApprovalItem[] };
  approvalAnswer: { approval: string; decision: "once" | "repository" | "deny"; rule?: SavedRule };
  ruleList: { rules: SavedRule[] };
  ruleDelete: { deleted: string };
  evalList: { runs: EvalRunInfo[] };
  /** The HTML report: untrusted text, served sandboxed. */
  evalReport: { html: string };
  evalCompare: Comparison;
}

export type ResultOf<N extends OperationName> = ResultMap[N];

// ---------------------------------------------------------------------------------------------
// What the engine asks of the client that called it (the front end asks its user: MCP elicitation, a
// terminal prompt). A client that cannot ask says so (undefined) for a network request, which then waits
// in the approvals queue while a web page is open to answer it, and is denied otherwise; it answers false
// for an accept, which is not done.

export interface NetworkQuestion {
  command: string;
  reason?: string;
  branch: string;
}

export interface AcceptQuestion {
  branch: string;
  /** The files the accept would write, with what happens to each. */
  summary: string;
  diffstat: { path: string; added: number; removed: number }[];
}

export interface ClientHooks {
  /**
   * The user's answer; `undefined` when this client cannot ask its user (an MCP client without
   * elicitation, an API client): the engine may then ask on the web page (the approvals queue).
   */
  approveNetwork(question: NetworkQuestion): Promise<boolean | undefined>;
  confirmAccept(question: AcceptQuestion): Promise<boolean>;
}

/** Who calls: one connection to the engine (an MCP session, a CLI process). */
export interface Caller {
  /** Unique per connection, made by the engine. */
  id: string;
  /** What the client calls itself (MCP clientInfo.name), shown in branch lists. */
  name: string;
  hooks: ClientHooks;
}

/** How far a long operation is (building the index before the first search: files hashed, chunks embedded). */
export interface Progress {
  message: string;
  done: number;
  total: number;
}

/** What a caller may add to one call: a way to stop it (a command is killed), and where progress goes. */
export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

/** The engine as its front ends see it: one call per operation. */
export interface EngineApi {
  call<N extends OperationName>(name: N, params: ParamsOf<N>, options?: CallOptions): Promise<ResultOf<N>>;
}
