import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { errorCode } from "./errors.js";
import { classifyContent, sha256Hex } from "./hash.js";
import { createLimiter } from "./limit.js";
import { computeDirHashes } from "./merkle.js";
import type { FileEntry, ScannedFile, ScanResult, SkippedEntry, Snapshot } from "./types.js";

export { loadSnapshot, saveSnapshot } from "./snapshot-file.js";

export interface TakeSnapshotOptions {
  signal?: AbortSignal;
  /** Called after each file, reused or hashed. */
  onProgress?: (done: number, total: number) => void;
  /** Files read at once. Default 16. */
  concurrency?: number;
}

export interface TakeSnapshotResult {
  snapshot: Snapshot;
  /** How many files were read and hashed (the others reused the previous snapshot's entry). */
  hashedFiles: number;
}

// O_NONBLOCK: a file replaced by a fifo since the scan must not block the open.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

type HashOutcome = { entry: FileEntry; hashed: boolean } | { skipped: SkippedEntry };

async function readEntry(absolute: string, file: ScannedFile): Promise<HashOutcome> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(absolute, OPEN_FLAGS);
    const stats = await handle.stat();
    if (!stats.isFile())
      return { skipped: { path: file.path, reason: "unreadable", detail: "no longer a file" } };
    const bytes = await handle.readFile();
    const entry: FileEntry = {
      size: bytes.length,
      mtimeMs: stats.mtimeMs,
      hash: sha256Hex(bytes),
      content: classifyContent(bytes, file.path),
    };
    return { entry, hashed: true };
  } catch (error) {
    const code = errorCode(error);
    const detail =
      code === "ENOENT"
        ? "vanished before hashing"
        : code === "EACCES" || code === "EPERM"
          ? `permission denied (${code})`
          : (code ?? String(error));
    return { skipped: { path: file.path, reason: "unreadable", detail } };
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * Builds the Merkle snapshot of a scan. A file whose size and mtime equal the previous snapshot's entry
 * keeps that entry without being read; every other file is read and hashed (a few at a time). A file that
 * vanished or became unreadable since the scan moves to `skipped`; that is never fatal.
 */
export async function takeSnapshot(
  root: string,
  scan: ScanResult,
  previous: Snapshot | undefined,
  options: TakeSnapshotOptions = {},
): Promise<TakeSnapshotResult> {
  const { signal, onProgress } = options;
  signal?.throwIfAborted();
  const scannedAt = new Date().toISOString();
  const base = resolve(root);
  const limit = createLimiter(options.concurrency ?? 16);
  const total = scan.files.length;
  const outcomes: (HashOutcome | undefined)[] = new Array(total);
  const oldFiles = previous?.files;
  let done = 0;
  let hashedFiles = 0;

  const finish = (index: number, outcome: HashOutcome): void => {
    outcomes[index] = outcome;
    if ("hashed" in outcome && outcome.hashed) hashedFiles++;
    done++;
    onProgress?.(done, total);
  };

  const reads: Promise<void>[] = [];
  scan.files.forEach((file, index) => {
    const old = oldFiles && Object.hasOwn(oldFiles, file.path) ? oldFiles[file.path] : undefined;
    if (old && old.size === file.size && old.mtimeMs === file.mtimeMs) {
      finish(index, {
        entry: { size: old.size, mtimeMs: old.mtimeMs, hash: old.hash, content: old.content },
        hashed: false,
      });
      return;
    }
    reads.push(
      limit(async () => {
        signal?.throwIfAborted();
        finish(index, await readEntry(`${base}${sep}${file.path.split("/").join(sep)}`, file));
      }),
    );
  });
  await Promise.all(reads);
  signal?.throwIfAborted();

  const files: Record<string, FileEntry> = Object.create(null);
  const hashes = new Map<string, string>();
  const skipped: SkippedEntry[] = [...scan.skipped];
  scan.files.forEach((file, index) => {
    const outcome = outcomes[index];
    if (!outcome) return;
    if ("skipped" in outcome) {
      skipped.push(outcome.skipped);
      return;
    }
    files[file.path] = outcome.entry;
    hashes.set(file.path, outcome.entry.hash);
  });
  skipped.sort(byPath);
  const dirs = computeDirHashes(hashes);
  const snapshot: Snapshot = { version: 1, rootHash: dirs[""] as string, files, dirs, skipped, scannedAt };
  return { snapshot, hashedFiles };
}

/** Path → content hash of every file in a snapshot, as `diffFiles` takes it. */
export function fileHashes(snapshot: Snapshot): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [path, entry] of Object.entries(snapshot.files)) out[path] = entry.hash;
  return out;
}

/** Paths of the snapshot's UTF-8 text files, the ones to chunk and index, sorted. */
export function indexableFiles(snapshot: Snapshot): string[] {
  return Object.keys(snapshot.files)
    .filter((path) => snapshot.files[path]?.content === "text")
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Everything not indexed and why: the scan's skips plus binary and invalid UTF-8 files, sorted by path. */
export function skippedForIndex(snapshot: Snapshot): SkippedEntry[] {
  const out: SkippedEntry[] = [...snapshot.skipped];
  for (const [path, entry] of Object.entries(snapshot.files)) {
    if (entry.content === "binary") out.push({ path, reason: "binary" });
    else if (entry.content === "invalid-utf8") out.push({ path, reason: "invalid-utf8" });
  }
  return out.sort(byPath);
}
