/**
 * Undoing the last accept from its journal: every path goes back to what it held before, atomically per
 * path, unless the user changed it since (it holds neither the accept's result nor the previous state):
 * such a path is listed and left alone. Paths the accept had not reached yet (it was killed) already hold
 * their previous state. Leftover temporary files of the accept are removed. Running it again is safe.
 */
import { realpath } from "node:fs/promises";
import { FileAccessError } from "../workspace/errors.js";
import { rmdirIfEmptyIn } from "../workspace/rooted.js";
import { type Journal, type JournalEntry, journalObject, markJournal, readJournal } from "./journal.js";
import { withAcceptLock } from "./lock.js";
import { crashSeam, type StepCounter } from "./seam.js";
import { readUserEntry, sameRecord } from "./state.js";
import { entryOf, removeTemp, swapEntry } from "./swap.js";

export interface UndoResult {
  /** Whether there was an accept to undo. */
  found: boolean;
  /** Paths put back to what they held before the accept. */
  restored: string[];
  /** Paths left as they are, because you changed them after the accept. */
  left: { path: string; why: string }[];
  message: string;
}

/** Removes the leftover temporary files an accept's journal names. */
export async function removeTemps(root: string, journal: Journal): Promise<void> {
  for (const entry of journal.entries) await removeTemp(root, entry.path, entry.tmp);
}

/**
 * Puts `entries` of `journal` back to their previous state where they hold the accept's result (or are
 * already back); the rest is returned as left. The folders the accept created are removed when empty.
 */
export async function restoreEntries(
  root: string,
  env: NodeJS.ProcessEnv,
  journal: Journal,
  entries: readonly JournalEntry[],
  step: StepCounter,
): Promise<Pick<UndoResult, "restored" | "left">> {
  const restored: string[] = [];
  const left: UndoResult["left"] = [];
  for (const entry of entries) {
    await removeTemp(root, entry.path, entry.tmp);
    const current = await readUserEntry(root, entry.path, Number.POSITIVE_INFINITY).catch(
      (error: unknown) => {
        if (error instanceof FileAccessError) return undefined;
        throw error;
      },
    );
    if (current && sameRecord(current.record, entry.before)) {
      restored.push(entry.path);
      continue;
    }
    if (!current || !sameRecord(current.record, entry.after)) {
      left.push({ path: entry.path, why: "you changed it after the accept; left as it is" });
      continue;
    }
    const before = entry.before;
    const data = before.kind === "file" ? await journalObject(root, env, before.sha256) : undefined;
    await swapEntry(root, entry.path, entryOf(before, data), current, entry.tmp, step);
    restored.push(entry.path);
  }
  for (const dir of [...journal.dirs].reverse())
    await rmdirIfEmptyIn(root, dir).catch((error: unknown) => {
      if (!(error instanceof FileAccessError)) throw error;
    });
  return { restored, left };
}

/** Undoes the last accept of the folder `root` (see the module comment). */
export async function undoLastAccept(
  root: string,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<UndoResult> {
  const env = options.env ?? process.env;
  const real = await realpath(root);
  return withAcceptLock(real, env, () => undoJournal(real, env));
}

async function undoJournal(real: string, env: NodeJS.ProcessEnv): Promise<UndoResult> {
  const journal = await readJournal(real, env);
  if (!journal || journal.state === "undone" || journal.state === "rolled-back")
    return { found: false, restored: [], left: [], message: "nothing to undo" };
  const step = crashSeam(env);
  const { restored, left } = await restoreEntries(real, env, journal, journal.entries, step);
  if (left.length === 0) {
    await markJournal(real, env, journal, "undone", step);
    return {
      found: true,
      restored,
      left,
      message: `undid the last accept: ${restored.length} file(s) restored`,
    };
  }
  return {
    found: true,
    restored,
    left,
    message: `restored ${restored.length} file(s); left ${left.length} you changed after the accept`,
  };
}
