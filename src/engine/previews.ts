import { type BigIntStats, lstatSync } from "node:fs";
import { join } from "node:path";

/** Files whose text a workspace keeps for previews at most, and their characters in all. */
const MAX_FILES = 2_000;
const MAX_CHARS = 32 * 2 ** 20;

/**
 * A file's text with where its lines start, found once: a preview is a slice, not a split of the whole
 * file at every hit (a 400 kB file split for each of its hits cost milliseconds and garbage).
 */
export class FileLines {
  private starts: Uint32Array | undefined;

  constructor(readonly text: string) {}

  /** Lines `from` to `to` (1-based, inclusive), without the last one's line break. */
  lines(from: number, to: number): string {
    const starts = this.lineStarts();
    const first = Math.max(1, from);
    if (first > starts.length || to < first) return "";
    const end = to < starts.length ? (starts[to] as number) - 1 : this.text.length;
    return this.text.slice(starts[first - 1], end);
  }

  private lineStarts(): Uint32Array {
    if (this.starts) return this.starts;
    let count = 1;
    for (let at = this.text.indexOf("\n"); at !== -1; at = this.text.indexOf("\n", at + 1)) count++;
    const starts = new Uint32Array(count);
    let line = 1;
    for (let at = this.text.indexOf("\n"); at !== -1; at = this.text.indexOf("\n", at + 1))
      starts[line++] = at + 1;
    this.starts = starts;
    return starts;
  }
}

/**
 * The text of files that search hits point into, kept between searches. An entry is used only while the
 * path still names the same file, unchanged — same device, inode, size, modification and change time
 * (one lstat) — so what it returns was read through the file door (no link followed, nothing hidden)
 * from exactly that file. A new name for the file, such as a hard link that hides it, changes its
 * change time too. Anything else is read again through the door.
 */
export class PreviewCache {
  private readonly entries = new Map<string, { key: string; file: FileLines }>();
  private chars = 0;

  constructor(private readonly root: string) {}

  /** The file's identity now (undefined: not a regular file there). */
  identity(path: string): string | undefined {
    let info: BigIntStats | undefined;
    try {
      info = lstatSync(join(this.root, path), { bigint: true, throwIfNoEntry: false });
    } catch {
      return undefined;
    }
    if (!info?.isFile()) return undefined;
    return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  }

  /** The text kept for `path` when it was read from the file `key` names. */
  get(path: string, key: string | undefined): FileLines | undefined {
    const entry = this.entries.get(path);
    if (!entry || key === undefined || entry.key !== key) return undefined;
    // most recently used last
    this.entries.delete(path);
    this.entries.set(path, entry);
    return entry.file;
  }

  /** Keeps what was read from `path` while it was the file `key` names (a file too big is not kept). */
  set(path: string, key: string | undefined, text: string): FileLines {
    const file = new FileLines(text);
    this.drop(path);
    if (key === undefined || text.length > MAX_CHARS / 8) return file;
    this.entries.set(path, { key, file });
    this.chars += text.length;
    while (this.entries.size > MAX_FILES || this.chars > MAX_CHARS) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
    return file;
  }

  private drop(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    this.entries.delete(path);
    this.chars -= entry.file.text.length;
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }
}
