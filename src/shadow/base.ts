/**
 * A branch's recorded base: for every path the branch touched, the user's content at the moment the
 * branch first touched it. The branch sees the user's folder live for every path it has not touched;
 * once touched, a path's base is fixed and the branch's own content is what it shows.
 *
 * How a base is learnt:
 * - through the file door (agents' tools): the version the agent last read, or the user's content
 *   right before the first write or deletion (exact);
 * - for what commands change (the kernel copies a file up when a command opens it for writing), at the
 *   sync points before and after each command: a touched path whose file in the user's folder has not
 *   changed since the previous sync point was copied from that content (exact); one the user changed in
 *   between may have been copied from either version, or torn mid-copy, so its base is "unknown" and an
 *   accept reports it as a conflict instead of guessing. A path absent in the user's folder has the
 *   base "absent": accepting the branch's file there loses nothing of the user's.
 *
 * Stored in the branch's folder: `base/index.json` (path → state) and `base/objects/<sha256>` (contents),
 * files 0600, folders 0700. Times are on the filesystems' clock (the change time of a stamp file), so that
 * they compare with the change times of the user's files.
 */
import type { Stats } from "node:fs";
import { chmod, lstat, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { FileAccessError } from "../workspace/errors.js";
import { sha256Hex as sha256 } from "../workspace/hash.js";
import { lstatIn } from "../workspace/rooted.js";
import type { CopyState } from "./changes.js";
import { LARGE_FILE_BYTES } from "./diff.js";
import { readUserEntry, type UserEntry } from "./entry.js";
import { errnoCode, ShadowError } from "./errors.js";
import type { BaseState, FileState } from "./recorded.js";

/** A base as stored in index.json. */
export type StoredBase =
  | { kind: "absent" }
  | { kind: "file"; mode: "100644" | "100755"; size: number; hash: string }
  | { kind: "link"; target: string }
  | { kind: "unknown"; why: string };

interface BaseIndex {
  version: 1;
  /** The last sync point (filesystem clock, ms): user files changed since may have been copied torn. */
  syncedAt: number;
  /** Copy modes: when the copy made at fork was finished. */
  copiedAt?: number;
  /** Copy modes: files refreshed in the copy from the user's folder, with their change times then. */
  refreshed?: Record<string, number>;
  entries: Record<string, StoredBase>;
}

/** Bytes an agent read from the user's folder through the door, kept in memory until the first write. */
interface Seen {
  bytes: Buffer;
  mode: "100644" | "100755";
  at: number;
}

/** Files above this are not kept in memory when read: their base is taken when first written. */
const MAX_SEEN_BYTES = 8 * 1024 * 1024;
const MAX_SEEN_TOTAL = 256 * 1024 * 1024;

function sameStats(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function basePaths(branchDir: string) {
  const dir = join(branchDir, "base");
  return { dir, index: join(dir, "index.json"), objects: join(dir, "objects"), stamp: join(dir, "stamp") };
}

/** "Now" on the filesystems' clock: the change time of a stamp file written in `dir`. */
async function filesystemNow(stamp: string): Promise<number> {
  await writeFile(stamp, `${process.pid} ${Date.now()}\n`, { mode: PRIVATE_FILE });
  return (await lstat(stamp)).ctimeMs;
}

/**
 * The filesystems' clock once it has ticked past now (it is coarse, a few ms): every file written
 * before the call has an older change time than the result.
 */
async function filesystemNextTick(stamp: string): Promise<number> {
  const first = await filesystemNow(stamp);
  for (let i = 0; i < 1000; i++) {
    const now = await filesystemNow(stamp);
    if (now > first) return now;
    await new Promise((done) => setTimeout(done, 1));
  }
  return first;
}

function parseIndex(text: string, file: string): BaseIndex {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ShadowError("CORRUPT_BRANCH", `${file} is not valid JSON; the branch cannot be accepted`, {
      cause: error,
    });
  }
  const index = value as Partial<BaseIndex> | null;
  if (
    typeof index !== "object" ||
    index === null ||
    index.version !== 1 ||
    typeof index.syncedAt !== "number" ||
    typeof index.entries !== "object" ||
    index.entries === null
  )
    throw new ShadowError("CORRUPT_BRANCH", `${file} is corrupt; the branch cannot be accepted`);
  return index as BaseIndex;
}

const CHANGED_WHILE_READ: StoredBase = {
  kind: "unknown",
  why: "your file changed while umbra recorded what the agent started from",
};

/**
 * The content of `rel` in `from` (the user's folder, or a copy-mode branch's copy) as a stored base, read
 * without following a link on the way (readUserEntry); its bytes and stats for the steadiness check.
 */
async function readUserSide(
  from: string,
  rel: string,
): Promise<{ state: StoredBase; bytes?: Buffer; stats?: Stats }> {
  let entry: UserEntry;
  try {
    entry = await readUserEntry(from, rel, LARGE_FILE_BYTES);
  } catch (error) {
    if (error instanceof FileAccessError && error.code === "CHANGED") return { state: CHANGED_WHILE_READ };
    // behind a link of the user's (or a file where a folder would be) the workspace has nothing at
    // `rel`: absent (the accept never writes through that link)
    if (error instanceof FileAccessError || errnoCode(error) === "ENOENT" || errnoCode(error) === "ENOTDIR")
      return { state: { kind: "absent" } };
    throw error;
  }
  const { state, record, stats } = entry;
  // a folder (or a FIFO) where the branch has a file: nothing to merge with
  if (!state) return { state: { kind: "absent" }, ...(stats ? { stats } : {}) };
  if (state.kind === "absent") return { state };
  if (state.kind === "link") return { state, ...(stats ? { stats } : {}) };
  if (record?.kind !== "file")
    return {
      state: {
        kind: "unknown",
        why: `your file is over ${LARGE_FILE_BYTES >> 20} MiB: umbra does not record it`,
      },
    };
  return {
    state: { kind: "file", mode: record.mode, size: record.size, hash: record.sha256 },
    bytes: await state.load(),
    ...(stats ? { stats } : {}),
  };
}

export class BaseRecord {
  private readonly paths: ReturnType<typeof basePaths>;
  private readonly seen = new Map<string, Seen>();
  private seenBytes = 0;
  private index: Omit<BaseIndex, "entries" | "refreshed">;
  /** Maps, not objects: a workspace may hold a file named `__proto__`. */
  private readonly entries: Map<string, StoredBase>;
  private readonly refreshed: Map<string, number>;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    branchDir: string,
    private readonly root: string,
    index: BaseIndex,
  ) {
    this.paths = basePaths(branchDir);
    const { entries, refreshed, ...rest } = index;
    this.index = rest;
    this.entries = new Map(Object.entries(entries));
    this.refreshed = new Map(Object.entries(refreshed ?? {}));
  }

  /** A new record: the fork is the first sync point. */
  static async create(branchDir: string, root: string): Promise<BaseRecord> {
    const paths = basePaths(branchDir);
    await privateDir(paths.objects);
    const record = new BaseRecord(branchDir, root, {
      version: 1,
      syncedAt: await filesystemNow(paths.stamp),
      entries: {},
    });
    await record.save();
    return record;
  }

  /**
   * The record of an existing branch. A branch made before bases were recorded has none: its sync point
   * is its creation time, so that whatever the user changed since is "unknown", never guessed.
   */
  static async open(branchDir: string, root: string, createdAt: string): Promise<BaseRecord> {
    const paths = basePaths(branchDir);
    let text: string | undefined;
    try {
      text = await readFile(paths.index, "utf8");
    } catch (error) {
      if (errnoCode(error) !== "ENOENT") throw error;
    }
    if (text === undefined) {
      await privateDir(paths.objects);
      return new BaseRecord(branchDir, root, { version: 1, syncedAt: Date.parse(createdAt), entries: {} });
    }
    return new BaseRecord(branchDir, root, parseIndex(text, paths.index));
  }

  has(rel: string): boolean {
    return this.entries.has(rel);
  }

  /** Copy modes: when the copy was finished and what was refreshed in it since; undefined for overlays. */
  copyState(): CopyState | undefined {
    if (this.index.copiedAt === undefined) return undefined;
    return { copiedAt: this.index.copiedAt, refreshed: new Map(this.refreshed) };
  }

  /** Copy modes: notes the files refreshed from the user's folder (null: no longer). */
  noteRefreshed(updates: ReadonlyMap<string, number | null>): Promise<void> {
    if (updates.size === 0) return Promise.resolve();
    return this.serial(async () => {
      for (const [rel, ctime] of updates) {
        if (ctime === null) this.refreshed.delete(rel);
        else this.refreshed.set(rel, ctime);
      }
      await this.save();
      // a command writing a refreshed file right after must give it a newer change time
      await filesystemNextTick(this.paths.stamp);
    });
  }

  /** Copy modes: marks the end of the copy made at fork. */
  markCopied(): Promise<void> {
    return this.serial(async () => {
      // strictly after every file of the copy: a later change in it is the branch's
      this.index.copiedAt = await filesystemNextTick(this.paths.stamp);
      await this.save();
    });
  }

  /** The base of `rel` with its content on demand; undefined when the branch has not touched it. */
  state(rel: string): BaseState | undefined {
    if (!this.has(rel)) return undefined;
    const entry = this.entries.get(rel) as StoredBase;
    if (entry.kind !== "file") return entry;
    const object = join(this.paths.objects, entry.hash);
    return {
      kind: "file",
      mode: entry.mode,
      size: entry.size,
      load: async () => {
        const bytes = await readFile(object).catch((error: unknown) => {
          throw new ShadowError(
            "CORRUPT_BRANCH",
            `the recorded base of ${rel} is missing (${errnoCode(error)})`,
            {
              cause: error,
            },
          );
        });
        if (sha256(bytes) !== entry.hash)
          throw new ShadowError("CORRUPT_BRANCH", `the recorded base of ${rel} is damaged`);
        return bytes;
      },
    };
  }

  stored(rel: string): StoredBase | undefined {
    return this.entries.get(rel);
  }

  /**
   * Notes the bytes an agent read from the user's folder (the door calls it for files that came from
   * the user's layer): if the agent later writes the path, this version is its base.
   */
  noteSeen(rel: string, bytes: Buffer, mode: "100644" | "100755"): void {
    if (this.has(rel) || bytes.length > MAX_SEEN_BYTES) return;
    const old = this.seen.get(rel);
    if (old) this.seenBytes -= old.bytes.length;
    this.seen.delete(rel);
    this.seen.set(rel, { bytes, mode, at: Date.now() });
    this.seenBytes += bytes.length;
    for (const [key, value] of this.seen) {
      if (this.seenBytes <= MAX_SEEN_TOTAL) break;
      this.seen.delete(key);
      this.seenBytes -= value.bytes.length;
    }
  }

  /**
   * Records the base of paths the door is about to write or delete (not touched yet): the version the
   * agent last read, else what the branch shows there now, read from `from` — the user's folder for
   * overlays (their lower layer), the copy for copy modes (the user's folder as of the last refresh).
   */
  captureForWrite(rels: readonly string[], from: string = this.root): Promise<void> {
    return this.serial(async () => {
      let changed = false;
      for (const rel of rels) {
        if (this.has(rel)) continue;
        const seen = this.seen.get(rel);
        if (seen) {
          await this.putObject(seen.bytes);
          this.entries.set(rel, {
            kind: "file",
            mode: seen.mode,
            size: seen.bytes.length,
            hash: sha256(seen.bytes),
          });
        } else {
          this.entries.set(rel, await this.readExact(from, rel));
        }
        this.forgetSeen(rel);
        changed = true;
      }
      if (changed) await this.save();
    });
  }

  /**
   * A sync point: records the base of every path a command touched since the last one (`touched`, those
   * the branch's layer holds; recorded ones are skipped), then starts a new window.
   */
  sync(touched: Iterable<string>): Promise<void> {
    return this.serial(async () => {
      const next = await filesystemNow(this.paths.stamp);
      const since = this.index.syncedAt;
      let changed = false;
      for (const rel of touched) {
        if (this.has(rel)) continue;
        this.entries.set(rel, await this.readSince(rel, since));
        this.forgetSeen(rel);
        changed = true;
      }
      this.index.syncedAt = next;
      if (changed || next !== since) await this.save();
    });
  }

  /**
   * The recorded paths whose file in the user's folder is no longer their base: the user changed them
   * after the branch first touched them (unknown bases are left out: they changed already).
   */
  async userChanged(): Promise<string[]> {
    const out: string[] = [];
    for (const [rel, stored] of this.entries) {
      if (stored.kind === "unknown") continue;
      const now = await readUserSide(this.root, rel).catch(() => undefined);
      if (!now || !sameStored(stored, now.state)) out.push(rel);
    }
    return out.sort();
  }

  /** Replaces the bases of paths (a rebase takes the user's content as the new base). */
  setBases(entries: readonly { rel: string; state: FileState }[]): Promise<void> {
    return this.serial(async () => {
      for (const { rel, state } of entries) {
        if (state.kind !== "file") {
          this.entries.set(rel, state.kind === "link" ? { kind: "link", target: state.target } : state);
          continue;
        }
        const bytes = await state.load();
        await this.putObject(bytes);
        this.entries.set(rel, { kind: "file", mode: state.mode, size: bytes.length, hash: sha256(bytes) });
      }
      await this.save();
    });
  }

  /** The content of `rel` in `from` now, exactly (read twice around: one that changed meanwhile is unknown). */
  private async readExact(from: string, rel: string): Promise<StoredBase> {
    const side = await readUserSide(from, rel);
    if (side.bytes === undefined || side.stats === undefined) return side.state;
    return this.keepIfSteady(from, rel, side.state, side.bytes, side.stats);
  }

  /** Keeps the bytes read as the base if the file did not change while it was read. */
  private async keepIfSteady(
    from: string,
    rel: string,
    state: StoredBase,
    bytes: Buffer,
    before: Stats,
  ): Promise<StoredBase> {
    const after = await lstatIn(from, rel).catch(() => undefined);
    if (!after || !sameStats(after, before)) return CHANGED_WHILE_READ;
    await this.putObject(bytes);
    return state;
  }

  /** The base of a path a command touched in the window since `since`. */
  private async readSince(rel: string, since: number): Promise<StoredBase> {
    const side = await readUserSide(this.root, rel);
    if (side.state.kind === "absent" || side.state.kind === "unknown" || !side.stats) return side.state;
    if (side.stats.ctimeMs >= since)
      return {
        kind: "unknown",
        why: "you changed this file while a command of the agent was changing it: umbra cannot tell which version the agent started from",
      };
    if (side.bytes === undefined) return side.state;
    return this.keepIfSteady(this.root, rel, side.state, side.bytes, side.stats);
  }

  private forgetSeen(rel: string): void {
    const seen = this.seen.get(rel);
    if (!seen) return;
    this.seenBytes -= seen.bytes.length;
    this.seen.delete(rel);
  }

  private async putObject(bytes: Buffer): Promise<void> {
    const file = join(this.paths.objects, sha256(bytes));
    if (
      await lstat(file).then(
        () => true,
        () => false,
      )
    )
      return;
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, bytes, { mode: PRIVATE_FILE });
    await chmod(temp, PRIVATE_FILE);
    await rename(temp, file);
  }

  private async save(): Promise<void> {
    const temp = `${this.paths.index}.${process.pid}.tmp`;
    const index: BaseIndex = {
      ...this.index,
      entries: Object.fromEntries(this.entries),
      ...(this.refreshed.size ? { refreshed: Object.fromEntries(this.refreshed) } : {}),
    };
    await writeFile(temp, `${JSON.stringify(index)}\n`, { mode: PRIVATE_FILE });
    await rename(temp, this.paths.index);
  }

  /** Captures and syncs run one at a time (the index is rewritten whole). */
  private serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.queue.then(step, step);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function sameStored(a: StoredBase, b: StoredBase): boolean {
  if (a.kind === "file" && b.kind === "file") return a.hash === b.hash && a.mode === b.mode;
  if (a.kind === "link" && b.kind === "link") return a.target === b.target;
  return a.kind === "absent" && b.kind === "absent";
}

/** A FileState of the branch or the user's folder, compared by content with a stored base. */
export async function sameAsBase(base: StoredBase, state: FileState): Promise<boolean> {
  if (base.kind === "unknown") return false;
  if (base.kind !== state.kind) return false;
  if (base.kind === "absent") return true;
  if (base.kind === "link") return state.kind === "link" && state.target === base.target;
  if (state.kind !== "file") return false;
  if (state.mode !== base.mode || state.size !== base.size) return false;
  return sha256(await state.load()) === base.hash;
}
