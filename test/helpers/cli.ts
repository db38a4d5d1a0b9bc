import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scaled } from "./wait.js";

/** A command still running after this long is killed (a hang; scaled on a slow machine). */
const CLI_TIMEOUT_MS = scaled(120_000);

/** The built command line (npm test builds dist/ before running the tests). */
export const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Fails a suite early, with the fix, when dist/ has not been built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
}

/** Runs `umbra ARGS` (from the folder `cwd`, default this process's) and waits for it, blocking this process. */
export function umbraSync(env: NodeJS.ProcessEnv, args: string[], input?: string, cwd?: string): CliOutcome {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env,
    input,
    cwd,
    encoding: "utf8",
    timeout: CLI_TIMEOUT_MS,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * `umbra run --root ROOT --shadow --keep --json -- sh -c SCRIPT` (an agent's command in a kept branch):
 * the outcome, and the branch's id when it was made.
 */
export function keptBranch(
  env: NodeJS.ProcessEnv,
  root: string,
  script: string,
): CliOutcome & { id: string | undefined } {
  const made = umbraSync(env, [
    "run",
    "--root",
    root,
    "--shadow",
    "--keep",
    "--json",
    "--",
    "sh",
    "-c",
    script,
  ]);
  const id =
    made.code === 0 ? (JSON.parse(made.stdout) as { branch?: { id: string } }).branch?.id : undefined;
  return { ...made, id };
}

/** Runs `umbra ARGS` without blocking the event loop (for tests that serve something from this process). */
export function umbraAsync(env: NodeJS.ProcessEnv, args: string[], input = ""): Promise<CliOutcome> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env, encoding: "utf8", timeout: CLI_TIMEOUT_MS, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        done({ code: child.exitCode ?? code, stdout, stderr });
      },
    );
    child.stdin?.end(input);
  });
}
