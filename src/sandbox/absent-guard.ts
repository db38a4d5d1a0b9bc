/**
 * Absent protected paths of the user's own folder (`.vscode`, `.idea`, `.umbra`, `.gitignore`, a missing
 * top `.git`, `.git/hooks`, a configured path, …). The sandbox keeps every protected path that exists
 * read-only; for an absent one it would need something in its place to cover, and nothing is made in
 * the user's folder (a branch's view gets placeholders instead: they land in the branch). So each run
 * in the user's folder lists them first (absentProtectedPaths) and, after the run, moves out to the
 * quarantine every one that appeared (appearedPaths, then the git guard or moveOutOfFolder), with its
 * reason. A new ignore file stays when it is harmless (it only hides more, see newIgnoreFileRisk).
 *
 * The guard cannot tell who made a path: one the user made there while the command ran goes too. The
 * reason says so, and the quarantine keeps it whole to be moved back.
 */
import { lstat, readdir } from "node:fs/promises";
import { relative, sep } from "node:path";
import { IGNORE_FILE_NAMES } from "../workspace/ignore-rules.js";
import { type FoundPath, newIgnoreFileRisk } from "./git-guard.js";
import { isAtOrBelow, PROTECTED_WORKSPACE_PATHS } from "./policy.js";
import type { SandboxPolicy } from "./types.js";

/** A protected path below the workspace that was absent when a run started. */
export interface AbsentPath {
  /** Absolute. */
  abs: string;
  /** Workspace-relative (posix). */
  path: string;
  /** Why commands may not make it, as the agent is told for protected paths. */
  reason: string;
}

const REASONS: ReadonlyMap<string, string> = new Map([
  ...PROTECTED_WORKSPACE_PATHS.map(({ path, reason }): [string, string] => [path, reason]),
  [".umbra", "commands may not change umbra's settings"],
  [".git", "commands may not make this folder a git repository"],
]);

/** Absent, or an empty folder (nothing to keep; an older version's leftover placeholder is one). */
async function isVacant(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return true;
  return info.isDirectory() && (await readdir(path).catch(() => ["?"])).length === 0;
}

/** The protected paths of `policy` below its workspace that are vacant now (see isVacant). */
export async function absentProtectedPaths(policy: SandboxPolicy): Promise<AbsentPath[]> {
  const { workspace } = policy;
  const out: AbsentPath[] = [];
  for (const abs of policy.protectedPaths) {
    if (abs === workspace || !isAtOrBelow(abs, workspace) || !(await isVacant(abs))) continue;
    const path = relative(workspace, abs).split(sep).join("/");
    out.push({ abs, path, reason: REASONS.get(path) ?? "commands may not change this protected path" });
  }
  return out;
}

/**
 * The paths of `absent` that hold something now, each with the line the user reads: a harmless new
 * ignore file is left (see newIgnoreFileRisk), anything else goes.
 */
export async function appearedPaths(absent: readonly AbsentPath[]): Promise<FoundPath[]> {
  const out: FoundPath[] = [];
  for (const { abs, path, reason } of absent) {
    if (await isVacant(abs)) continue;
    const name = path.slice(path.lastIndexOf("/") + 1);
    const why = IGNORE_FILE_NAMES.has(name) ? await newIgnoreFileRisk(abs) : reason;
    if (why)
      out.push({
        abs,
        why: `${why}; it was absent when the command started and appeared while it ran (if you made it yourself meanwhile, move it back)`,
      });
  }
  return out;
}
