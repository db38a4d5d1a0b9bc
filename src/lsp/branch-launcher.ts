import type { Branch } from "../shadow/index.js";
import type { Launcher } from "./types.js";

/**
 * Starts language servers inside a shadow branch, mounted at the workspace's own path: the server sees
 * the user's files (and the branch's own layer), and whatever it writes (caches, build info, clangd's
 * index) lands in the branch, never in the user's folder.
 */
export function branchLauncher(branch: Branch): Launcher {
  return (spec) => branch.spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: "pipe" });
}
