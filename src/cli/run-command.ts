import { constants } from "node:os";
import type { Command } from "commander";
import { networkAllowlist } from "../config/network-rules.js";
import {
  type AdminPolicy,
  type Approver,
  adminForbidsNetwork,
  allowlistApprover,
  alwaysApprove,
  backendFor,
  droppedEnvNames,
  firstApproving,
  formatGitCheck,
  formatNotes,
  loadAdminPolicy,
  openSandbox,
  type PolicyFlags,
  type SandboxMode,
  type SandboxResult,
  sandboxSupport,
  terminalApprover,
  type WorkspaceRun,
} from "../sandbox/index.js";
import { fork } from "../shadow/index.js";
import { shownPath } from "../workspace/errors.js";
import { resolveRoot } from "../workspace/root.js";
import { UsageError } from "./errors.js";
import { commandRoot } from "./root.js";
import { configFor, printJson, readStdin } from "./shared.js";

interface RunFlags {
  root?: string;
  net?: boolean;
  yes?: boolean;
  shadow?: boolean;
  keep?: boolean;
  json?: boolean;
  readOnly?: boolean;
  fullAccess?: boolean;
  timeout?: string;
  unsandboxed?: boolean;
}

/** The command cannot run sandboxed on this machine: exit 1 with what is missing. */
class SandboxUnavailableError extends Error {
  override name = "SandboxUnavailableError";
}

/** Network access was asked for and not approved: exit 1, the command is not run. */
class NotApprovedError extends Error {
  override name = "NotApprovedError";
}

/** Exit status of `umbra run`: the command's own; 128+N when killed by signal N; 124 on time-out. */
export function exitStatusOf(
  result: Pick<SandboxResult, "exitCode" | "signal" | "timedOut" | "cancelled">,
): number {
  if (result.timedOut) return 124;
  if (result.exitCode !== null) return result.exitCode;
  if (result.cancelled) return 130;
  const number = result.signal ? constants.signals[result.signal] : undefined;
  return number ? 128 + number : 1;
}

