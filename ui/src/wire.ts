/**
 * The shapes of the API's answers that the page reads: the page is a program of its own (built for the
 * browser, apart from the engine), so it names the fields it uses here; the engine's are in
 * src/engine/api.ts and the OpenAPI description. Every string in them is untrusted text.
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
  conflicts: { path: string; why: string; hunks: ConflictHunk[] }[];
  refused: { path: string; why: string }[];
  message: string;
  confirmed: boolean;
  discarded: boolean;
  /** With verify: what the test run in a fresh branch said. */
  verify?: { ok?: boolean; passed?: boolean; text?: string; message?: string; command?: string };
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
  branch?: string;
  startedAt?: string;
  endedAt?: string;
  steps?: number;
  tokens?: { input?: number; output?: number };
  cost?: number;
  toolCalls?: number;
}

/** One event of GET /api/events (and of a session's events so far). */
export interface EngineEvent {
  type: string;
  session?: string;
  workspace?: string;
  at?: string;
  [field: string]: unknown;
}

export interface Approval {
  id: string;
  session?: string;
  workspace?: string;
  branch?: string;
  command: string;
  reason?: string;
  rule?: string;
  askedAt?: string;
}

export interface Rule {
  id: string;
  workspace?: string;
  rule?: string;
  [field: string]: unknown;
}

export interface EvalRun {
  id: string;
  [field: string]: unknown;
}
