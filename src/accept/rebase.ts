/**
 * Merging recorded changes into a branch instead of the user's folder: a rebase brings the user's
 * current folder into the branch (each changed file merged three ways, its base moved to what the user
 * has now), and grading in `umbra eval` writes the agent's changes into a fresh branch the same way.
 */
import type { Branch } from "../shadow/branch.js";
import type { FileState, RecordedChange } from "../shadow/recorded.js";
import { type ConflictHunk, mergeChange, type Resolution } from "./merge.js";
import { LARGE_FILE_BYTES, readUserEntry, sameState } from "./state.js";

export interface MergeIntoReport {
  /** Paths the target branch now holds the merge of. */
  merged: string[];
  conflicts: { path: string; why: string; hunks: ConflictHunk[] }[];
}

/** Writes a merged state into a branch as an override; why not, when it cannot. */
async function writeState(target: Branch, path: string, result: FileState): Promise<string | undefined> {
  if (result.kind === "link") return "the merge is a symbolic link, which a branch's overrides cannot hold";
  if (result.kind === "absent") target.remove(path);
  else target.write(path, await result.load());
  return undefined;
}

/**
 * Merges each change three ways (its base, the agent's content, what `current` says stands there now)
 * into `target`. Conflicting files are left as they are and reported.
 */
export async function mergeInto(
  target: Branch,
  changes: readonly RecordedChange[],
  current: (path: string) => Promise<FileState | undefined>,
  resolve?: ReadonlyMap<string, Resolution>,
): Promise<MergeIntoReport & { results: Map<string, FileState | "unchanged"> }> {
  const report: MergeIntoReport = { merged: [], conflicts: [] };
  const results = new Map<string, FileState | "unchanged">();
  for (const change of changes) {
    const now = await current(change.path);
    if (!now) {
      report.conflicts.push({ path: change.path, why: "a folder or special file stands there", hunks: [] });
      continue;
    }
    const choice = resolve?.get(change.path);
    const outcome = await mergeChange(change, now, choice ? { resolve: choice } : {});
    if (outcome.kind === "conflict") {
      report.conflicts.push({ path: change.path, why: outcome.why, hunks: outcome.hunks });
      continue;
    }
    if (outcome.kind === "unchanged") {
      results.set(change.path, "unchanged");
      continue;
    }
    const refused = await writeState(target, change.path, outcome.result);
    if (refused) {
      report.conflicts.push({ path: change.path, why: refused, hunks: [] });
      continue;
    }
    results.set(change.path, outcome.result);
    report.merged.push(change.path);
  }
  await target.materialize();
  return { ...report, results };
}

export interface RebaseReport extends MergeIntoReport {
  /** Changed files the user has not changed since the branch's base: nothing to bring in. */
  current: string[];
}

/**
 * Brings the user's current folder into `branch`: every file the branch changed and the user changed
 * too is merged three ways (base, branch, the user's now) into the branch, and its base becomes the
 * user's content; conflicting files are left and reported. Files the branch did not touch already show
 * the user's folder.
 */
export async function rebaseBranch(
  branch: Branch,
  options: { resolve?: ReadonlyMap<string, Resolution> } = {},
): Promise<RebaseReport> {
  const root = branch.workspaceRoot;
  const users = new Map<string, FileState | undefined>();
  const userState = async (path: string): Promise<FileState | undefined> => {
    if (!users.has(path)) {
      const entry = await readUserEntry(root, path, LARGE_FILE_BYTES).catch(() => undefined);
      users.set(path, entry?.state);
    }
    return users.get(path);
  };
  const stale: RecordedChange[] = [];
  const current: string[] = [];
  for (const change of await branch.recordedChanges()) {
    const now = await userState(change.path);
    if (now && change.base.kind !== "unknown" && (await sameState(change.base, now)))
      current.push(change.path);
    else stale.push(change);
  }
  const merge = await mergeInto(branch, stale, userState, options.resolve);
  const bases: { rel: string; state: FileState }[] = [];
  for (const path of merge.results.keys()) {
    const now = users.get(path);
    if (now) bases.push({ rel: path, state: now });
  }
  await branch.setBases(bases);
  return { merged: merge.merged, conflicts: merge.conflicts, current };
}
