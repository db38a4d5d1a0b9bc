import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModel } from "ai";
import { fileState, LARGE_FILE_BYTES, readUserEntry } from "../accept/index.js";
import type { FetchFunction } from "../agent/providers.js";
import { runSession } from "../agent/run.js";
import type { UmbraConfig } from "../config/config.js";
import { type RecordedChange, removeBranch } from "../shadow/index.js";
import { gradeChanges } from "./grade.js";
import { type EvalTask, materializeStart, taskHash } from "./task.js";
import { classifyFailure, type FailureCategory, readTranscript } from "./taxonomy.js";

export type AgentKind = "oracle" | "noop" | "model";

/** The result of one task: deterministic for a given task, configuration and model answers. */
export interface TaskResult {
  id: string;
  category: string;
  passed: boolean;
  visiblePassed: boolean;
  status: string;
  message: string;
  failure: FailureCategory | null;
  signals: FailureCategory[];
  testsEdited: string[];
  changedFiles: string[];
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  steps: number;
  toolCalls: Record<string, number>;
  hiddenTail: string;
}

/** What changes from run to run (times, transcript locations): kept apart so results files compare equal. */
export interface TaskTiming {
  id: string;
  wallMs: number;
  agentMs: number;
  gradeSetupMs: number;
  visibleTestMs: number;
  hiddenTestMs: number;
  transcript?: string;
  cached: boolean;
}

export interface EvalResults {
  version: 1;
  agent: AgentKind;
  model: string;
  config: string;
  summary: {
    tasks: number;
    passed: number;
    passRate: number;
    visiblePassed: number;
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    byCategory: Record<string, { tasks: number; passed: number; passRate: number }>;
    failures: Partial<Record<FailureCategory, number>>;
  };
  tasks: TaskResult[];
}

export interface EvalOptions {
  tasks: readonly EvalTask[];
  agent: AgentKind;
  config: UmbraConfig;
  env?: NodeJS.ProcessEnv;
  parallel?: number;
  /** Results of finished tasks are cached here (resume); default: none. */
  cacheDir?: string;
  /** Record each task's model exchanges to DIR/<task>.jsonl, or replay them from there. */
  record?: string;
  replay?: string;
  /** A model to use as is (tests). */
  model?: LanguageModel;
  fetch?: FetchFunction;
  /** The model's name for the cache key and reports (default: agent.model of the configuration). */
  modelLabel?: string;
  /** Language servers: off by default in eval (faster, and identical between runs). */
  lsp?: boolean;
  signal?: AbortSignal;
  onTask?: (result: TaskResult, timing: TaskTiming, done: number, total: number) => void;
  onWarning?: (message: string) => void;
}

export function fileNameOf(id: string): string {
  return id.replace(/[^\w.-]+/g, "_");
}

function configKey(options: EvalOptions): string {
  const { agent } = options.config;
  const relevant = {
    agent: options.agent,
    limits: [agent.maxTokens, agent.contextTokens, agent.maxFixups, agent.temperature ?? null],
    sandbox: options.config.sandbox,
    lsp: options.lsp ?? false,
  };
  return createHash("sha256").update(JSON.stringify(relevant)).digest("hex").slice(0, 12);
}

/** The agent's changes to the task's starting repository, plus what the session reported. */
interface AgentRun {
  changes: RecordedChange[];
  /** The session's branch, kept for the changes (removed once graded). */
  branch?: string;
  status: string;
  message: string;
  transcript?: string;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  steps: number;
  toolCalls: Record<string, number>;
}

function fixedAgent(changes: RecordedChange[], message: string): AgentRun {
  return {
    changes,
    status: "done",
    message,
    modelCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    steps: 0,
    toolCalls: {},
  };
}

