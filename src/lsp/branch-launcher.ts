import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import type { UmbraConfig } from "../config/config.js";
import { openSandbox, REPORT_FD, type SandboxPolicy } from "../sandbox/index.js";
import type { Branch } from "../shadow/index.js";
import type { Launcher } from "./types.js";

/** umbra's installation: dist/lsp/ (or src/lsp/) is two levels below it. */
const PACKAGE_ROOT = resolve(import.meta.dirname, "..", "..");

/**
 * Per-user caches that servers must be able to write or they quietly stop answering (gopls keeps its
 * type-checking cache in `~/.cache/gopls`; without it every diagnostic comes back empty).
 */
async function serverCaches(env: NodeJS.ProcessEnv): Promise<string[]> {
  const dirs = [join(cacheHome(env), "gopls"), join(cacheHome(env), "clangd")];
  await Promise.all(dirs.map((dir) => mkdir(dir, { recursive: true }).catch(() => undefined)));
  return dirs;
}

function cacheHome(env: NodeJS.ProcessEnv): string {
  return env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)
    ? env.XDG_CACHE_HOME
    : join(env.HOME || homedir(), ".cache");
}

/**
 * Starts language servers inside a shadow branch, mounted at the workspace's own path, confined by the
 * sandbox: no network, ignored files hidden, protected paths read-only, and every write (caches, build
 * info, clangd's index) landing in the branch, never in the user's folder. A server lives for many
 * requests, so the per-command wall-time and CPU limits do not apply to it.
 */
export async function branchLauncher(
  branch: Branch,
  config: Pick<UmbraConfig, "sandbox" | "index">,
  /** The environment the servers start with, for their caches (default: this process's). */
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ launcher: Launcher; policy: SandboxPolicy; warnings: string[] }> {
  const sandbox = await openSandbox({
    workspace: branch.workspaceRoot,
    config,
    flags: {
      mode: "workspace-write",
      network: false,
      writableRoots: await serverCaches(env),
      limits: { cpuSeconds: 0, timeoutMs: 0 },
    },
    env,
  });
  const { policy } = sandbox;
  // the go build cache the sandbox chose (a private one when the user's cannot be written)
  const goCache = sandbox.env.GOCACHE ? { GOCACHE: sandbox.env.GOCACHE } : {};
  // The servers ship in umbra's own node_modules, which must stay readable even when umbra is installed
  // below /tmp (the sandbox gives commands a private /tmp).
  const servers = await sandbox.prepare({ branch, readableRoots: [PACKAGE_ROOT] });
  const launcher: Launcher = (spec) => {
    const child = servers.spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...spec.env, ...goCache },
    });
    // the helper's report, drained so that it never blocks on it (absent under Seatbelt)
    (child.stdio[REPORT_FD] as Readable | null | undefined)?.resume();
    return child;
  };
  return { launcher, policy, warnings: [...sandbox.warnings] };
}
