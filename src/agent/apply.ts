/** The test command after an accept: run sandboxed in the user's folder. */
import type { UmbraConfig } from "../config/config.js";
import { type GitRefusal, openSandbox } from "../sandbox/index.js";

export interface TestRun {
  command: string;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  notes: string[];
  /** Git metadata the command planted in the folder, moved out of it (see sandbox/git-guard.ts). */
  refused: GitRefusal[];
}

/** Runs the test command sandboxed in the user's folder (after an apply). */
export async function runTests(
  root: string,
  command: string,
  config: UmbraConfig,
  options: {
    env?: NodeJS.ProcessEnv;
    onOutput?: (chunk: string) => void;
    signal?: AbortSignal;
  } = {},
): Promise<TestRun> {
  const sandbox = await openSandbox({
    workspace: root,
    config,
    flags: { mode: "workspace-write", network: false },
    ...(options.env ? { env: options.env } : {}),
  });
  const result = await sandbox.run("sh", ["-c", command], {
    cwd: root,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onOutput ? { onStdout: options.onOutput, onStderr: options.onOutput } : {}),
  });
  const check = result.git;
  return {
    command,
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    output: `${result.stdout}${result.stderr}`,
    notes: [...result.notes.map((note) => note.message), ...(check?.warnings ?? [])],
    refused: check?.refused ?? [],
  };
}
