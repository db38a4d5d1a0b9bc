import { isAbsolute, resolve } from "node:path";
import { readCassette } from "../agent/cassette.js";
import type { AgentEvent, AgentStatus } from "../agent/loop.js";
import { resolveModelSpec } from "../agent/providers.js";
import { runSession } from "../agent/run.js";
import {
  listSessions,
  newSessionId,
  readTranscript,
  SessionNotFoundError,
  type SessionRecord,
  type SessionSummary,
  summarizeTranscript,
  UNFINISHED,
} from "../agent/session.js";
import type { UmbraConfig } from "../config/config.js";
import { workspaceId } from "../config/paths.js";
import { firstApproving, type NetworkRequest } from "../sandbox/index.js";
import type { ParsedParamsOf, SessionDetail, SessionEvent, SessionInfo, SessionState } from "./api.js";
import { type ApprovalQueue, shownRequest } from "./approvals.js";
import { EngineError } from "./errors.js";
import type { EventInput, EventLog } from "./events.js";
import type { Workspace } from "./workspaces.js";

/**
 * Agent sessions held by the engine: started from a front end (the web page, a program with the HTTP
 * token), run in the engine (src/agent/run.ts, in a shadow branch of their own), their events published
 * live (events.ts), their network requests queued for the user (approvals.ts), stopped and resumed on
 * request. What a session did is its transcript (src/agent/session.ts), so the sessions of earlier
 * engines and of `umbra agent` are listed alike.
 */

/** A session this engine runs (or ran, since it started). */
interface Live {
  id: string;
  root: string;
  task: string;
  startedAt: string;
  branch: string;
  state: SessionState;
  message?: string;
  endedAt?: string;
  stop: AbortController;
  done: Promise<void>;
}

/** Whether the session runs now (waiting for an approval is running). */
const active = (entry: Live | undefined): entry is Live =>
  entry !== undefined && (entry.state === "running" || entry.state === "waiting");

/** The longest piece of text one event carries (a command's output comes in pieces anyway). */
const MAX_EVENT_TEXT = 16_000;

const clipText = (text: string): string =>
  text.length > MAX_EVENT_TEXT
    ? `${text.slice(0, MAX_EVENT_TEXT)}… (${text.length - MAX_EVENT_TEXT} more characters)`
    : text;

/** A tool call's input for an event: as it is, or its JSON cut short when long. */
function inputOf(input: unknown): unknown {
  const text = JSON.stringify(input) ?? "";
  return text.length > 2000 ? clipText(text.slice(0, 2000)) : input;
}

function stateOf(status: AgentStatus | string): SessionState {
  if (status === "done") return "done";
  if (status === "cancelled" || status === UNFINISHED) return "stopped";
  return "failed";
}

type EventBody = Omit<EventInput, "workspace" | "session">;

/** The live events of one loop event (none for step boundaries). */
function eventsOf(event: AgentEvent): EventBody[] {
  switch (event.type) {
    case "tool-call":
      return [
        {
          type: "tool",
          phase: "call",
          step: event.step,
          call: event.id,
          name: event.name,
          input: inputOf(event.input),
        },
      ];
    case "tool-result": {
      const result: EventBody = {
        type: "tool",
        phase: "result",
        step: event.step,
        call: event.id,
        name: event.name,
        ok: event.ok,
        summary: event.summary,
      };
      if (event.lintErrors === undefined) return [result];
      return [result, { type: "lint", call: event.id, name: event.name, errors: event.lintErrors }];
    }
    case "usage":
      return [
        {
          type: "usage",
          tokens: { input: event.usage.inputTokens, output: event.usage.outputTokens },
          ...(event.usage.costUsd !== undefined ? { cost: event.usage.costUsd } : {}),
        },
      ];
    case "text":
      return [{ type: "text", text: clipText(event.text) }];
    case "notice":
      return [{ type: "notice", message: event.message }];
    case "retry":
      return [
        {
          type: "notice",
          message: `model call failed (${event.reason}); retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)} s`,
        },
      ];
    default:
      return [];
  }
}

