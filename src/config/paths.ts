import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";

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