async function runAgentOn(task: EvalTask, workspace: string, options: EvalOptions): Promise<AgentRun> {
  if (options.agent === "noop") return fixedAgent([], "the no-op agent changes nothing");
  if (options.agent === "oracle") {
    if (!task.solution) return { ...fixedAgent([], "the task has no reference solution"), status: "error" };
    const changes: RecordedChange[] = [];
    for (const [path, content] of Object.entries(task.solution)) {
      // the reference solution starts from the task's repository as it is
      const base = (await readUserEntry(workspace, path, LARGE_FILE_BYTES)).state ?? { kind: "absent" };
      const branch =
        content === null ? ({ kind: "absent" } as const) : fileState(Buffer.from(content), "100644");
      changes.push({ path, base, branch });
    }
    return fixedAgent(changes, "applied the reference solution");
  }
  const name = `${fileNameOf(task.id)}.jsonl`;
  const instruction = `${task.instruction}\n\nThe visible tests run with: ${task.visible.command}`;
  const config: UmbraConfig = {
    ...options.config,
    agent: {
      ...options.config.agent,
      testCommand: task.visible.command,
      maxSteps: task.budget.maxSteps,
      maxTimeMs: task.budget.timeoutMs,
    },
  };
  try {
    const result = await runSession({
      root: workspace,
      task: instruction,
      config,
      ...(options.env ? { env: options.env } : {}),
      ...(options.model ? { model: options.model } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.record
        ? { record: join(options.record, name), cassetteNote: `umbra eval ${task.id}` }
        : {}),
      ...(options.replay ? { replay: join(options.replay, name) } : {}),
      ...(options.lsp ? {} : { lsp: null }),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
      retryBaseMs: options.replay ? 0 : 1000,
    });
    // counted in a Map: the model names the tools, `constructor` or `__proto__` as well
    const counts = new Map<string, number>();
    for (const call of result.outcome.toolCalls) counts.set(call.name, (counts.get(call.name) ?? 0) + 1);
    const toolCalls: Record<string, number> = Object.fromEntries(counts);
    return {
      changes: result.changes,
      branch: result.branch,
      status: result.outcome.status,
      message: result.outcome.message,
      transcript: result.transcript,
      modelCalls: result.outcome.usage.calls,
      inputTokens: result.outcome.usage.inputTokens,
      outputTokens: result.outcome.usage.outputTokens,
      steps: result.outcome.steps,
      toolCalls,
    };
  } catch (error) {
    return {
      ...fixedAgent([], `the agent failed: ${(error as Error).message.split("\n")[0]}`),
      status: "error",
    };
  }
}

