import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import type { UmbraConfig } from "../config/config.js";
import { loadAdminPolicy, prepareSandbox, resolvePolicy } from "../sandbox/index.js";
import type { Branch } from "../shadow/index.js";
import type { Launcher } from "./types.js";

/** umbra's installation: dist/lsp/ (or src/lsp/) is two levels below it. */
const PACKAGE_ROOT = resolve(import.meta.dirname, "..", "..");

/** The helper's report descriptor (see src/sandbox/linux.ts); drained so the helper never blocks on it. */
const REPORT_FD = 4;

/**
 * Per-user caches that servers must be able to write or they quietly stop answering (gopls keeps its
 * type-checking cache in `~/.cache/gopls`; without it every diagnostic comes back empty).
 */
async function serverCaches(env: NodeJS.ProcessEnv): Promise<string[]> {
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  const dirs = [join(cacheHome, "gopls"), join(cacheHome, "clangd")];
  await Promise.all(dirs.map((dir) => mkdir(dir, { recursive: true }).catch(() => undefined)));
  return dirs;
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
): Promise<{ launcher: Launcher; warnings: string[] }> {
  const { policy, warnings } = await resolvePolicy({
    workspace: branch.workspaceRoot,
    config: config.sandbox,
    flags: {
      mode: "workspace-write",
      network: false,
      writableRoots: await serverCaches(process.env),
      limits: { cpuSeconds: 0, timeoutMs: 0 },
    },
    admin: await loadAdminPolicy(),
    walk: config.index.excludeDirs ? { excludeDirs: config.index.excludeDirs } : {},
  });
  // The servers ship in umbra's own node_modules, which must stay readable even when umbra is installed
  // below /tmp (the sandbox gives commands a private /tmp).
  const sandbox = await prepareSandbox({ ...policy, readableRoots: [PACKAGE_ROOT] }, { branch });
  const launcher: Launcher = (spec) => {
    const child = sandbox.spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env });
    (child.stdio[REPORT_FD] as Readable | null | undefined)?.resume();
    return child;
  };
  return { launcher, warnings };
}
