import { constants, existsSync, type Stats } from "node:fs";
import {
  chmod,
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  rename,
  rmdir,
  symlink,
  unlink,
} from "node:fs/promises";
import { errorCode, FileAccessError, shownPath } from "./errors.js";

/**
 * File I/O below a trusted folder (`root`) by a canonical relative path (`a/b/c`: no `.`, `..` or empty
 * segments), with RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS semantics: no symlink is followed on the way, not
 * even one that points back inside, and only regular files are opened. Each step opens the next folder
 * through the one before it (`/proc/self/fd/N/name` with O_NOFOLLOW, which is openat(N, name)), so a
 * folder swapped for a symlink between two calls is met as a symlink and refused instead of followed.
 * Without /proc (macOS), each step lstat()s the path and the opened file's device and inode are checked
 * against it, which leaves a narrower window. Errors are FileAccessError with the relative path.
 */

const PROC_FD = existsSync("/proc/self/fd");
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY, O_NOCTTY } = constants;

/** A folder reached without following symlinks; children are named `${path}/${name}`. */
interface Dir {
  readonly path: string;
  readonly rel: string;
  close(): Promise<void>;
}

/** Called with the stats of each folder passed and of the final entry (e.g. to refuse hidden inodes). */
export type StepCheck = (stats: Stats, rel: string) => void;

export interface RootedOptions {
  check?: StepCheck;
}

function childRel(dir: Dir, name: string): string {
  return dir.rel === "" ? name : `${dir.rel}/${name}`;
}

function splitRel(rel: string): string[] {
  const parts = rel === "" ? [] : rel.split("/");
  for (const part of parts) {
    if (part === "" || part === "." || part === ".." || part.includes("\0"))
      throw new FileAccessError(
        "INVALID_PATH",
        rel,
        `not a canonical workspace path: ${JSON.stringify(rel)}`,
      );
  }
  return parts;
}

async function openRoot(root: string, check: StepCheck | undefined): Promise<Dir> {
  if (!PROC_FD) {
    if (check) check(await lstat(root), "");
    return { path: root, rel: "", close: async () => {} };
  }
  const handle = await open(root, O_RDONLY | O_DIRECTORY);
  if (check) check(await handle.stat(), "");
  return fdDir(handle, "");
}

function fdDir(handle: FileHandle, rel: string): Dir {
  return { path: `/proc/self/fd/${handle.fd}`, rel, close: () => handle.close() };
}

