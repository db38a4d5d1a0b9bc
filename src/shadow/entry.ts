/**
 * An entry of a folder read without following any symbolic link (src/workspace/rooted.ts), as a
 * FileState with what identifies it on disk and its record (a file by its hash), and comparisons of
 * states. The accept reads the user's entries with it, the branch's recorded base too.
 */
import type { Stats } from "node:fs";
import { FileAccessError } from "../workspace/errors.js";
import { sha256Hex } from "../workspace/hash.js";
import { lstatIn, readIn, readlinkIn } from "../workspace/rooted.js";
import type { FileState } from "./recorded.js";

/** A state as the journal keeps it: a file by its hash (its bytes are stored apart), a link by its target. */
export type StateRecord =
  | { kind: "absent" }
  | { kind: "file"; mode: "100644" | "100755"; perm: number; size: number; sha256: string }
  | { kind: "link"; target: string };

/** The user's entry at a path, as read. */
export interface UserEntry {
  /** undefined: a folder, FIFO, device or socket stands there (never merged nor replaced). */
  state: FileState | undefined;
  /** lstat of the entry (undefined when absent). */
  stats: Stats | undefined;
  /** The record of the state (hash of a file's bytes); undefined for anything but absent, file or link. */
  record: StateRecord | undefined;
}

/** A file state holding `data`. */
export function fileState(data: Buffer, mode: "100644" | "100755"): FileState {
  return { kind: "file", mode, size: data.length, load: async () => data };
}

function gitMode(stats: Stats): "100644" | "100755" {
  return stats.mode & 0o111 ? "100755" : "100644";
}

/**
 * The user's entry at `rel` of `root`. FileAccessError when a link or a file stands on the way. A file
 * over `maxBytes` is not read (its state loads it on demand; its record has no hash).
 */
export async function readUserEntry(root: string, rel: string, maxBytes: number): Promise<UserEntry> {
  const stats = await lstatIn(root, rel).catch((error: unknown) => {
    // a folder on the way that does not exist: the path is absent
    if (error instanceof FileAccessError && error.code === "MISSING") return undefined;
    throw error;
  });
  if (!stats) return { state: { kind: "absent" }, stats, record: { kind: "absent" } };
  if (stats.isSymbolicLink()) {
    const target = await readlinkIn(root, rel);
    return { state: { kind: "link", target }, stats, record: { kind: "link", target } };
  }
  if (!stats.isFile()) return { state: undefined, stats, record: undefined };
  const mode = gitMode(stats);
  if (stats.size > maxBytes) {
    const load = async () => (await readIn(root, rel)).data;
    return { state: { kind: "file", mode, size: stats.size, load }, stats, record: undefined };
  }
  const read = await readIn(root, rel);
  if (read.stats.ino !== stats.ino || read.stats.dev !== stats.dev)
    throw new FileAccessError("CHANGED", rel, `${rel} changed while it was read`);
  return {
    state: fileState(read.data, mode),
    stats: read.stats,
    record: {
      kind: "file",
      mode,
      perm: read.stats.mode & 0o777,
      size: read.data.length,
      sha256: sha256Hex(read.data),
    },
  };
}

/** Whether two states hold the same thing (kind, mode, bytes or link target). */
export async function sameState(a: FileState, b: FileState): Promise<boolean> {
  if (a.kind === "absent" || b.kind === "absent") return a.kind === b.kind;
  if (a.kind === "link" || b.kind === "link")
    return a.kind === "link" && b.kind === "link" && a.target === b.target;
  if (a.mode !== b.mode || a.size !== b.size) return false;
  return (await a.load()).equals(await b.load());
}

/** Whether a record names the same state as another (a file's permission bits aside). */
export function sameRecord(a: StateRecord | undefined, b: StateRecord | undefined): boolean {
  if (!a || !b || a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.mode === b.mode && a.sha256 === b.sha256;
  if (a.kind === "link" && b.kind === "link") return a.target === b.target;
  return true;
}
