import { mergeInto } from "../accept/index.js";
import type { UmbraConfig } from "../config/config.js";
import { openSandbox, type WorkspaceSandbox } from "../sandbox/index.js";
import { type Branch, fork, type RecordedChange } from "../shadow/index.js";
import { readIfRegular } from "../workspace/rooted.js";
import type { EvalTask } from "./task.js";

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
  signal?: AbortSignal;
}

/** Runs `command` sandboxed in `branch` (its overrides written first). */
async function runTestCommand(
  branch: Branch,
  workspace: string,
  command: string,
  sandbox: WorkspaceSandbox,
  options: Pick<GradeOptions, "signal" | "testTimeoutMs">,
): Promise<TestOutcome> {
  await branch.materialize();
  const result = await sandbox.run("sh", ["-c", command], {
    branch,
    cwd: workspace,
    ...(options.testTimeoutMs ? { timeoutMs: options.testTimeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
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
 * never written): a fresh shadow branch gets the changes, merged three ways like any accept (base, the
 * agent's, what the branch holds; the agent's side wins where they overlap, since nobody else works on
 * the task's folder), every visible test file is restored to its
 * original content (so editing the tests cannot help), the visible tests run, then the hidden test files
 * are written over the branch and the hidden tests run. Both runs are sandboxed, without network.
 */
export async function gradeChanges(
  task: EvalTask,
  workspace: string,
  changes: readonly RecordedChange[],
  options: GradeOptions,
): Promise<Grade> {
  const started = performance.now();
  const branch = await fork(workspace, { ...(options.env ? { env: options.env } : {}) });
  try {
    const theirs = new Map(changes.map((change) => [change.path, "theirs" as const]));
    await mergeInto(branch, changes, (path) => branch.fileState(path), theirs);
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
    const sandbox = await openSandbox({
      workspace,
      config: options.config,
      flags: { mode: "workspace-write", network: false },
      ...(options.env ? { env: options.env } : {}),
    });
    const setupMs = Math.round(performance.now() - started);
    const visible = await runTestCommand(branch, workspace, task.visible.command, sandbox, options);
    for (const [path, content] of Object.entries(task.hidden.files)) branch.write(path, content);
    const hidden = await runTestCommand(branch, workspace, task.hidden.command, sandbox, options);
    return { visible, hidden, testsEdited: testsEdited.sort(), setupMs };
  } finally {
    await branch.discard();
  }
}
