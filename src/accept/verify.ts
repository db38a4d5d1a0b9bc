/**
 * --verify: what an accept would write, checked in a fresh branch of the user's folder before the folder
 * is touched: lint errors the merged files introduce (language servers, as `umbra lint`), then the test
 * command, sandboxed. Used by the CLI's accept flow and by the engine's accept operation alike.
 */
import { accessRulesFor } from "../agent/tools/files.js";
import type { UmbraConfig } from "../config/config.js";
import { branchLauncher } from "../lsp/branch-launcher.js";
import { LspHost } from "../lsp/index.js";
import { openSandbox } from "../sandbox/index.js";
import { fork } from "../shadow/index.js";
import { type AcceptRequest, acceptChanges } from "./accept.js";
import { conflictLine } from "./describe.js";

/** What --verify found in the fresh branch. */
export interface Verification {
  passed: boolean;
  /** One line each: what failed. */
  problems: string[];
  tests?: { command: string; passed: boolean; exitCode: number | null };
}

/**
 * Builds what the accept would write in a fresh branch of the user's folder and checks it there: lint
 * errors the merged files introduce, then `testCommand` (when given). The user's folder is not touched.
 */
export async function verifyAccept(
  request: AcceptRequest & { config: UmbraConfig },
  testCommand: string | undefined,
  signal?: AbortSignal,
): Promise<Verification> {
  const plan = await acceptChanges({ ...request, dryRun: true });
  const problems = plan.conflicts.map((conflict) => `conflict: ${conflictLine(conflict)}`);
  const env = request.env ?? process.env;
  const branch = await fork(request.root, { env });
  let host: LspHost | undefined;
  try {
    const { launcher, policy } = await branchLauncher(branch, request.config, env);
    host = new LspHost({ config: request.config.lsp, launcher, env });
    const files = branch.files(accessRulesFor(policy, request.root));
    for (const { path, result } of plan.planned) {
      if (result.kind !== "file" || !host.detect(request.root, path)) continue;
      const lint = await host.lint(files, path, { content: (await result.load()).toString("utf8") });
      const errors = [...lint.introduced, ...lint.otherFiles.flatMap((file) => file.introduced)].filter(
        (diag) => diag.severity === "error",
      );
      for (const diag of errors)
        problems.push(`lint: ${diag.path}:${diag.line}:${diag.column}: ${diag.message.split("\n")[0]}`);
    }
    // the fresh branch holds the user's folder: each planned result is written over it as it is
    for (const { path, result } of plan.planned) {
      if (result.kind === "file") branch.write(path, await result.load());
      else if (result.kind === "absent") branch.remove(path);
    }
    await branch.materialize();
    let tests: Verification["tests"];
    if (testCommand) {
      const sandbox = await openSandbox({
        workspace: request.root,
        config: request.config,
        flags: { mode: "workspace-write", network: false },
        env,
      });
      const run = await sandbox.run("sh", ["-c", testCommand], {
        branch,
        cwd: request.root,
        ...(signal ? { signal } : {}),
      });
      const passed = run.exitCode === 0 && !run.timedOut;
      tests = { command: testCommand, passed, exitCode: run.exitCode };
      if (!passed) {
        const tail = `${run.stdout}${run.stderr}`.trim().split("\n").slice(-5).join("\n");
        problems.push(`tests failed (${testCommand}, exit ${run.exitCode ?? "killed"}):\n${tail}`);
      }
    }
    return { passed: problems.length === 0, problems, ...(tests ? { tests } : {}) };
  } finally {
    await host?.shutdown();
    await branch.discard();
  }
}
