import type { LanguageModel } from "ai";
import type { UmbraConfig } from "../config/config.js";
import type { OpenedIndex } from "../index/open.js";
import type { LspHost } from "../lsp/index.js";
import type { Approver } from "../sandbox/index.js";
import { PROTECTED_WORKSPACE_PATHS } from "../sandbox/index.js";
import { type Branch, fork, type RecordedChange } from "../shadow/index.js";
import { type CassetteHeader, readCassette, recordingFetch, replayFetch } from "./cassette.js";
import { createToolContext } from "./context.js";
import { type AgentEvent, type AgentOutcome, runAgent } from "./loop.js";
import { createModel, type FetchFunction, type ModelSpec, resolveModelSpec } from "./providers.js";
import { resumePoint } from "./resume.js";
import { newSessionId, SessionWriter, sessionsDir } from "./session.js";
import type { AgentTool } from "./tools/types.js";

export interface SessionOptions {
  /** The user's folder (absolute, symlink-free). */
  root: string;
  task: string;
  config: UmbraConfig;
  env?: NodeJS.ProcessEnv;
  /** A model to use as is (tests); otherwise one is made from the configuration. */
  model?: LanguageModel;
  /** Replaces the network under the provider (tests). */
  fetch?: FetchFunction;
  /** Write every model exchange to this cassette. */
  record?: string;
  /** Answer every model request from this cassette (no model is called). */
  replay?: string;
  /** With replay: fail on any request that differs from the recording. */
  strict?: boolean;
  /** The note written into a recorded cassette's header. */
  cassetteNote?: string;
  approver?: Approver;
  /** A language-server host to use (tests); null: none. Default: one started in the branch. */
  lsp?: LspHost | null;
  index?: OpenedIndex;
  tools?: readonly AgentTool[];
  onEvent?: (event: AgentEvent) => void;
  /** Called once the session has its branch (before the loop starts). */
  onStart?: (start: { branch: string; task: string }) => void;
  /** Output of the session's commands, as it comes. */
  onOutput?: (stream: "stdout" | "stderr", chunk: string) => void;
  onWarning?: (message: string) => void;
  signal?: AbortSignal;
  retryBaseMs?: number;
  /** Session id (default: a new one). */
  id?: string;
  /** Continue this earlier session: its changes and a briefing of what it did (see resume.ts). */
  resume?: string;
}

export interface SessionResult {
  session: string;
  transcript: string;
  branch: string;
  outcome: AgentOutcome;
  /** What the agent did, as a git-style unified diff from each file's recorded base to the branch. */
  diff: string;
  /**
   * The changed paths with their recorded bases, for the accept (src/accept). They read the branch,
   * which is kept on disk (closed) when there are changes: accept now or later (`umbra sessions apply`),
   * then discard it.
   */
  changes: RecordedChange[];
  /** Replay: requests that differed from the recording. */
  drifts: string[];
}

function modelFor(options: SessionOptions): { model: LanguageModel; label: string; drifts: () => string[] } {
  const env = options.env ?? process.env;
  if (options.model) return { model: options.model, label: "(given)", drifts: () => [] };
  if (options.replay) {
    const cassette = readCassette(options.replay);
    const replay = replayFetch(cassette, {
      ...(options.strict ? { strict: true } : {}),
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    });
    const spec: ModelSpec = {
      provider: cassette.header.provider,
      baseUrl: cassette.header.baseUrl,
      model: cassette.header.model,
      apiKey: "replay",
    };
    return {
      model: createModel(spec, replay.fetch),
      label: `${spec.model} (replayed)`,
      drifts: () => replay.drifts,
    };
  }
  const spec = resolveModelSpec(options.config.agent, env);
  let fetch = options.fetch;
  if (options.record) {
    const header: CassetteHeader = {
      type: "cassette",
      version: 1,
      ...(options.cassetteNote ? { note: options.cassetteNote } : {}),
      provider: spec.provider,
      model: spec.model,
      ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
    };
    fetch = recordingFetch(options.record, header, options.fetch ?? globalThis.fetch);
  }
  return { model: createModel(spec, fetch), label: spec.model, drifts: () => [] };
}

