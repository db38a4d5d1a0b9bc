/**
 * The sandbox entry point every caller uses (`umbra run`, the agent's run_command, grading in `umbra
 * eval`, language servers, the test run after an accept): resolves the policy of a workspace from the
 * configuration, the caller's flags and the admin policy, then runs commands through runSandboxed (which
 * picks the backend and returns the typed notes). A run in the user's own folder is followed by the git
 * guard, so what a command planted in git metadata is refused whoever ran it.
 */
import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute } from "node:path";
import type { UmbraConfig } from "../config/config.js";
import type { Branch } from "../shadow/branch.js";
import { absentProtectedPaths, appearedPaths } from "./absent-guard.js";
import { checkGitAfterRun, type GitCheck, type GitGuard, moveOutOfFolder } from "./git-guard.js";
import {
  type AdminPolicy,
  cachePaths,
  isAtOrBelow,
  loadAdminPolicy,
  type PolicyFlags,
  resolvePolicy,
} from "./policy.js";
import { backendFor, type PreparedSandbox, prepareSandbox, runSandboxed } from "./run.js";
import type { RunOptions, SandboxPolicy, SandboxRun } from "./types.js";

export interface SandboxRequest {
  /** The workspace (resolved to its real path): the user's folder, or a branch's workspace root. */
  workspace: string;
  config: Pick<UmbraConfig, "sandbox" | "index">;
  /** What the caller decides (mode, network, limits, writable roots); the admin policy still caps it. */
  flags?: PolicyFlags;
  /**
   * For `~`, caches, the data directory and the commands' environment (default: process.env); commands
   * get GOCACHE in the private /tmp when the go build cache is absent or not writable.
   */
  env?: NodeJS.ProcessEnv;
  /** The admin policy when the caller has loaded it already (default: loadAdminPolicy, from `env`). */
  admin?: AdminPolicy;
}

export interface WorkspaceRun extends SandboxRun {
  /** What the git guard refused after a run in the user's own folder (absent in a branch), and the
   * absent protected paths that appeared there (absent-guard.ts). */
  git?: GitCheck;
}

export interface WorkspaceSandbox {
  readonly policy: SandboxPolicy;
  /** One line each: settings that were refused or capped, and why. */
  readonly warnings: readonly string[];
  /** What the git guard watches in the user's folder (workspace-write mode); see git-guard.ts. */
  readonly git?: GitGuard;
  /** Runs `command args`; `timeoutMs` replaces the policy's time limit for this run. */
  run(
    command: string,
    args: readonly string[],
    options?: Omit<RunOptions, "env"> & { timeoutMs?: number },
  ): Promise<WorkspaceRun>;
  /** A sandbox to start long-lived processes in (language servers); `readableRoots` stay readable. */
  prepare(options?: { branch?: Branch; readableRoots?: string[] }): Promise<PreparedSandbox>;
  /** The environment commands start with (before the policy's allowlist filters it). */
  readonly env: NodeJS.ProcessEnv;
}

/** A build cache in the sandbox's private /tmp, for when the user's cannot be written. */
const PRIVATE_GO_CACHE = "/tmp/umbra-go-build";

export async function openSandbox(request: SandboxRequest): Promise<WorkspaceSandbox> {
  const { excludeDirs } = request.config.index;
  let env = request.env ?? process.env;
  // go fails outright without a build cache ("failed to initialize build cache"): on a machine that
  // never ran go the default one does not exist yet, and the sandbox makes only existing caches
  // writable (umbra writes nothing into the home folder). Commands then get a private one.
  const goCache = cachePaths("go", env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), env)[0] ?? "";
  const { policy, warnings, git } = await resolvePolicy({
    workspace: request.workspace,
    config: request.config.sandbox,
    ...(request.flags ? { flags: request.flags } : {}),
    admin: request.admin ?? (await loadAdminPolicy(undefined, env)),
    env,
    walk: excludeDirs ? { excludeDirs } : {},
  });
  const realGoCache = await realpath(goCache).catch(() => goCache);
  if (!policy.writableRoots.some((root) => isAtOrBelow(realGoCache, root)))
    env = { ...env, GOCACHE: PRIVATE_GO_CACHE };
  return {
    policy,
    warnings,
    ...(git ? { git } : {}),
    env,
    async run(command, args, { timeoutMs, ...options } = {}) {
      const limited =
        timeoutMs === undefined ? policy : { ...policy, limits: { ...policy.limits, timeoutMs } };
      const inFolder = !options.branch && !options.unsandboxed;
      // In the user's own folder the helper makes no placeholders (Seatbelt needs none): absent
      // protected paths are listed now, whatever appeared at them is moved out afterwards.
      const absent = inFolder && backendFor(options) === "linux" ? await absentProtectedPaths(policy) : [];
      // the sync points of a branch's recorded base: what the command touches is timed by them
      await options.branch?.syncBases();
      const run = await runSandboxed(limited, command, [...args], { ...options, env }).finally(() =>
        options.branch?.syncBases(),
      );
      if (!inFolder) return run;
      const appeared = await appearedPaths(absent);
      // the folder was writable: what the command planted in git metadata is refused (git-guard.ts)
      if (git) return { ...run, git: await checkGitAfterRun(git, env, appeared) };
      return appeared.length ? { ...run, git: await moveOutOfFolder(policy.workspace, appeared, env) } : run;
    },
    prepare: ({ branch, readableRoots } = {}) =>
      prepareSandbox(readableRoots ? { ...policy, readableRoots } : policy, branch ? { branch } : {}),
  };
}