/** The events of a transcript: what a session did so far, for a page that opens it. */
function transcriptEvents(
  records: readonly SessionRecord[],
  workspace: string,
  session: string,
): SessionEvent[] {
  const out: SessionEvent[] = [];
  const at = (record: SessionRecord) => (record as { at?: string }).at ?? "";
  const push = (record: SessionRecord, body: EventBody) =>
    out.push({ ...body, workspace, session, at: at(record) } as SessionEvent);
  for (const record of records) {
    if (record.type === "session") push(record, { type: "session", state: "running" });
    else if (record.type === "tool-call")
      push(record, {
        type: "tool",
        phase: "call",
        step: record.step,
        call: record.id,
        name: record.name,
        input: inputOf(record.input),
      });
    else if (record.type === "tool-result")
      push(record, {
        type: "tool",
        phase: "result",
        step: record.step,
        call: record.id,
        name: record.name,
        ok: record.ok,
        summary: record.output.split("\n")[0] ?? "",
      });
    else if (record.type === "usage")
      push(record, {
        type: "usage",
        tokens: { input: record.total.inputTokens, output: record.total.outputTokens },
        ...(record.total.costUsd !== undefined ? { cost: record.total.costUsd } : {}),
      });
    else if (record.type === "notice") push(record, { type: "notice", message: record.message });
    else if (record.type === "message" && record.role === "assistant" && record.text)
      push(record, { type: "text", text: clipText(record.text) });
    else if (record.type === "end")
      push(record, { type: "session", state: stateOf(record.status), message: record.message });
  }
  return out;
}

/** What starting a session takes (a resume: the session it continues, the task optional). */
type StartRequest = Omit<ParsedParamsOf<"sessionStart">, "root" | "task"> & { task: string; resume?: string };

export class SessionHub {
  private readonly live = new Map<string, Live>();

  constructor(
    private readonly events: EventLog,
    private readonly approvals: ApprovalQueue,
  ) {}

  /** Sessions running now. */
  get running(): number {
    return [...this.live.values()].filter(active).length;
  }

  private publish(entry: Pick<Live, "id" | "root">, body: EventBody): void {
    this.events.publish({ ...body, workspace: workspaceId(entry.root), session: entry.id } as EventInput);
  }

  private setState(entry: Live, state: SessionState, message?: string): void {
    entry.state = state;
    if (message !== undefined) entry.message = message;
    this.publish(entry, {
      type: "session",
      state,
      ...(message !== undefined ? { message } : {}),
      branch: entry.branch,
    });
  }

  /** The configuration of a session: the workspace's, with the model settings and limits asked. */
  private configFor(ws: Workspace, request: StartRequest): UmbraConfig {
    const config = ws.config;
    const given = { ...(request.model ?? {}), maxSteps: request.maxSteps };
    const overrides = Object.fromEntries(
      Object.entries(given).filter(([, value]) => value !== undefined),
    ) as Partial<UmbraConfig["agent"]>;
    return { ...config, agent: { ...config.agent, ...overrides } };
  }

  /** The cassette asked for, checked now (a bad one is the caller's error, before any session starts). */
  private cassetteOf(ws: Workspace, cassette: string | undefined): string | undefined {
    if (cassette === undefined) return undefined;
    const file = isAbsolute(cassette) ? cassette : resolve(ws.root, cassette);
    readCassette(file);
    return file;
  }

  async start(ws: Workspace, request: StartRequest): Promise<{ id: string }> {
    const config = this.configFor(ws, request);
    const replay = this.cassetteOf(ws, request.cassette);
    // a model that cannot be called is said now, not as a failed session later
    if (!replay) resolveModelSpec(config.agent, ws.env);
    const id = newSessionId();
    const entry: Live = {
      id,
      root: ws.root,
      task: request.task,
      startedAt: new Date().toISOString(),
      branch: "",
      state: "running",
      stop: new AbortController(),
      done: Promise.resolve(),
    };
    this.live.set(id, entry);
    const claims: string[] = [];
    const claim = async (branch: string) => {
      claims.push(branch);
      await ws.claim(branch, id);
    };
    const asked = async (request: NetworkRequest) => {
      if (entry.stop.signal.aborted) return false;
      this.setState(entry, "waiting");
      const approved = await this.approvals.ask({
        session: id,
        root: ws.root,
        branch: entry.branch,
        ...shownRequest(request),
      });
      if (entry.state === "waiting" && this.approvals.waiting(id) === 0) this.setState(entry, "running");
      return approved;
    };
    this.setState(entry, "running");
    entry.done = (async () => {
      try {
        if (request.resume) {
          const earlier = (await readTranscript(ws.root, request.resume, ws.env)).find(
            (r) => r.type === "session",
          );
          if (earlier?.type === "session" && earlier.branch) await claim(earlier.branch);
        }
        const host = await ws.lsp();
        const result = await runSession({
          root: ws.root,
          task: request.task,
          config,
          env: ws.env,
          id,
          lsp: host ?? null,
          approver: firstApproving(ws.allowlist(), asked),
          signal: entry.stop.signal,
          ...(replay ? { replay } : {}),
          ...(request.resume ? { resume: request.resume } : {}),
          onStart: ({ branch, task }) => {
            entry.branch = branch;
            entry.task = task;
            if (!claims.includes(branch)) void claim(branch);
            this.setState(entry, "running");
          },
          onEvent: (event) => {
            for (const body of eventsOf(event)) this.publish(entry, body);
          },
          onOutput: (stream, chunk) => this.publish(entry, { type: "output", stream, text: clipText(chunk) }),
          onWarning: (message) => this.publish(entry, { type: "notice", message }),
        });
        entry.endedAt = new Date().toISOString();
        this.setState(entry, stateOf(result.outcome.status), result.outcome.message);
      } catch (error) {
        entry.endedAt = new Date().toISOString();
        this.setState(
          entry,
          entry.stop.signal.aborted ? "stopped" : "failed",
          (error as Error).message.split("\n")[0] ?? "",
        );
      } finally {
        this.approvals.drop(id);
        for (const branch of claims) ws.unclaim(branch, id);
      }
    })();
    return { id };
  }

