/**
 * One file's three-way merge: the content the agent started from (the branch's recorded base), the
 * agent's (theirs) and the user's current one (ours). Text merges line by line through git merge-file;
 * binary files, symbolic links, deletions and a base umbra could not record merge only as a whole: when
 * both sides changed them differently it is a conflict, which the user settles with `ours` or `theirs`.
 */
import { shownAsText } from "../shadow/diff.js";
import type { FileState, RecordedChange } from "../shadow/recorded.js";
import { AcceptError } from "./errors.js";
import { applyHunks } from "./hunks.js";
import { type ConflictHunk, conflictHunks, type MergeStyle, mergeTexts } from "./merge-file.js";
import { fileState, LARGE_FILE_BYTES, sameState } from "./state.js";

export type { ConflictHunk } from "./merge-file.js";

/** How the user settles a conflict: keep theirs (`ours`), take the agent's (`theirs`), or write markers. */
export type Resolution = "ours" | "theirs" | "markers";

export type MergeOutcome =
  /** Nothing to write: the user already has the result, or the agent changed nothing there. */
  | { kind: "unchanged" }
  | { kind: "clean"; result: FileState }
  /** `merged`: for a text conflict, the file as `markers` would write it (diff3 markers, labels yours/agent). */
  | { kind: "conflict"; why: string; hunks: ConflictHunk[]; merged?: Buffer };

export interface MergeOptions {
  resolve?: Resolution;
  /** Only these hunks (1-based, as numbered in the file's diff base → branch) of the agent's change. */
  hunks?: readonly number[];
}

const UNCHANGED: MergeOutcome = { kind: "unchanged" };

function isLarge(state: FileState | { kind: "unknown" }): boolean {
  return state.kind === "file" && state.size > LARGE_FILE_BYTES;
}

async function bytes(state: FileState): Promise<Buffer> {
  return state.kind === "file" ? state.load() : Buffer.alloc(0);
}

function isBinary(data: Buffer): boolean {
  return data.includes(0);
}

/** A change that merges only as a whole: the user's choice, or a conflict. */
function whole(why: string, theirs: FileState, resolve: Resolution | undefined): MergeOutcome {
  if (resolve === "ours") return UNCHANGED;
  if (resolve === "theirs") return { kind: "clean", result: theirs };
  return { kind: "conflict", why, hunks: [] };
}

/** The agent's change with only the chosen hunks: the base with those applied (the branch's mode). */
async function chosenHunks(change: RecordedChange, hunks: readonly number[]): Promise<FileState> {
  const { base, branch, path } = change;
  if (base.kind === "unknown")
    throw new AcceptError("USAGE", `hunks of ${path} cannot be chosen: its base is not known (${base.why})`);
  const texts = base.kind === "file" && branch.kind === "file";
  const data = texts ? [await base.load(), await branch.load()] : [];
  // hunks are numbered as the diff shows them: a file it shows as binary is one hunk
  if (!texts || !data.every(shownAsText)) {
    // a creation, deletion, link or binary change is one hunk: all of it or nothing
    const wrong = hunks.filter((n) => n !== 1);
    if (wrong.length > 0)
      throw new AcceptError(
        "USAGE",
        `${path} has 1 hunk (the whole change); there is no hunk ${wrong.join(", ")}`,
      );
    return hunks.length > 0 ? branch : base;
  }
  const [old, now] = data.map((part) => part.toString("latin1")) as [string, string];
  const mode = branch.kind === "file" ? branch.mode : "100644";
  return fileState(Buffer.from(applyHunks(path, old, now, hunks), "latin1"), mode);
}

/** Why a change of all three sides differing cannot merge line by line, or undefined when it can. */
async function wholeFileReason(base: RecordedChange["base"], theirs: FileState, user: FileState) {
  if (theirs.kind === "absent") return "the agent deleted it and you changed it";
  if (user.kind === "absent") return "you deleted or renamed it and the agent changed it";
  if (theirs.kind === "link" || user.kind === "link" || base.kind === "link")
    return "a symbolic link both you and the agent changed";
  const sides = [
    await bytes(user),
    await bytes(theirs),
    base.kind === "file" ? await base.load() : Buffer.alloc(0),
  ];
  if (sides.some(isBinary)) return "a binary file both you and the agent changed";
  return undefined;
}

/**
 * Merges `change` (base → branch) into the user's current state `user`. A file over 64 MiB on any side
 * is never loaded: it is a conflict, whatever the resolution.
 */
export async function mergeChange(
  change: RecordedChange,
  user: FileState,
  options: MergeOptions = {},
): Promise<MergeOutcome> {
  const { base } = change;
  if (isLarge(base) || isLarge(change.branch) || isLarge(user))
    return {
      kind: "conflict",
      why: "over 64 MiB: umbra does not merge a file this large; copy it from the branch yourself",
      hunks: [],
    };
  const theirs = options.hunks ? await chosenHunks(change, options.hunks) : change.branch;
  if (await sameState(user, theirs)) return UNCHANGED;
  const resolve = options.resolve;
  if (base.kind !== "unknown") {
    if (await sameState(user, base)) return { kind: "clean", result: theirs };
    if (await sameState(theirs, base)) return UNCHANGED;
  }
  const why = await wholeFileReason(base, theirs, user);
  if (why) return whole(base.kind === "unknown" ? base.why : why, theirs, resolve);
  if (base.kind === "unknown" && resolve !== "markers") return whole(base.why, theirs, resolve);
  // both are text files; the base is one too, or absent (both created it), or unknown (markers only)
  if (user.kind !== "file" || theirs.kind !== "file") return whole("not a file", theirs, resolve);
  const baseFile = base.kind === "file" ? base : undefined;
  // the mode merges as a whole: the agent's change of it, else the user's
  const mode = baseFile && user.mode === baseFile.mode ? theirs.mode : user.mode;
  const ours = await user.load();
  const style: MergeStyle = resolve ?? "report";
  const merged = await mergeTexts(
    ours,
    baseFile ? await baseFile.load() : Buffer.alloc(0),
    await theirs.load(),
    style,
  );
  if (merged.conflicts > 0 && style === "report") {
    const created =
      base.kind === "absent" ? "you and the agent both created it, with different content; " : "";
    return {
      kind: "conflict",
      why: `${created}${merged.conflicts} conflicting hunk(s): you and the agent changed the same lines`,
      hunks: conflictHunks(ours.toString("latin1"), merged.merged.toString("latin1")),
      merged: merged.merged,
    };
  }
  if (mode === user.mode && merged.merged.equals(ours)) return UNCHANGED;
  return { kind: "clean", result: fileState(merged.merged, mode) };
}
