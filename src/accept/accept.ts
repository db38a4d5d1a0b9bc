/**
 * Accepting a branch's changes into the user's folder: the accept rules first (rules.ts, through the
 * diff base → branch: protected and hidden paths, links out, ... are refused with reasons), then each
 * remaining path merges three ways with the user's current content (merge.ts). All or nothing by
 * default: one conflict and nothing is written. Then the journal (journal.ts) and the files, each
 * replaced atomically and only if it still holds what the merge read (else everything written is put
 * back and nothing has changed). `undoLastAccept` (undo.ts) reverses it.
 */
import { realpath } from "node:fs/promises";
import type { UmbraConfig } from "../config/config.js";
import { changeDetail } from "../shadow/changes.js";
import { formatDiff } from "../shadow/diff.js";
import type { FileState, RecordedChange } from "../shadow/recorded.js";
import { FileAccessError, shownPath } from "../workspace/errors.js";
import { sha256Hex } from "../workspace/hash.js";
import type { NewEntry } from "../workspace/rooted.js";
import { lstatIn } from "../workspace/rooted.js";
import { AcceptError } from "./errors.js";
import { beginJournal, type JournalEntry, markJournal, newAcceptId, readJournal } from "./journal.js";
import { withAcceptLock } from "./lock.js";
import { type ConflictHunk, mergeChange, type Resolution } from "./merge.js";
import type { Refusal } from "./rules.js";
import { screenDiff } from "./screen.js";
import { crashSeam, type StepCounter } from "./seam.js";
import { editableText, type Settlement, settle, settlementOf, userVersion } from "./settle.js";
import { LARGE_FILE_BYTES, readUserEntry, type StateRecord, type UserEntry } from "./state.js";
import { changedWhileAccepting, swapEntry, tmpName } from "./swap.js";
import { removeTemps, restoreEntries } from "./undo.js";

export interface AcceptRequest {
  /** The user's folder (real path). */
  root: string;
  changes: readonly RecordedChange[];
  /** Only these files (paths of `changes`); `hunks` (1-based, of the file's diff) only with one file. */
  select?: { files?: readonly string[]; hunks?: readonly number[] };
  /**
   * How to settle each conflicting file, by path (settle.ts): a path that is not among the files
   * accepted, or does not conflict, is a USAGE error and nothing is written.
   */
  resolve?: ReadonlyMap<string, Resolution | Settlement>;
  /** true (default): any conflict and nothing is written; false: the clean files are written. */
  allOrNothing?: boolean;
  /** Plan only: merge, and return the results in `planned`; nothing is written, no journal. */
  dryRun?: boolean;
  config?: UmbraConfig;
  env?: NodeJS.ProcessEnv;
  /** Tests only: called right before each path is replaced. */
  testHooks?: { beforeReplace?: (path: string) => void | Promise<void> };
}

export interface AcceptReport {
  /** Whether anything was written into the user's folder. */
  written: boolean;
  /** Paths written. */
  applied: string[];
  /** Paths that already hold the result (the user has the agent's change, or it is nothing). */
  unchanged: string[];
  conflicts: AcceptConflict[];
  refused: Refusal[];
  /** What each written (with `dryRun`: each to be written) path holds after the accept. */
  planned: { path: string; result: FileState }[];
  /** One line, for the user. */
  message: string;
}

/** A file the agent and the user changed in ways that do not merge by themselves. */
export interface AcceptConflict {
  path: string;
  why: string;
  hunks: ConflictHunk[];
  /** The version of the user's file merged (settle.ts `userVersion`): a resolution may name it as a guard. */
  yoursSha256: string;
  /** A text conflict: the file as `markers` would write it, to edit (UTF-8, no CR, at most 1 MiB). */
  markers?: string;
}

interface Planned {
  path: string;
  user: UserEntry;
  result: FileState;
}

function isLarge(change: RecordedChange): boolean {
  return [change.base, change.branch].some((side) => side.kind === "file" && side.size > LARGE_FILE_BYTES);
}

/** The changes the accept rules let through, and the refusals. */
async function screen(request: AcceptRequest, changes: readonly RecordedChange[]) {
  const refused: Refusal[] = [];
  const judged: RecordedChange[] = [];
  for (const change of changes) {
    if (isLarge(change))
      refused.push({
        path: change.path,
        why: "over 64 MiB: umbra does not merge a file this large; copy it yourself",
      });
    else judged.push(change);
  }
  const details = judged.map(changeDetail).filter((detail) => detail !== undefined);
  const diff = await formatDiff(details, async () => undefined, { includeIgnored: true });
  const screened = await screenDiff(request.root, diff, {
    ...(request.config ? { config: request.config } : {}),
    ...(request.env ? { env: request.env } : {}),
  });
  refused.push(...screened.refused);
  const keptPaths = new Set(screened.kept.flatMap((section) => [section.oldPath, section.newPath]));
  const kept: RecordedChange[] = [];
  for (const change of judged) {
    if (keptPaths.has(change.path)) kept.push(change);
    else if (!refused.some((refusal) => refusal.path === change.path))
      refused.push({ path: change.path, why: "part of a rename whose other path was refused" });
  }
  return { kept, refused };
}

