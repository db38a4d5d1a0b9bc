import { z } from "zod";
import type { WorkspaceRun } from "../../sandbox/index.js";
import { shownPath } from "../../workspace/errors.js";
import { clip, defineTool, failure, relativize, type ToolContext, type ToolResult } from "./types.js";

const MAX_OUTPUT = 12_000;

const runSchema = z.object({
  command: z.string().min(1).describe("the command line, run with sh -c"),
  timeoutSeconds: z.number().int().min(1).max(1800).optional(),
  network: z.boolean().default(false).describe("ask for network access (needs the user's approval)"),
  reason: z.string().optional().describe("why the command needs the network"),
});

/** A command run in the branch: what the model reads, and the run itself when it ran. */
export interface CommandRun {
  outcome: ToolResult;
  run?: WorkspaceRun;
  network: boolean;
}

/** Runs a command sandboxed in the context's branch (network only when approved). */
export async function runCommand(
  input: z.infer<typeof runSchema>,
  context: ToolContext,
): Promise<CommandRun> {
  const branch = context.branch;
  if (!branch)
    return { outcome: failure("commands run in a branch: make one first", "no branch"), network: false };
  let network = false;
  if (input.network) {
    network = await context.approver({
      command: "sh",
      args: ["-c", input.command],
      ...(input.reason ? { reason: input.reason } : {}),
    });
    if (!network)
      return {
        outcome: failure(
          `network access for \`${input.command}\` was not approved, so the command was not run; work without the network (or run it with network: false)`,
          "network not approved",
        ),
        network,
      };
  }
  // overrides behind a symlink a command planted are dropped, never written through it
  const dropped = await branch.materialize();
  const sandbox = await context.sandbox(network);
  const output = (stream: "stdout" | "stderr") => (chunk: string) => context.onOutput?.(stream, chunk);
  const timeoutMs = input.timeoutSeconds ? input.timeoutSeconds * 1000 : sandbox.policy.limits.timeoutMs;
  let result: WorkspaceRun;
  try {
    result = await sandbox.run("sh", ["-c", input.command], {
      branch,
      cwd: context.root,
      timeoutMs,
      ...(context.signal ? { signal: context.signal } : {}),
      ...(context.onOutput ? { onStdout: output("stdout"), onStderr: output("stderr") } : {}),
    });
  } catch (error) {
    return {
      outcome: failure(`the command could not be started: ${(error as Error).message.split("\n")[0]}`),
      network,
    };
  }
  const status = result.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : result.exitCode !== null
      ? `exit status ${result.exitCode}`
      : `killed by ${result.signal ?? "a signal"}`;
  const parts = [`$ ${input.command}`, status];
  if (result.stdout) parts.push(`stdout:\n${clip(result.stdout, MAX_OUTPUT)}`);
  if (result.stderr) parts.push(`stderr:\n${clip(result.stderr, MAX_OUTPUT)}`);
  if (result.outputTruncated) parts.push("(output was cut by the sandbox's output limit)");
  for (const note of result.notes) parts.push(`sandbox: ${note.message}`);
  for (const { path, reason } of dropped) parts.push(`not written: ${shownPath(path)} (${reason})`);
  const passed = result.exitCode === 0 && !result.timedOut;
  return {
    outcome: {
      ok: passed,
      output: relativize(parts.join("\n"), context.root),
      summary: `${input.command} → ${status}`,
      commandFailed: !passed,
      commandPassed: passed,
    },
    run: result,
    network,
  };
}

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run a shell command (sh -c) in a sandbox, in your branch of the workspace, with the workspace root as the working directory: it sees your edits, and whatever it writes stays in your branch. The sandbox: no network beyond its own private loopback (servers on 127.0.0.1 work; for anything else set network: true and give a reason to ask the user; it is usually denied), the rest of the file system read-only, .git/config, .git/hooks, editor and umbra settings and ignore files read-only, ignored secrets hidden, a private /tmp, a time limit. Use it to run tests, builds and type checks. When the sandbox blocked something the output says which rule and what would allow it.",
  schema: runSchema,
  run: async (input, context) => (await runCommand(input, context)).outcome,
});
