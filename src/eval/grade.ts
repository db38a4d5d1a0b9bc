import type { UmbraConfig } from "../config/config.js";
import { loadAdminPolicy, resolvePolicy, runSandboxed, type SandboxPolicy } from "../sandbox/index.js";
import { type Branch, fork } from "../shadow/index.js";
import { readIfRegular } from "../workspace/rooted.js";
import type { EvalTask } from "./task.js";

/** A change an agent made: path → new content, or null when it deleted the file. */
export interface FileChange {
  path: string;
  content: string | null;
}

export interface TestOutcome {
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  /** The last 4,000 characters of stdout and stderr. */
  tail: string;
  durationMs: number;
}

export interface Grade {
  visible: TestOutcome;
  hidden: TestOutcome;
  /** Test files the agent changed (restored before the tests ran). */
  testsEdited: string[];
  /** Time spent forking the grading branch and writing the changes into it. */
  setupMs: number;
}

export interface GradeOptions {
  config: UmbraConfig;
  env?: NodeJS.ProcessEnv;
  /** Time limit of each test run (default: the sandbox's). */
  testTimeoutMs?: number;
  unsandboxed?: boolean;
  signal?: AbortSignal;
}

async function policyFor(workspace: string, options: GradeOptions): Promise<SandboxPolicy> {
  const { policy } = await resolvePolicy({
    workspace,
    config: options.config.sandbox,
    flags: { mode: "workspace-write", network: false },
    admin: await loadAdminPolicy(),
    ...(options.env ? { env: options.env } : {}),
    walk: options.config.index.excludeDirs ? { excludeDirs: options.config.index.excludeDirs } : {},
  });
  return options.testTimeoutMs
    ? { ...policy, limits: { ...policy.limits, timeoutMs: options.testTimeoutMs } }
    : policy;
}

/** Runs `command` sandboxed in `branch` (its overrides written first). */
export async function runTestCommand(
  branch: Branch,
  workspace: string,
  command: string,
  policy: SandboxPolicy,
  options: Pick<GradeOptions, "unsandboxed" | "signal" | "env">,
): Promise<TestOutcome> {
  await branch.materialize();
  const result = await runSandboxed(policy, "sh", ["-c", command], {
    branch,
    cwd: workspace,
    ...(options.env ? { env: options.env } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.unsandboxed ? { unsandboxed: true } : {}),
  });
  const output = `${result.stdout}${result.stderr}`;
  return {
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    tail: output.length > 4000 ? output.slice(-4000) : output,
    durationMs: Math.round(result.durationMs),
  };
}

/**
 * Grades an agent's changes to a task's starting repository (`workspace`, which holds the start and is
 * never written): a fresh shadow branch gets the changes, every visible test file is restored to its
 * original content (so editing the tests cannot help), the visible tests run, then the hidden test files
 * are written over the branch and the hidden tests run. Both runs are sandboxed, without network.
 */
export async function gradeChanges(
  task: EvalTask,
  workspace: string,
  changes: readonly FileChange[],
  options: GradeOptions,
): Promise<Grade> {
  const started = performance.now();
  const branch = await fork(workspace, { ...(options.env ? { env: options.env } : {}) });
  try {
    for (const change of changes) {
      if (change.content === null) branch.remove(change.path);
      else branch.write(change.path, change.content);
    }
    const testsEdited: string[] = [];
    const protectedFiles = new Set([...task.visible.files, ...Object.keys(task.hidden.files)]);
    for (const path of protectedFiles) {
      // read without following a link the agent's commands may have planted in the task's folder
      const original = await readIfRegular(workspace, path).catch(() => undefined);
      const now = await branch.read(path);
      const changed = original === undefined ? now !== undefined : !now?.equals(original);
      if (changed && changes.some((c) => c.path === path)) testsEdited.push(path);
      if (original === undefined) {
        if (now !== undefined) branch.remove(path);
      } else branch.write(path, original);
    }
    const policy = await policyFor(workspace, options);
    const setupMs = Math.round(performance.now() - started);
    const visible = await runTestCommand(branch, workspace, task.visible.command, policy, options);
    for (const [path, content] of Object.entries(task.hidden.files)) branch.write(path, content);
    const hidden = await runTestCommand(branch, workspace, task.hidden.command, policy, options);
    return { visible, hidden, testsEdited: testsEdited.sort(), setupMs };
  } finally {
    await branch.discard();
  }
}