/** Opens the folder `name` of `dir`; SYMLINK / NOT_DIR / MISSING when it is not a real folder. */
async function openChildDir(dir: Dir, name: string, check: StepCheck | undefined): Promise<Dir> {
  const rel = childRel(dir, name);
  const path = `${dir.path}/${name}`;
  if (!PROC_FD) {
    const info = await lstatOr(path, rel);
    if (!info) throw new FileAccessError("MISSING", rel, `${shownPath(rel)} does not exist`);
    if (info.isSymbolicLink()) throw new FileAccessError("SYMLINK", rel, `${shownPath(rel)} is a symlink`);
    if (!info.isDirectory()) throw new FileAccessError("NOT_DIR", rel, `${shownPath(rel)} is not a folder`);
    check?.(info, rel);
    return { path, rel, close: async () => {} };
  }
  let handle: FileHandle;
  try {
    handle = await open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    throw await describeOpenError(error, path, rel);
  }
  if (check) {
    try {
      check(await handle.stat(), rel);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
  return fdDir(handle, rel);
}

async function describeOpenError(error: unknown, path: string, rel: string): Promise<unknown> {
  const code = errorCode(error);
  if (code === "ENOENT") return new FileAccessError("MISSING", rel, `${shownPath(rel)} does not exist`);
  if (code === "ELOOP") return new FileAccessError("SYMLINK", rel, `${shownPath(rel)} is a symlink`);
  if (code === "ENOTDIR") {
    const info = await lstat(path).catch(() => undefined);
    if (info?.isSymbolicLink()) return new FileAccessError("SYMLINK", rel, `${shownPath(rel)} is a symlink`);
    return new FileAccessError("NOT_DIR", rel, `${shownPath(rel)} is not a folder`);
  }
  return error;
}

async function lstatOr(path: string, rel: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT") return undefined;
    if (code === "ENOTDIR")
      throw new FileAccessError("NOT_DIR", rel, `a folder on the way to ${shownPath(rel)} is not one`);
    throw error;
  }
}

/** Runs `step` with the parent folder of `rel` (reached without symlinks) and the final name. */
async function inParent<T>(
  root: string,
  rel: string,
  options: RootedOptions & { create?: boolean },
  step: (dir: Dir, name: string) => Promise<T>,
): Promise<T> {
  const parts = splitRel(rel);
  const name = parts.pop();
  if (name === undefined) throw new FileAccessError("INVALID_PATH", rel, "the root itself has no parent");
  let dir = await openRoot(root, options.check);
  try {
    for (const part of parts) {
      if (options.create) await mkdir(`${dir.path}/${part}`, { mode: 0o755 }).catch(ignoreExists);
      const next = await openChildDir(dir, part, options.check);
      letGo(dir);
      dir = next;
    }
    return await step(dir, name);
  } finally {
    letGo(dir);
  }
}

/**
 * Closes a folder passed on the way without waiting for it: nothing is named through it any more, and
 * each wait is a trip to the thread pool (a read of `a/b/c/d` makes a dozen).
 */
function letGo(dir: Dir): void {
  dir.close().catch(() => {});
}

function ignoreExists(error: unknown): void {
  if (errorCode(error) !== "EEXIST") throw error;
}

/** Runs `step` with the folder `rel` itself ("" is the root). */
async function inDir<T>(root: string, rel: string, options: RootedOptions, step: (dir: Dir) => Promise<T>) {
  if (rel === "") {
    const dir = await openRoot(root, options.check);
    try {
      return await step(dir);
    } finally {
      await dir.close();
    }
  }
  return inParent(root, rel, options, async (parent, name) => {
    const dir = await openChildDir(parent, name, options.check);
    try {
      return await step(dir);
    } finally {
      await dir.close();
    }
  });
}

/** The entry at `rel` itself (a final symlink is not followed); undefined when it does not exist. */
export function lstatIn(root: string, rel: string, options: RootedOptions = {}): Promise<Stats | undefined> {
  if (rel === "") return lstat(root);
  return inParent(root, rel, options, (dir, name) => lstatOr(`${dir.path}/${name}`, rel));
}

export interface ReadResult {
  data: Buffer;
  /** fstat of the opened file. */
  stats: Stats;
}

/**
 * The bytes of the regular file at `rel`. NOT_REGULAR for FIFOs, devices and sockets (never opened for
 * reading, so nothing blocks), SYMLINK for a symlink anywhere on the way, TOO_LARGE over `maxBytes`.
 */
export function readIn(root: string, rel: string, options: RootedOptions & { maxBytes?: number } = {}) {
  return inParent(root, rel, options, async (dir, name): Promise<ReadResult> => {
    const path = `${dir.path}/${name}`;
    const before = await lstatOr(path, rel);
    if (!before) throw new FileAccessError("MISSING", rel, `${shownPath(rel)} does not exist`);
    if (before.isSymbolicLink()) throw new FileAccessError("SYMLINK", rel, `${shownPath(rel)} is a symlink`);
    if (!before.isFile())
      throw new FileAccessError("NOT_REGULAR", rel, `${shownPath(rel)} is not a regular file`);
    let handle: FileHandle;
    try {
      handle = await open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    } catch (error) {
      throw await describeOpenError(error, path, rel);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile() || stats.ino !== before.ino || stats.dev !== before.dev)
        throw new FileAccessError("CHANGED", rel, `${shownPath(rel)} changed while it was opened`);
      options.check?.(stats, rel);
      if (options.maxBytes !== undefined && stats.size > options.maxBytes)
        throw new FileAccessError(
          "TOO_LARGE",
          rel,
          `${shownPath(rel)} is larger than ${options.maxBytes} bytes`,
        );
      return { data: await readWhole(handle, stats.size), stats };
    } finally {
      await handle.close();
    }
  });
}

