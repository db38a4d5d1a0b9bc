import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { workspaceDir } from "../config/paths.js";
import { PRIVATE_FILE, privateDirSync } from "../config/private.js";
import type { Usage } from "./usage.js";

/** Where a workspace's transcripts live: `<data>/workspaces/<id>/sessions/`. */
export function sessionsDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(workspaceDir(root, env), "sessions");
}

/** A new session id: sortable by time, then random. */
export function newSessionId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")
    .replace("T", "-");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/** One line of a transcript. */
export type SessionRecord =
  | {
      type: "session";
      id: string;
      task: string;
      root: string;
      model: string;
      startedAt: string;
      replay?: string;
      branch?: string;
      /** The session this one continues (`umbra agent --resume`). */
      resumedFrom?: string;
    }
  | { type: "message"; role: "system" | "user" | "assistant"; text: string }
  | { type: "tool-call"; step: number; id: string; name: string; input: unknown }
  | { type: "tool-result"; step: number; id: string; name: string; ok: boolean; output: string }
  | { type: "usage"; step: number; inputTokens: number; outputTokens: number; total: Usage }
  | { type: "notice"; message: string }
  | {
      type: "end";
      status: string;
      message: string;
      usage: Usage;
      changedFiles: string[];
      endedAt: string;
      /** The branch's changes at the end: what a resumed session starts from. */
      diff?: string;
    }
  | {
      type: "apply";
      applied: boolean;
      message: string;
      tests?: { command: string; passed: boolean; exitCode: number | null };
    };

/** Appends a session's records to `<id>.jsonl` as they happen (a crash leaves the transcript so far). */
export class SessionWriter {
  readonly file: string;
  constructor(
    readonly id: string,
    dir: string,
  ) {
    privateDirSync(dir);
    this.file = join(dir, `${id}.jsonl`);
  }

  write(record: SessionRecord): void {
    appendFileSync(this.file, `${JSON.stringify({ ...record, at: new Date().toISOString() })}\n`, {
      mode: PRIVATE_FILE,
    });
  }
}

/** The records of a transcript's text (lines that do not parse, e.g. one cut short by a crash, are skipped). */
export function parseTranscript(text: string): SessionRecord[] {
  const records: SessionRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      records.push(JSON.parse(line) as SessionRecord);
    } catch {
      // a line cut short by a crash
    }
  }
  return records;
}

/** Thrown when a session id names no transcript of the workspace. */
export class SessionNotFoundError extends Error {
  override name = "SessionNotFoundError";
}

/** The records of one session's transcript (lines that do not parse are skipped). */
export async function readTranscript(
  root: string,
  id: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SessionRecord[]> {
  if (!/^[\w.-]+$/.test(id)) throw new SessionNotFoundError(`no session ${JSON.stringify(id)}`);
  const file = join(sessionsDir(root, env), `${id}.jsonl`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new SessionNotFoundError(`no session ${id} in ${root} (see umbra sessions)`);
  }
  return parseTranscript(text);
}

/** A session as `umbra sessions` lists it. */
export interface SessionSummary {
  id: string;
  task: string;
  model: string;
  startedAt: string;
  status: string;
  steps: number;
  toolCalls: number;
  changedFiles: string[];
  applied: boolean | undefined;
  usage: Usage | undefined;
  file: string;
  branch?: string;
  endedAt?: string;
  /** Why it ended, in words. */
  message?: string;
  resumedFrom?: string;
}

/** The status of a session whose transcript has no end (still running, or a crash). */
export const UNFINISHED = "running or interrupted";

/** What a transcript's records say of the session; `startedAt` when it has no start record. */
export function summarizeTranscript(
  id: string,
  file: string,
  records: readonly SessionRecord[],
  startedAt: string,
): SessionSummary {
  const summary: SessionSummary = {
    id,
    task: "",
    model: "",
    startedAt,
    status: UNFINISHED,
    steps: 0,
    toolCalls: 0,
    changedFiles: [],
    applied: undefined,
    usage: undefined,
    file,
  };
  for (const record of records) {
    if (record.type === "session") {
      summary.task = record.task;
      summary.model = record.model;
      summary.startedAt = record.startedAt;
      if (record.branch) summary.branch = record.branch;
      if (record.resumedFrom) summary.resumedFrom = record.resumedFrom;
    } else if (record.type === "usage") {
      summary.steps = Math.max(summary.steps, record.step);
      summary.usage = record.total;
    } else if (record.type === "tool-call") summary.toolCalls++;
    else if (record.type === "end") {
      summary.status = record.status;
      summary.usage = record.usage;
      summary.changedFiles = record.changedFiles;
      summary.endedAt = record.endedAt;
      summary.message = record.message;
    } else if (record.type === "apply") summary.applied = record.applied;
  }
  return summary;
}

/** The workspace's sessions, newest first. */
export async function listSessions(
  root: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SessionSummary[]> {
  const dir = sessionsDir(root, env);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: SessionSummary[] = [];
  for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
    const file = join(dir, name);
    const text = await readFile(file, "utf8").catch(() => "");
    const mtime = (await stat(file).catch(() => undefined))?.mtime.toISOString() ?? "";
    out.push(summarizeTranscript(name.slice(0, -".jsonl".length), file, parseTranscript(text), mtime));
  }
  return out.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
}
