import { type BigIntStats, lstatSync } from "node:fs";
import { join } from "node:path";

/** Files whose text a workspace keeps for previews at most. */
const MAX_FILES = 2_000;

/**
 * The text of files that search hits point into, kept between searches. An entry is used only while the
 * path still names the same file, unchanged — same device, inode, size, modification and change time
 * (one lstat) — so what it returns was read through the file door (no link followed, nothing hidden)
 * from exactly that file. A new name for the file, such as a hard link that hides it, changes its
 * change time too. Anything else is read again through the door.
 */
export class PreviewCache {
  private readonly entries = new Map<string, { key: string; text: string }>();

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
  get(path: string, key: string | undefined): string | undefined {
    const entry = this.entries.get(path);
    if (!entry || key === undefined || entry.key !== key) return undefined;
    // most recently used last
    this.entries.delete(path);
    this.entries.set(path, entry);
    return entry.text;
  }

  /** Keeps what was read from `path` while it was the file `key` names. */
  set(path: string, key: string | undefined, text: string): void {
    if (key === undefined) return;
    this.entries.delete(path);
    this.entries.set(path, { key, text });
    while (this.entries.size > MAX_FILES) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