/**
 * The file's bytes in one read when it is the size fstat gave (readFile would fstat again and read until
 * a read returns nothing); a file that grew since is read whole.
 */
async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(size + 1);
  const { bytesRead } = await handle.read(buffer, 0, size + 1, 0);
  return bytesRead <= size ? buffer.subarray(0, bytesRead) : handle.readFile();
}

export interface DirEntryInfo {
  name: string;
  stats: Stats;
}

/** The entries of the folder `rel` with their lstat()s ("" is the root). */
export function readdirIn(root: string, rel: string, options: RootedOptions = {}): Promise<DirEntryInfo[]> {
  return inDir(root, rel, options, async (dir) => {
    const out: DirEntryInfo[] = [];
    for (const name of await readdir(dir.path)) {
      const info = await lstatOr(`${dir.path}/${name}`, childRel(dir, name));
      if (info) out.push({ name, stats: info });
    }
    return out;
  });
}

/** The target of the symlink at `rel`. */
export function readlinkIn(root: string, rel: string, options: RootedOptions = {}): Promise<string> {
  return inParent(root, rel, options, (dir, name) => readlink(`${dir.path}/${name}`));
}

let tmpCounter = 0;

/**
 * Writes `data` as the regular file `rel`, creating missing folders on the way (never through a
 * symlink). Whatever stood at `rel` (a symlink, a folder, a FIFO) is removed first, never followed; a
 * file there is replaced by rename, so hard links to it keep their old content, and its permission bits
 * (without setuid/setgid) are kept.
 */
export function writeIn(root: string, rel: string, data: Buffer, options: RootedOptions = {}): Promise<void> {
  return inParent(root, rel, { ...options, create: true }, async (dir, name) => {
    const path = `${dir.path}/${name}`;
    const existing = await lstatOr(path, rel);
    let mode = 0o644;
    if (existing?.isFile()) mode = existing.mode & 0o777;
    else if (existing) await removeEntry(dir, name, existing);
    const tmp = `${dir.path}/.umbra-write-${process.pid}-${++tmpCounter}`;
    const handle = await open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    try {
      await handle.writeFile(data);
      await handle.close();
      await chmod(tmp, mode);
      await rename(tmp, path);
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw error;
    }
  });
}

/** What `replaceIn` puts at a path: a regular file (permission bits), a symbolic link, or nothing. */
export type NewEntry =
  | { kind: "file"; data: Buffer; mode: number }
  | { kind: "link"; target: string }
  | { kind: "absent" };

/** A step of `replaceIn` that changed the disk (for a caller that counts them, e.g. a crash test). */
export type ReplaceStep = "write" | "sync" | "rename" | "unlink";

export interface ReplaceOptions extends RootedOptions {
  /** The temporary entry's name in the path's folder; a leftover file or link of that name is removed. */
  tmpName: string;
  /**
   * Called with the entry now at the path (undefined: none) and its name through the opened folder,
   * right before it is replaced or removed; throwing stops the replacement (the temporary is removed).
   */
  expect?: (existing: Stats | undefined, path: string) => Promise<void>;
  /** fsync the new file before the rename and the folder after it. */
  sync?: boolean;
  onStep?: (step: ReplaceStep) => void;
}

/**
 * Replaces the entry at `rel` atomically: the new file or link is made under `tmpName` in the same
 * folder (reached without symlinks; missing folders are created for a file or link), synced when asked,
 * then renamed over the path, so the path holds either the old entry or the new one, never part of
 * one. `absent` unlinks the path. A folder at the path is never replaced (NOT_REGULAR).
 */
