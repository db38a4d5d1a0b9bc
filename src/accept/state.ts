/**
 * The user's entry at a path (read by src/shadow/entry.ts, which the branch's recorded base shares) and
 * the accept's check of it right before replacing it (compare-and-swap): its identity and hash again.
 */
import type { Stats } from "node:fs";
import { constants } from "node:fs";
import { open, readlink } from "node:fs/promises";
import type { UserEntry } from "../shadow/entry.js";
import { sha256Hex } from "../workspace/hash.js";

/** A file's size above which umbra neither merges nor loads it whole (as LARGE_FILE_BYTES of diffs). */
export { LARGE_FILE_BYTES } from "../shadow/diff.js";
export {
  fileState,
  readUserEntry,
  type StateRecord,
  sameRecord,
  sameState,
  type UserEntry,
} from "../shadow/entry.js";

/**
 * Whether the entry `existing` (lstat; undefined when absent), reachable as `path` through its opened
 * folder, still is `expected` as read: the same inode, size and modification time, and the same bytes.
 */
export async function stillIs(
  existing: Stats | undefined,
  path: string,
  expected: UserEntry,
): Promise<boolean> {
  const before = expected.stats;
  if (!existing || !before) return !existing && !before;
  if (existing.ino !== before.ino || existing.dev !== before.dev || existing.size !== before.size)
    return false;
  if (existing.mtimeMs !== before.mtimeMs || existing.mode !== before.mode) return false;
  const record = expected.record;
  if (record?.kind === "link") return existing.isSymbolicLink() && (await readlink(path)) === record.target;
  if (record?.kind !== "file" || !existing.isFile()) return false;
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    return sha256Hex(await handle.readFile()) === record.sha256;
  } finally {
    await handle.close();
  }
}
