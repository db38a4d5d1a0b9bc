/**
 * The shapes of the API's answers that the page reads: the page is a program of its own (built for the
 * browser, apart from the engine), so it names the fields it uses here; the engine's are in
 * src/engine/api.ts and the OpenAPI description, and test/ui/wire.test.ts checks (by type) that each
 * answer of the engine is what the page reads here. Every string in them is untrusted text.
 */

export interface Workspace {
  id: string;
  root: string;
}

export interface Branch {
  id: string;
  label?: string;
  createdAt?: string;
  held: boolean;
  busy: boolean;
  client?: string;
}

export interface DiffAnswer {
  diff: string;
  files: { path: string; kind: string }[];
  unknownBases: string[];
}

export interface ConflictHunk {
  /** The region's first line in the user's file, and how many lines it spans. */
  line: number;
  lines: number;
  /** The first lines of each side, shortened. */
  yours: string;
  agent: string;
}

export interface AcceptAnswer {
  written: boolean;
  applied: string[];
  unchanged: string[];
  conflicts: {
    path: string;
    why: string;
    hunks: ConflictHunk[];
    /** The version of the user's file merged: sent back with a resolution, which is refused if it changed. */
    yoursSha256: string;
    /** A text conflict: the whole file with conflict markers, to edit (absent: settle by choice only). */
    markers?: string;
  }[];
  refused: { path: string; why: string }[];
  message: string;
  confirmed: boolean;
  discarded: boolean;
  /** With verify: what the check in a fresh branch found (nothing was written when it did not pass). */
  verification?: {
    passed: boolean;
    problems: string[];
    tests?: { command: string; passed: boolean; exitCode: number | null };
  };
}

/** A diagnostic of a language server (lines 1-based). */
export interface Diagnostic {
  path: string;
  line: number;
  endLine: number;
  severity: "error" | "warning" | "information" | "hint";
  message: string;
}

export interface LintsAnswer {
  /** The diagnostics the branch's edits introduced (not those already there), in its files and their users. */
  introduced: Diagnostic[];
  errors: number;
  /** Some files could not be linted (no server, a timeout): `partialReasons` says why. */
  partial: boolean;
  partialReasons: string[];
}

export type ResolutionChoice = "ours" | "theirs" | "markers" | "edited";

/** How the user settles one conflicting file (the accept's `resolve`); `content` only with edited. */
export interface Resolution {
  path: string;
  choice: ResolutionChoice;
  yoursSha256: string;
  content?: string;
}

export interface UndoAnswer {
  found: boolean;
  restored: string[];
  left: { path: string; why: string }[];
  message: string;
}

export interface SearchHit {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  symbol?: string;
  stale: boolean;
  preview: string;
}

export type SessionState = "running" | "stopped" | "done" | "failed" | "waiting";

export interface SessionSummary {
  id: string;
  task: string;
  state: SessionState;
  /** '' until it has one. */
  branch: string;
  model: string;
  startedAt: string;
  endedAt?: string;
  message?: string;
  steps: number;
  tokens: { input: number; output: number };
  cost?: number;
  toolCalls: number;
  changedFiles: string[];
  resumedFrom?: string;
  live: boolean;
}

/**
 * One event of GET /api/events (`id` increasing), or of a session's events so far (no id). By type:
 * session {state, message?}; tool {phase: call|result, call, name, input?, ok?, summary?}; lint {call,
 * name, errors}; output {stream, text}; usage {tokens, cost?}; approval {approval, state, decision?,
 * command?}; text {text}; notice {message}.
 */
export interface EngineEvent {
  id?: number;
  type: string;
  session: string;
  workspace: string;
  at: string;
  [field: string]: unknown;
}

export interface SessionDetail extends SessionSummary {
  events: EngineEvent[];
}

/** Its command and reason come with control characters escaped by the engine (still untrusted text). */
export interface Approval {
  id: string;
  session: string;
  workspace: string;
  root: string;
  branch: string;
  command: string;
  reason: string;
  /** The sandbox.network.allowCommands entry that would allow it; '' when none may be saved. */
  rule: string;
  askedAt: string;
}

export interface Rule {
  id: string;
  workspace: string;
  root: string;
  rule: string;
  createdAt: string;
}

export interface EvalRun {
  id: string;
  createdAt: string;
  agent: string;
  model: string;
  tasks: number;
  passed: number;
  passRate: number;
}

export interface Comparison {
  a: { agent: string; model: string };
  b: { agent: string; model: string };
  onlyInA: string[];
  onlyInB: string[];
  rows: {
    scope: string;
    paired: number;
    passA: number;
    passB: number;
    /** B's pass rate minus A's over the paired tasks (a fraction). */
    difference: number;
    test: { n: number; b: number; c: number; p: number; method: string };
  }[];
}