export function replaceIn(
  root: string,
  rel: string,
  entry: NewEntry,
  options: ReplaceOptions,
): Promise<void> {
  const create = entry.kind !== "absent";
  return inParent(root, rel, { ...options, create }, async (dir, name) => {
    const path = `${dir.path}/${name}`;
    const tmp = `${dir.path}/${options.tmpName}`;
    await unlinkEntry(tmp, options.tmpName);
    const step = (what: ReplaceStep) => options.onStep?.(what);
    try {
      if (entry.kind === "file") {
        const handle = await open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, entry.mode);
        try {
          await handle.writeFile(entry.data);
          await handle.chmod(entry.mode);
          step("write");
          if (options.sync) {
            await handle.sync();
            step("sync");
          }
        } finally {
          await handle.close();
        }
      } else if (entry.kind === "link") {
        await symlink(entry.target, tmp);
        step("write");
      }
      const existing = await lstatOr(path, rel);
      if (existing?.isDirectory())
        throw new FileAccessError("NOT_REGULAR", rel, `${shownPath(rel)} is a folder`);
      await options.expect?.(existing, path);
      if (entry.kind !== "absent") {
        await rename(tmp, path);
        step("rename");
      } else if (existing) {
        await unlink(path);
        step("unlink");
      }
    } catch (error) {
      await unlink(tmp).catch(() => {});
      throw error;
    }
    if (options.sync) {
      await syncDir(dir);
      step("sync");
    }
  });
}

/** Removes the file or link `rel` (never a folder, never followed); nothing when it is absent. */
export function unlinkIn(root: string, rel: string, options: RootedOptions = {}): Promise<void> {
  return inParent(root, rel, options, (dir, name) => unlinkEntry(`${dir.path}/${name}`, rel));
}

/** Removes the folder `rel` when it is empty; nothing when it is absent or holds something. */
export function rmdirIfEmptyIn(root: string, rel: string, options: RootedOptions = {}): Promise<void> {
  return inParent(root, rel, options, async (dir, name) => {
    const info = await lstatOr(`${dir.path}/${name}`, rel);
    if (!info?.isDirectory()) return;
    await rmdir(`${dir.path}/${name}`).catch((error: unknown) => {
      const code = errorCode(error);
      if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT") throw error;
    });
  });
}

async function unlinkEntry(path: string, rel: string): Promise<void> {
  const info = await lstatOr(path, rel);
  if (info && !info.isDirectory()) await unlink(path).catch(ignoreMissing);
}

async function syncDir(dir: Dir): Promise<void> {
  const handle = await open(dir.path, O_RDONLY | O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes `rel` (a folder with everything below it); symlinks are removed, never followed. */
export function removeIn(root: string, rel: string, options: RootedOptions = {}): Promise<void> {
  return inParent(root, rel, options, async (dir, name) => {
    const existing = await lstatOr(`${dir.path}/${name}`, rel);
    if (existing) await removeEntry(dir, name, existing);
  });
}

/** Renames `from` to `to` inside the root (both parents reached without symlinks; `to`'s are created). */
export function renameIn(root: string, from: string, to: string, options: RootedOptions = {}): Promise<void> {
  return inParent(root, from, options, (fromDir, fromName) =>
    inParent(root, to, { ...options, create: true }, (toDir, toName) =>
      rename(`${fromDir.path}/${fromName}`, `${toDir.path}/${toName}`),
    ),
  );
}

async function removeEntry(dir: Dir, name: string, info: Stats): Promise<void> {
  const path = `${dir.path}/${name}`;
  if (!info.isDirectory()) {
    await unlink(path).catch(ignoreMissing);
    return;
  }
  const child = await openChildDir(dir, name, undefined);
  try {
    for (const entry of await readdir(child.path)) {
      const entryInfo = await lstatOr(`${child.path}/${entry}`, childRel(child, entry));
      if (entryInfo) await removeEntry(child, entry, entryInfo);
    }
  } finally {
    await child.close();
  }
  await rmdir(path).catch(ignoreMissing);
}

function ignoreMissing(error: unknown): void {
  if (errorCode(error) !== "ENOENT") throw error;
}

/**
 * The bytes of the regular file `rel` (`.` and empty segments allowed), or undefined when there is none
 * there to read without following a symlink (missing, a link or a folder on the way, not a regular file).
 */
export async function readIfRegular(root: string, rel: string): Promise<Buffer | undefined> {
  const clean = rel
    .split("/")
    .filter((part) => part !== "" && part !== ".")
    .join("/");
  try {
    return (await readIn(root, clean)).data;
  } catch (error) {
    if (error instanceof FileAccessError && error.code !== "INVALID_PATH") return undefined;
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}
