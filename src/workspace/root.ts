import type { Stats } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { errorCode, WorkspaceError } from "./errors.js";

/** The WorkspaceError for a failure to stat or read the root folder. */
export function rootReadError(root: string, error: unknown): WorkspaceError {
  const code = errorCode(error);
  if (code === "ENOENT" || code === "ENOTDIR") {
    return new WorkspaceError("ENOENT_ROOT", root, `workspace folder does not exist: ${root}`, {
      cause: error,
    });
  }
  if (code === "EACCES" || code === "EPERM") {
    return new WorkspaceError("EACCES_ROOT", root, `permission denied on workspace folder: ${root}`, {
      cause: error,
    });
  }
  const why = code ?? (error instanceof Error ? error.message : String(error));
  return new WorkspaceError("ROOT_UNREADABLE", root, `cannot read workspace folder ${root}: ${why}`, {
    cause: error,
  });
}

/**
 * The absolute, symlink-free path of the workspace folder `root` (relative paths resolve against the
 * current directory). Throws WorkspaceError when it does not exist, is not a folder or cannot be reached.
 */
export async function resolveRoot(root: string): Promise<string> {
  const absolute = resolve(root);
  let info: Stats;
  try {
    info = await stat(absolute);
  } catch (error) {
    throw rootReadError(absolute, error);
  }
  if (!info.isDirectory()) {
    throw new WorkspaceError("NOT_A_DIRECTORY", absolute, `workspace path is not a folder: ${absolute}`);
  }
  try {
    return await realpath(absolute);
  } catch (error) {
    throw rootReadError(absolute, error);
  }
}