/**
 * Protected paths that the sandbox stands in for while a command runs in a branch, so that it can keep
 * them read-only. The helper makes empty directories (never part of a diff) and removes them after the
 * run; this filter also drops empty files at those names, the stand-ins of older helpers.
 */
const PLACEHOLDER_PATHS = new Set(
  PROTECTED_WORKSPACE_PATHS.map((entry) => entry.path).filter((path) => !path.startsWith(".git/")),
);

async function isSandboxPlaceholder(branch: Branch, change: RecordedChange): Promise<boolean> {
  if (change.base.kind !== "absent" || !PLACEHOLDER_PATHS.has(change.path)) return false;
  const size = await branch.size(change.path).catch(() => undefined);
  return size === undefined || size === 0;
}

/** What an agent did in `branch`: its recorded changes (overrides written first), the sandbox's stand-ins left out. */
export async function agentChanges(branch: Branch): Promise<RecordedChange[]> {
  await branch.materialize();
  const changes: RecordedChange[] = [];
  for (const change of await branch.recordedChanges())
    if (!(await isSandboxPlaceholder(branch, change))) changes.push(change);
  return changes;
}

/**
 * One agent session: forks a branch of the user's folder, runs the loop in it with the tools, writes the
 * transcript, and returns what the agent did (the branch stays on disk when it changed anything, for the
 * accept; the user's folder is never touched here — see src/accept).
 */
export async function runSession(options: SessionOptions): Promise<SessionResult> {
  const env = options.env ?? process.env;
  const { model, label, drifts } = modelFor(options);
  const id = options.id ?? newSessionId();
  const resumed = options.resume
    ? await resumePoint(options.root, options.resume, env, options.onWarning)
    : undefined;
  const task = options.task.trim() || resumed?.task || "";
  const session = new SessionWriter(id, sessionsDir(options.root, env));
  const branch = resumed?.branch ?? (await fork(options.root, { env }));
  if (branch.warning) options.onWarning?.(branch.warning);
  session.write({
    type: "session",
    id,
    task,
    ...(resumed ? { resumedFrom: resumed.from } : {}),
    root: options.root,
    model: label,
    startedAt: new Date().toISOString(),
    branch: branch.id,
    ...(options.replay ? { replay: options.replay } : {}),
  });
  options.onStart?.({ branch: branch.id, task });
  const context = createToolContext({
    branch,
    root: options.root,
    config: options.config,
    env,
    ...(options.approver ? { approver: options.approver } : {}),
    ...(options.lsp !== undefined ? { lsp: options.lsp } : {}),
    ...(options.index ? { index: options.index } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
  });
  let kept = false;
  try {
    const outcome = await runAgent({
      task: resumed ? `${task}\n\n${resumed.briefing}` : task,
      model,
      context,
      // the workspace's own test command is named to the model too: the agent runs it only in its branch
      limits: {
        ...options.config.agent,
        testCommand: options.config.agent.testCommand ?? options.config.agent.workspaceTestCommand,
      },
      session,
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
    });
    // the tools' edits are in-memory overrides until written into the branch's layer: a branch kept
    // for a later accept (`umbra sessions apply`, --resume) must hold them on disk
    const changes = await agentChanges(branch);
    const diff = await branch.diff({}, changes);
    kept = changes.length > 0;
    session.write({
      type: "end",
      status: outcome.status,
      message: outcome.message,
      usage: outcome.usage,
      changedFiles: changes.map((c) => c.path),
      endedAt: new Date().toISOString(),
      diff,
    });
    return {
      session: id,
      transcript: session.file,
      branch: branch.id,
      outcome,
      diff,
      changes,
      drifts: drifts(),
    };
  } catch (error) {
    kept = false;
    throw error;
  } finally {
    await context.close();
    // kept for the accept (now or later) when there is something to accept; else it goes
    if (kept) await branch.close();
    else await branch.discard();
  }
}
