/**
 * Replacing one path of the user's folder, atomically and only if it still holds what was read: the new
 * entry is written beside it under the journal's temporary name, synced, and renamed over it right after
 * a last check of the old one (src/workspace/rooted.ts replaceIn: no link is followed on the way).
 */
import { FileAccessError } from "../workspace/errors.js";
import { type NewEntry, replaceIn, unlinkIn } from "../workspace/rooted.js";
import { AcceptError } from "./errors.js";
import type { StepCounter } from "./seam.js";
import { type StateRecord, stillIs, type UserEntry } from "./state.js";

/** The temporary entry of a path: `.umbra-accept-<id>-<n>` in the path's folder. */
export function tmpName(id: string, n: number): string {
  return `.umbra-accept-${id}-${n}`;
}

function parentPath(rel: string, name: string): string {
  const slash = rel.lastIndexOf("/");
  return slash < 0 ? name : `${rel.slice(0, slash)}/${name}`;
}

/** The error of an accept that stopped because the user's `rel` changed under it. */
export function changedWhileAccepting(rel: string): AcceptError {
  return new AcceptError("CHANGED", `${rel} changed while accepting; nothing was changed, run it again`);
}

/** The entry a record describes, with a file's bytes. */
export function entryOf(record: StateRecord, data: Buffer | undefined): NewEntry {
  if (record.kind === "absent") return { kind: "absent" };
  if (record.kind === "link") return { kind: "link", target: record.target };
  return { kind: "file", data: data ?? Buffer.alloc(0), mode: record.perm };
}

/** Puts `entry` at `rel` if the user's entry there still is `expected`; AcceptError CHANGED if not. */
export async function swapEntry(
  root: string,
  rel: string,
  entry: NewEntry,
  expected: UserEntry,
  tmp: string,
  step: StepCounter,
): Promise<void> {
  const changed = () => changedWhileAccepting(rel);
  try {
    await replaceIn(root, rel, entry, {
      tmpName: tmp,
      sync: true,
      onStep: step,
      expect: async (existing, path) => {
        if (!(await stillIs(existing, path, expected))) throw changed();
      },
    });
  } catch (error) {
    // nothing to delete where the folder itself is gone, as it was
    const gone = error instanceof FileAccessError && error.code === "MISSING";
    if (gone && entry.kind === "absent" && expected.stats === undefined) return;
    if (error instanceof FileAccessError) throw changed();
    throw error;
  }
}

/** Removes a leftover temporary entry of `rel` (nothing when there is none or its folder is gone). */
export async function removeTemp(root: string, rel: string, tmp: string): Promise<void> {
  await unlinkIn(root, parentPath(rel, tmp)).catch((error: unknown) => {
    if (!(error instanceof FileAccessError)) throw error;
  });
}