/** Runs one task: starting repository in a temporary folder, the agent in its branch, grading in another. */
export async function runTask(
  task: EvalTask,
  options: EvalOptions,
): Promise<{ result: TaskResult; timing: TaskTiming }> {
  const started = performance.now();
  const base = await realpath(await mkdtemp(join(tmpdir(), "umbra-eval-")));
  const workspace = join(base, "repo");
  try {
    await materializeStart(task, workspace);
    const agentStart = performance.now();
    const run = await runAgentOn(task, workspace, options);
    const agentMs = Math.round(performance.now() - agentStart);
    const grade = await gradeChanges(task, workspace, run.changes, {
      config: options.config,
      ...(options.env ? { env: options.env } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (run.branch) await removeBranch(workspace, run.branch, options.env ? { env: options.env } : {});
    const changedFiles = run.changes.map((c) => c.path).sort();
    const passed = grade.hidden.passed;
    const classified = passed
      ? undefined
      : classifyFailure({
          records: run.transcript ? readTranscript(run.transcript) : [],
          status: run.status,
          relevantFiles: Object.keys(task.solution ?? {}),
          changedFiles,
          testsEdited: grade.testsEdited,
        });
    const result: TaskResult = {
      id: task.id,
      category: task.category,
      passed,
      visiblePassed: grade.visible.passed,
      status: run.status,
      message: run.message,
      failure: classified?.category ?? null,
      signals: classified?.signals ?? [],
      testsEdited: grade.testsEdited,
      changedFiles,
      modelCalls: run.modelCalls,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      steps: run.steps,
      toolCalls: run.toolCalls,
      hiddenTail: passed ? "" : grade.hidden.tail.slice(-1500),
    };
    const timing: TaskTiming = {
      id: task.id,
      wallMs: Math.round(performance.now() - started),
      agentMs,
      gradeSetupMs: grade.setupMs,
      visibleTestMs: grade.visible.durationMs,
      hiddenTestMs: grade.hidden.durationMs,
      ...(run.transcript ? { transcript: run.transcript } : {}),
      cached: false,
    };
    return { result, timing };
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

/** Runs every task (at most `parallel` at once), reusing cached results; returns results and timings. */
export async function runEval(
  options: EvalOptions,
): Promise<{ results: EvalResults; timings: TaskTiming[] }> {
  const parallel = Math.max(1, options.parallel ?? 2);
  const model =
    options.modelLabel ??
    (options.agent === "model"
      ? (options.config.agent.model ?? (options.replay ? "replayed" : "model"))
      : options.agent);
  const config = configKey(options);
  if (options.record) await mkdir(options.record, { recursive: true });
  if (options.cacheDir) await mkdir(options.cacheDir, { recursive: true });
  const results: TaskResult[] = new Array(options.tasks.length);
  const timings: TaskTiming[] = new Array(options.tasks.length);
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = next++;
      const task = options.tasks[index];
      if (!task || options.signal?.aborted) return;
      let cacheFile: string | undefined;
      if (options.cacheDir) {
        const key = createHash("sha256")
          .update(`${await taskHash(task)}\0${config}\0${model}\0${options.replay ? "replay" : "live"}`)
          .digest("hex")
          .slice(0, 24);
        cacheFile = join(options.cacheDir, `${fileNameOf(task.id)}-${key}.json`);
        if (existsSync(cacheFile)) {
          const cached = JSON.parse(await readFile(cacheFile, "utf8")) as {
            result: TaskResult;
            timing: TaskTiming;
          };
          results[index] = cached.result;
          timings[index] = { ...cached.timing, cached: true };
          options.onTask?.(cached.result, timings[index], ++done, options.tasks.length);
          continue;
        }
      }
      const { result, timing } = await runTask(task, options);
      if (options.signal?.aborted) return;
      results[index] = result;
      timings[index] = timing;
      if (cacheFile) await writeFile(cacheFile, JSON.stringify({ result, timing }));
      options.onTask?.(result, timing, ++done, options.tasks.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, options.tasks.length) }, worker));
  const finished = results.filter(Boolean);
  return {
    results: summarize(finished, options.agent, model, config),
    timings: timings.filter(Boolean),
  };
}

export function summarize(tasks: TaskResult[], agent: AgentKind, model: string, config: string): EvalResults {
  // a Map: a task set names its categories, `__proto__` or `constructor` as well
  const categories = new Map<string, { tasks: number; passed: number; passRate: number }>();
  const failures: EvalResults["summary"]["failures"] = {};
  for (const task of tasks) {
    const entry = categories.get(task.category) ?? { tasks: 0, passed: 0, passRate: 0 };
    categories.set(task.category, entry);
    entry.tasks++;
    if (task.passed) entry.passed++;
    if (task.failure) failures[task.failure] = (failures[task.failure] ?? 0) + 1;
  }
  for (const entry of categories.values()) entry.passRate = rate(entry.passed, entry.tasks);
  const byCategory: EvalResults["summary"]["byCategory"] = Object.fromEntries(categories);
  const passed = tasks.filter((t) => t.passed).length;
  return {
    version: 1,
    agent,
    model,
    config,
    summary: {
      tasks: tasks.length,
      passed,
      passRate: rate(passed, tasks.length),
      visiblePassed: tasks.filter((t) => t.visiblePassed).length,
      modelCalls: tasks.reduce((n, t) => n + t.modelCalls, 0),
      inputTokens: tasks.reduce((n, t) => n + t.inputTokens, 0),
      outputTokens: tasks.reduce((n, t) => n + t.outputTokens, 0),
      byCategory,
      failures,
    },
    tasks,
  };
}

function rate(passed: number, total: number): number {
  return total === 0 ? 0 : Math.round((passed / total) * 10_000) / 10_000;
}
