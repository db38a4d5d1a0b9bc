import { access } from "node:fs/promises";
import { dirname, join } from "node:path";
import { workspaceDir } from "../config/paths.js";
import { indexLayout } from "../index/layout.js";
import { resolveRoot } from "../workspace/root.js";

/** Help text of every --root option that falls back to discovery. */
export const ROOT_OPTION_HELP =
  "workspace folder (default: the nearest enclosing folder with .git or an umbra index, else the current one)";

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The workspace a command works on. A folder given with --root (or as DIR) is used as it is. Without one,
 * the nearest folder from the current one upwards that holds `.git` (a repository, worktree or submodule)
 * or that umbra has indexed, so a command run from a subfolder finds its repository; else the current
 * folder. Absolute and free of symlinks; WorkspaceError when the folder cannot be used.
 */
export async function commandRoot(
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (given !== undefined) return resolveRoot(given);
  const start = await resolveRoot(".");
  for (let dir = start; ; dir = dirname(dir)) {
    if ((await exists(join(dir, ".git"))) || (await exists(indexLayout(workspaceDir(dir, env)).lexical)))
      return dir;
    if (dirname(dir) === dir) return start;
  }
}