function parseTimeout(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout must be a positive number of seconds, not ${JSON.stringify(text)}`);
  }
  return Math.round(seconds * 1000);
}

function modeOf(flags: RunFlags): SandboxMode | undefined {
  if (flags.readOnly && flags.fullAccess)
    throw new UsageError("--read-only and --full-access exclude each other");
  if (flags.readOnly) return "read-only";
  if (flags.fullAccess) return "full-access";
  return undefined;
}

/** Decides network access: the admin policy, then --yes, the configured allowlist, the terminal. */
async function approveNetwork(
  flags: RunFlags,
  admin: AdminPolicy | undefined,
  allowCommands: readonly string[],
  command: string,
  args: string[],
): Promise<boolean> {
  if (!flags.net) return false;
  if (adminForbidsNetwork(admin)) {
    process.stderr.write("umbra: network access is forbidden by the admin policy; running without it\n");
    return false;
  }
  const approver: Approver = flags.yes
    ? alwaysApprove()
    : firstApproving(allowlistApprover(allowCommands), terminalApprover());
  return approver({ command, args });
}

/** A Ctrl-C aborts the command (its process tree is killed); a second one exits at once. */
function cancelOnInterrupt(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const first = () => {
    controller.abort();
    process.once("SIGINT", () => process.exit(130));
  };
  const stop = () => controller.abort();
  process.once("SIGINT", first);
  process.once("SIGTERM", stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.removeListener("SIGINT", first);
      process.removeListener("SIGTERM", stop);
    },
  };
}

interface BranchReport {
  id: string;
  kept: boolean;
  changes: { path: string; kind: string }[];
}

export function registerRun(program: Command): void {
  program
    .command("run")
    .description(
      "run a command in the sandbox with --root as its working directory and writable root; exits with the command's status",
    )
    .argument("<command...>", "the command and its arguments (put them after --)")
    .option(
      "--root <dir>",
      "workspace folder: working directory and writable root (default: the nearest enclosing folder with .git or an umbra index, the command running in the current folder)",
    )
    .option(
      "--net",
      "ask for network access (on the terminal; --yes or sandbox.network.allowCommands approve it)",
    )
    .option("--yes", "approve network access without asking")
    .option("--shadow", "run in a throwaway shadow branch: the folder is not changed; prints what changed")
    .option("--keep", "with --shadow: keep the branch and print its id (see `umbra shadow diff`)")
    .option(
      "--json",
      "print {exitCode, signal, timedOut, stdout, stderr, durationMs, notes, branch?} instead of streaming",
    )
    .option("--read-only", "nothing is writable but /tmp")
    .option("--full-access", "no filesystem or network restriction (explicit only)")
    .option(
      "--timeout <seconds>",
      "stop the command after this many seconds (default: sandbox.limits.timeoutMs)",
    )
    .option("--unsandboxed", "run WITHOUT the sandbox (prints a warning)")
    .action(async (words: string[], flags: RunFlags) => {
      const [command, ...args] = words;
      if (command === undefined || command === "") throw new UsageError("give the command to run after --");
      if (flags.keep && !flags.shadow) throw new UsageError("--keep goes with --shadow");
      const mode = modeOf(flags);
      const timeoutMs = parseTimeout(flags.timeout);
      const root = await commandRoot(flags.root);
      const cwd = flags.root === undefined ? await resolveRoot(".") : root;
      const config = configFor(root);
      const admin = await loadAdminPolicy();

      if (flags.unsandboxed && flags.shadow)
        throw new UsageError(
          "--shadow shows the branch through the sandbox: it cannot go with --unsandboxed",
        );
      if (flags.unsandboxed) {
        process.stderr.write(
          "umbra: warning: running WITHOUT the sandbox: the command can read and change anything\n",
        );
      } else if (backendFor({}) === "linux" && mode !== "full-access") {
        // full-access needs less of the kernel (no Landlock): runSandboxed itself says what is missing.
        const support = await sandboxSupport();
        if (!support.ok) {
          const missing = support.missing.length ? support.missing.join("; ") : "unknown reason";
          throw new SandboxUnavailableError(
            `the sandbox cannot run on this machine (missing: ${missing}); use --unsandboxed to run without it`,
          );
        }
      }

      const network = await approveNetwork(flags, admin, networkAllowlist(root, config), command, args);
      if (flags.net && !network && !adminForbidsNetwork(admin)) {
        throw new NotApprovedError(`network access for ${command} was not approved; the command was not run`);
      }
      // Without --net the mode decides: full-access has the network, the other modes do not.
      const policyFlags: PolicyFlags = flags.net ? { network } : {};
      if (mode) policyFlags.mode = mode;
      if (timeoutMs !== undefined) policyFlags.timeoutMs = timeoutMs;
      const sandbox = await openSandbox({ workspace: root, config, flags: policyFlags, admin });
      for (const warning of sandbox.warnings) process.stderr.write(`umbra: ${warning}\n`);
      if (!flags.unsandboxed)
        process.stderr.write(formatDroppedEnv(droppedEnvNames(process.env, sandbox.policy.envAllowlist)));

      const input = process.stdin.isTTY ? undefined : await readStdin();
      const interrupt = cancelOnInterrupt();
      const branch = flags.shadow ? await fork(root) : undefined;
      if (branch?.warning) process.stderr.write(`umbra: ${branch.warning}\n`);
      let result: WorkspaceRun;
      let report: BranchReport | undefined;
      try {
        result = await sandbox.run(command, args, {
          cwd,
          signal: interrupt.signal,
          ...(input !== undefined ? { input } : {}),
          ...(branch ? { branch } : {}),
          ...(flags.unsandboxed ? { unsandboxed: true } : {}),
          ...(flags.json
            ? {}
            : {
                onStdout: (chunk: string) => void process.stdout.write(chunk),
                onStderr: (chunk: string) => void process.stderr.write(chunk),
              }),
        });
        if (branch) report = { id: branch.id, kept: Boolean(flags.keep), changes: await branch.changes() };
      } finally {
        interrupt.dispose();
        if (branch) {
          if (flags.keep) await branch.close();
          else await branch.discard();
        }
      }

      const { notes, git: gitCheck } = result;
      if (flags.json) {
        printJson({
          exitCode: result.exitCode,
          signal: result.signal,
          timedOut: result.timedOut,
          stdout: result.stdout,
          stderr: result.stderr,
          durationMs: result.durationMs,
          notes,
          ...(report ? { branch: report } : {}),
          ...(gitCheck?.refused.length ? { refused: gitCheck.refused } : {}),
        });
      } else {
        process.stderr.write(formatNotes(notes));
        if (report) process.stderr.write(formatBranchReport(report, root));
      }
      if (gitCheck) process.stderr.write(formatGitCheck(gitCheck));
      process.exitCode = exitStatusOf(result);
    });
}

/** The one line that names (never shows) the variables the sandbox keeps from the command; "" when none. */
export function formatDroppedEnv(names: readonly string[]): string {
  if (names.length === 0) return "";
  return `umbra: environment variables not passed into the sandbox: ${names.join(", ")} (sandbox.env.allow in the configuration passes more)\n`;
}

/** The summary of a shadow run on stderr: what changed in the branch, and whether it was kept. */
export function formatBranchReport(report: BranchReport, root: string): string {
  const letter: Record<string, string> = { added: "A", modified: "M", deleted: "D" };
  const lines = [
    `umbra: shadow branch ${report.id}: ${report.changes.length} change(s)${report.kept ? "" : ", discarded"}`,
    ...report.changes.map((change) => `umbra:   ${letter[change.kind] ?? "?"} ${shownPath(change.path)}`),
  ];
  if (report.kept)
    lines.push(
      `umbra: kept branch ${report.id} (see: umbra shadow diff ${report.id} --root ${root}; accept it with umbra shadow apply ${report.id} --root ${root})`,
    );
  return `${lines.join("\n")}\n`;
}
