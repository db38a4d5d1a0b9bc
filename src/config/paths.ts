import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { PRIVATE_DIR } from "./private.js";

/** The data directory: `$UMBRA_HOME`, else `$XDG_DATA_HOME/umbra`, else `~/.local/share/umbra`. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.UMBRA_HOME) return env.UMBRA_HOME;
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, "umbra");
  return join(homedir(), ".local", "share", "umbra");
}

/** Stable id of a workspace: a hash of its real (symlink-resolved) absolute path. */
export function workspaceId(realRoot: string): string {
  return createHash("sha256").update(realRoot).digest("hex").slice(0, 16);
}

/** Where one workspace keeps its state (merkle.json, index/, secret.key, branches/, sessions/). */
export function workspaceDir(realRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(dataDir(env), "workspaces", workspaceId(realRoot));
}

/** The machine-wide embedding cache, shared by every workspace, clone and branch. */
export function embeddingCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(dataDir(env), "cache", "embeddings");
}

/**
 * Makes the data directory private: created 0700, and an existing one of this user's that others may
 * enter is made 0700 again (it holds transcripts, indexes of code and the path-masking keys). Nothing
 * below it is then reachable by other local users, whatever the modes of the files there.
 */
export function privateDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = dataDir(env);
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    const stats = statSync(dir);
    if (stats.uid === process.getuid?.() && (stats.mode & 0o077) !== 0) chmodSync(dir, PRIVATE_DIR);
  } catch {
    // a data directory that cannot be made says so where it is first written
  }
  return dir;
}