  async resume(ws: Workspace, p: ParsedParamsOf<"sessionResume">): Promise<{ id: string }> {
    const found = this.live.get(p.session);
    if (active(found) && found.root === ws.root)
      throw new EngineError("BAD_REQUEST", `session ${p.session} is running: stop it first`);
    await this.records(ws, p.session);
    const { root: _root, session, task, ...rest } = p;
    return this.start(ws, { ...rest, task: task?.trim() ?? "", resume: session });
  }

  async stop(ws: Workspace, id: string): Promise<SessionInfo> {
    const entry = this.live.get(id);
    if (!active(entry) || entry.root !== ws.root) {
      await this.records(ws, id);
      throw new EngineError("BAD_REQUEST", `session ${id} is not running in this engine`);
    }
    entry.stop.abort();
    this.approvals.drop(id);
    await entry.done;
    return this.get(ws, id);
  }

  private async records(ws: Workspace, id: string): Promise<SessionRecord[]> {
    try {
      return await readTranscript(ws.root, id, ws.env);
    } catch (error) {
      if (error instanceof SessionNotFoundError)
        throw new EngineError(
          "NOT_FOUND",
          `no session ${id} in this workspace (GET .../sessions lists them)`,
        );
      throw error;
    }
  }

  /** A transcript's summary, with what this engine knows of the session now. */
  private info(summary: SessionSummary | undefined, entry: Live | undefined): SessionInfo {
    const usage = summary?.usage;
    // this engine's word on its own sessions; the transcript's on the others
    const state = entry ? entry.state : stateOf(summary?.status ?? UNFINISHED);
    const message = entry?.message ?? summary?.message;
    const endedAt = entry?.endedAt ?? summary?.endedAt;
    return {
      id: summary?.id ?? entry?.id ?? "",
      task: summary?.task || entry?.task || "",
      state,
      branch: summary?.branch ?? entry?.branch ?? "",
      model: summary?.model ?? "",
      startedAt: summary?.startedAt ?? entry?.startedAt ?? "",
      ...(endedAt ? { endedAt } : {}),
      ...(message !== undefined ? { message } : {}),
      steps: summary?.steps ?? 0,
      tokens: { input: usage?.inputTokens ?? 0, output: usage?.outputTokens ?? 0 },
      ...(usage?.costUsd !== undefined ? { cost: usage.costUsd } : {}),
      toolCalls: summary?.toolCalls ?? 0,
      changedFiles: summary?.changedFiles ?? [],
      ...(summary?.resumedFrom ? { resumedFrom: summary.resumedFrom } : {}),
      live: active(entry),
    };
  }

  /** The workspace's sessions, newest first: this engine's and the stored ones. */
  async list(ws: Workspace): Promise<SessionInfo[]> {
    const stored = await listSessions(ws.root, ws.env);
    const known = new Set(stored.map((summary) => summary.id));
    const starting = [...this.live.values()].filter(
      (entry) => entry.root === ws.root && !known.has(entry.id),
    );
    return [
      ...starting.map((entry) => this.info(undefined, entry)),
      ...stored.map((summary) => this.info(summary, this.live.get(summary.id))),
    ];
  }

  async get(ws: Workspace, id: string): Promise<SessionDetail> {
    const entry = this.live.get(id);
    const records = await this.records(ws, id).catch((error: unknown) => {
      // a session that has not written its first line yet
      if (entry && entry.root === ws.root) return [] as SessionRecord[];
      throw error;
    });
    const summary =
      records.length > 0 ? summarizeTranscript(id, "", records, entry?.startedAt ?? "") : undefined;
    return {
      ...this.info(summary, entry?.root === ws.root ? entry : undefined),
      events: transcriptEvents(records, workspaceId(ws.root), id),
    };
  }

  /** Stops every running session and waits for them (their transcripts end, their branches are kept). */
  async close(): Promise<void> {
    for (const entry of this.live.values()) entry.stop.abort();
    await Promise.all([...this.live.values()].map((entry) => entry.done));
  }
}