function selected(request: AcceptRequest): readonly RecordedChange[] {
  const files = request.select?.files;
  const hunks = request.select?.hunks;
  if (hunks && files?.length !== 1)
    throw new AcceptError("USAGE", "hunks can be chosen only with exactly one file");
  const known = new Set(request.changes.map((change) => change.path));
  const strays = [...(request.resolve?.keys() ?? [])].filter(
    (path) => !known.has(path) || (files !== undefined && !files.includes(path)),
  );
  if (strays.length > 0)
    throw new AcceptError(
      "USAGE",
      `a resolution names ${strays.map(shownPath).join(", ")}, which ${strays.length > 1 ? "are" : "is"} not among the files accepted`,
    );
  if (!files) return request.changes;
  const unknown = files.filter((path) => !known.has(path));
  if (unknown.length > 0) throw new AcceptError("USAGE", `the branch did not change ${unknown.join(", ")}`);
  const wanted = new Set(files);
  return request.changes.filter((change) => wanted.has(change.path));
}

async function recordOf(state: FileState, perm: number): Promise<{ record: StateRecord; entry: NewEntry }> {
  if (state.kind === "absent") return { record: state, entry: state };
  if (state.kind === "link") return { record: state, entry: state };
  const data = await state.load();
  return {
    record: { kind: "file", mode: state.mode, perm, size: data.length, sha256: sha256Hex(data) },
    entry: { kind: "file", data, mode: perm },
  };
}

/** The permission bits of a written file: the user's (with the exec bits the merge chose), else 644/755. */
function permOf(user: UserEntry, result: FileState): number {
  const exec = result.kind === "file" && result.mode === "100755";
  const current = user.stats?.isFile() ? user.stats.mode & 0o777 : undefined;
  if (current === undefined) return exec ? 0o755 : 0o644;
  if (exec) return current & 0o111 ? current : current | ((current & 0o444) >> 2);
  return current & ~0o111;
}

/** The folders on the way to `path` that do not exist yet (outermost first). */
async function missingDirs(root: string, path: string): Promise<string[]> {
  const parts = path.split("/").slice(0, -1);
  const missing: string[] = [];
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    if (missing.length > 0) missing.push(dir);
    else {
      const info = await lstatIn(root, dir).catch((error: unknown) => {
        if (error instanceof FileAccessError) throw changedWhileAccepting(path);
        throw error;
      });
      if (!info) missing.push(dir);
    }
  }
  return missing;
}

/**
 * Why writing `result` over the user's entry is refused whatever the base says (a base umbra could not
 * record is judged by the rules as the branch's own kind): an existing file is never made executable,
 * nor turned into a link or back.
 */
function resultRefusal(user: FileState, result: FileState): string | undefined {
  if (user.kind === "absent" || result.kind === "absent") return undefined;
  if (user.kind !== result.kind) return "would turn your file into a symbolic link or back";
  if (user.kind === "file" && result.kind === "file" && user.mode === "100644" && result.mode === "100755")
    return "would make an existing file executable";
  return undefined;
}

/** Writes the planned results: journal first, then each path; all put back if one changed meanwhile. */
async function write(request: AcceptRequest, root: string, env: NodeJS.ProcessEnv, plan: readonly Planned[]) {
  const step: StepCounter = crashSeam(env);
  const previous = await readJournal(root, env);
  if (previous) await removeTemps(root, previous);
  if (previous?.state === "writing")
    throw new AcceptError(
      "INTERRUPTED",
      "the last accept was interrupted before it finished: run `umbra undo` to restore the files it wrote, then accept again",
    );
  const id = newAcceptId();
  const entries: JournalEntry[] = [];
  const writes: NewEntry[] = [];
  const previousBytes = new Map<string, Buffer>();
  const dirs = new Set<string>();
  for (const [n, item] of plan.entries()) {
    const before = item.user.record;
    if (!before) throw new AcceptError("CHANGED", `${item.path} cannot be recorded before it is replaced`);
    if (before.kind === "file" && item.user.state?.kind === "file")
      previousBytes.set(item.path, await item.user.state.load());
    const { record, entry } = await recordOf(item.result, permOf(item.user, item.result));
    if (item.result.kind !== "absent") for (const dir of await missingDirs(root, item.path)) dirs.add(dir);
    entries.push({ path: item.path, tmp: tmpName(id, n), before, after: record });
    writes.push(entry);
  }
  const journal = await beginJournal(root, env, { id, entries, dirs: [...dirs] }, previousBytes, step);
  const done: JournalEntry[] = [];
  try {
    for (const [n, item] of plan.entries()) {
      await request.testHooks?.beforeReplace?.(item.path);
      const entry = entries[n] as JournalEntry;
      await swapEntry(root, item.path, writes[n] as NewEntry, item.user, entry.tmp, step);
      done.push(entry);
    }
  } catch (error) {
    // put back what was written; a journal that could not be put back whole stays for `umbra undo`
    const { left } = await restoreEntries(root, env, journal, done, step);
    if (left.length === 0) await markJournal(root, env, journal, "rolled-back", step);
    throw error;
  }
  await markJournal(root, env, journal, "done", step);
}

/** The report's line for the user; `dryRun`: as a plan. */
export function acceptSummary(report: Omit<AcceptReport, "message">, dryRun: boolean): string {
  const notes = [
    report.conflicts.length
      ? `${report.conflicts.length} conflicting file(s) (${report.conflicts.map((c) => c.path).join(", ")})`
      : "",
    report.refused.length ? `${report.refused.length} change(s) refused` : "",
    report.unchanged.length ? `${report.unchanged.length} file(s) already as the agent's` : "",
  ].filter(Boolean);
  const tail = notes.length ? `; ${notes.join("; ")}` : "";
  if (dryRun) return `dry run: ${report.planned.length} file(s) would be written${tail}`;
  if (report.written) return `applied ${report.applied.length} file(s)${tail}`;
  if (report.conflicts.length) return `not applied: ${notes.join("; ")}; nothing was written`;
  return `nothing to apply${tail}`;
}

/** Accepts `request.changes` into the user's folder (see the module comment). */
export async function acceptChanges(request: AcceptRequest): Promise<AcceptReport> {
  const env = request.env ?? process.env;
  const root = await realpath(request.root);
  const chosen = selected(request);
  const { kept, refused } = await screen({ ...request, root }, chosen);
  const unchanged: string[] = [];
  const conflicts: AcceptReport["conflicts"] = [];
  const plan: Planned[] = [];
  const settled = new Set<string>();
  for (const change of kept) {
    let user: UserEntry;
    try {
      user = await readUserEntry(root, change.path, LARGE_FILE_BYTES);
    } catch (error) {
      if (!(error instanceof FileAccessError)) throw error;
      refused.push({ path: change.path, why: "a link or a file of yours stands on the way to it" });
      continue;
    }
    if (!user.state) {
      refused.push({ path: change.path, why: "a folder or special file of yours stands there" });
      continue;
    }
    const given = request.resolve?.get(change.path);
    const hunks = request.select?.hunks;
    const plain = await mergeChange(change, user.state, hunks ? { hunks } : {});
    const outcome = given ? await settle(change, user, plain, settlementOf(given), hunks) : plain;
    if (given) settled.add(change.path);
    const why = outcome.kind === "clean" ? resultRefusal(user.state, outcome.result) : undefined;
    if (why) refused.push({ path: change.path, why });
    else if (outcome.kind === "unchanged") unchanged.push(change.path);
    else if (outcome.kind === "conflict") {
      const markers = editableText(outcome.merged);
      conflicts.push({
        path: change.path,
        why: outcome.why,
        hunks: outcome.hunks,
        yoursSha256: user.record ? userVersion(user.record) : "",
        ...(markers !== undefined ? { markers } : {}),
      });
    } else plan.push({ path: change.path, user, result: outcome.result });
  }
  const unsettled = [...(request.resolve?.keys() ?? [])].filter((path) => !settled.has(path));
  if (unsettled.length > 0)
    throw new AcceptError(
      "USAGE",
      `${unsettled.map(shownPath).join(", ")} ${unsettled.length > 1 ? "are" : "is"} not in conflict (refused, or not merged): accept without a resolution for it (nothing was written)`,
    );
  const allOrNothing = request.allOrNothing ?? true;
  const writing = !request.dryRun && plan.length > 0 && !(allOrNothing && conflicts.length > 0);
  if (writing) await withAcceptLock(root, env, () => write(request, root, env, plan));
  const report = {
    written: writing,
    applied: writing ? plan.map((item) => item.path) : [],
    unchanged,
    conflicts,
    refused,
    planned: writing || request.dryRun ? plan.map(({ path, result }) => ({ path, result })) : [],
  };
  return { ...report, message: acceptSummary(report, request.dryRun ?? false) };
}
