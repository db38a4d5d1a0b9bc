import { type Dirent, lstatSync, type Stats } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { errorCode } from "./errors.js";
import { DEFAULT_EXCLUDED_DIRS, excludedDirMatcher } from "./excluded-dirs.js";
import { createPacer, createReadCheck, describeFsError } from "./file-access.js";
import { type TrackedPaths, trackedExcludedPaths } from "./git-index.js";
import {
  enclosingRepositoryRules,
  extendRules,
  findGlobalExcludesFile,
  findInfoExclude,
  IGNORE_FILE_NAMES,
  type IgnoreContext,
  matchIgnore,
  parseIgnoreFile,
  readOptionalText,
  type SourcedPattern,
  UMBRA_IGNORE_FILES,
} from "./ignore-rules.js";
import { createLimiter } from "./limit.js";
import { resolveRoot, rootReadError } from "./root.js";
import type { ScannedFile, ScanResult, ScanSkipReason, SkippedEntry } from "./types.js";

export { DEFAULT_EXCLUDED_DIRS } from "./excluded-dirs.js";

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** The `detail` of a file skipped because it is another name (a hard link) of a hidden file. */
const HARD_LINK_TO_HIDDEN = "a hard link to a file hidden by .umbraignore / .cursorignore";
/** Files and folders below hidden folders whose inodes are collected at most (only when hard links exist). */
const MAX_HIDDEN_INODES = 20_000;

export interface ScanOptions {
  /** Files larger than this are skipped as "too-large". Default 1 MiB. */
  maxFileBytes?: number;
  /**
   * Folders to skip: a bare name matches at any depth, a name with a slash matches that path from the
   * root. Replaces DEFAULT_EXCLUDED_DIRS when given (`.git` is always skipped). The default list never
   * drops what git tracks: in a git repository, the tracked files of a folder such as `build/` or
   * `vendor/` are scanned (its untracked files are not); a list given here applies as it is.
   */
  excludeDirs?: readonly string[];
  /** Follow symlinks that stay inside the root. Default false: every symlink is skipped. */
  followSymlinks?: boolean;
  signal?: AbortSignal;
  /** Git's global excludes file; null for none; undefined (default) to find it the way git does. */
  globalExcludesFile?: string | null;
  /** Folders read at once. Default 32. */
  concurrency?: number;
}

type EntryKind = "dir" | "file" | "symlink" | "special";

/** Real paths of a folder and its ancestors in the walk, for symlink loop detection. */
interface Chain {
  real: string;
  parent: Chain | undefined;
}

interface DirVisit {
  abs: string;
  rel: string;
  /** Real (symlink-free) path of the folder. */
  real: string;
  context: IgnoreContext;
  chain: Chain;
  /** Inside a default-excluded folder that git tracks: only tracked files and folders are listed. */
  tracked?: TrackedPaths;
}

/** How many files are stat'ed synchronously before the walk lets the event loop run. */
const STATS_PER_TURN = 128;

function joinRel(parent: string, name: string): string {
  return parent === "" ? name : `${parent}/${name}`;
}

function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function kindOfDirent(entry: Dirent): EntryKind | undefined {
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "dir";
  if (entry.isSymbolicLink()) return "symlink";
  if (entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice())
    return "special";
  return undefined;
}

function kindOfStats(stats: Stats): EntryKind {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "dir";
  if (stats.isSymbolicLink()) return "symlink";
  return "special";
}

function isInside(realRoot: string, target: string): boolean {
  return target === realRoot || target.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
}

function onChain(chain: Chain | undefined, real: string): boolean {
  for (let link = chain; link; link = link.parent) if (link.real === real) return true;
  return false;
}

async function readRoot(root: string): Promise<{ realRoot: string; entries: Dirent[] }> {
  const realRoot = await resolveRoot(root);
  try {
    return { realRoot, entries: await readdir(root, { withFileTypes: true }) };
  } catch (error) {
    throw rootReadError(root, error);
  }
}

/** Rules that apply from the root down before any .gitignore: global excludes, then .git/info/exclude. */
async function rootGitRules(
  root: string,
  globalExcludesFile: string | null | undefined,
): Promise<SourcedPattern[]> {
  const [globalFile, infoExclude] = await Promise.all([
    globalExcludesFile === undefined ? findGlobalExcludesFile() : (globalExcludesFile ?? undefined),
    findInfoExclude(root),
  ]);
  const [globalText, infoText, enclosing] = await Promise.all([
    globalFile ? readOptionalText(resolve(root, globalFile)) : undefined,
    infoExclude ? readOptionalText(infoExclude) : undefined,
    enclosingRepositoryRules(root),
  ]);
  return [
    ...(globalText && globalFile ? parseIgnoreFile(globalText, "", globalFile) : []),
    ...enclosing,
    ...(infoText ? parseIgnoreFile(infoText, "", ".git/info/exclude") : []),
  ];
}

/**
 * Lists the files of the folder `root` that umbra may work with, honouring git's ignore rules (nested
 * .gitignore files, .git/info/exclude, the global excludes file), .umbraignore and .cursorignore files,
 * default excluded folders, a size limit and the symlink policy. Ignored and excluded folders are not
 * entered. Reads only; never writes inside `root`. Throws WorkspaceError when the root itself is missing,
 * not a folder or unreadable; anything below the root that cannot be read is listed in `skipped`.
 */
export async function scanWorkspace(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  const { signal } = options;
  signal?.throwIfAborted();
  const absRoot = resolve(root);
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const followSymlinks = options.followSymlinks ?? false;
  const isExcludedDir = excludedDirMatcher(options.excludeDirs ?? DEFAULT_EXCLUDED_DIRS);
  // Read from the git index on the first excluded folder met, and only for the default list.
  let tracked: Promise<TrackedPaths | undefined> | undefined;
  const trackedPaths = (): Promise<TrackedPaths | undefined> => {
    if (options.excludeDirs) return Promise.resolve(undefined);
    tracked ??= trackedExcludedPaths(absRoot, new Set(DEFAULT_EXCLUDED_DIRS));
    return tracked;
  };
  const checkReadable = createReadCheck();
  const limit = createLimiter(options.concurrency ?? 32);
  // File metadata is read with lstatSync in short runs: on a local disk it is several times faster than
  // one promise per file, and the pacer keeps the event loop turning.
  const pace = createPacer(STATS_PER_TURN);

  const [{ realRoot, entries: rootEntries }, globalRules] = await Promise.all([
    readRoot(absRoot),
    rootGitRules(absRoot, options.globalExcludesFile),
  ]);

  const files: ScannedFile[] = [];
  const skipped: SkippedEntry[] = [];
  const linkedDirs = new Set<string>();
  /** Files with more than one name, by path: each may be a hidden file under a visible name. */
  const hardLinked = new Map<string, string>();
  /** Absolute paths of what the .umbraignore / .cursorignore rules hide (files and folders). */
  const hidden: string[] = [];
  const noteHidden = (context: IgnoreContext, rel: string, abs: string, isDir: boolean): void => {
    if (context.umbra && matchIgnore({ umbra: context.umbra }, rel, isDir)) hidden.push(abs);
  };

  const skip = (path: string, reason: ScanSkipReason, detail?: string, dir?: boolean): void => {
    const entry: SkippedEntry = { path, reason };
    if (detail !== undefined) entry.detail = detail;
    if (dir) entry.dir = true;
    skipped.push(entry);
  };

  const addFile = (rel: string, abs: string, stats: Stats): void => {
    if (stats.size > maxFileBytes) {
      skip(rel, "too-large", `${stats.size} bytes > limit of ${maxFileBytes}`);
      return;
    }
    const unreadable = checkReadable(abs, stats);
    if (unreadable !== undefined) skip(rel, "unreadable", unreadable);
    else files.push({ path: rel, size: stats.size, mtimeMs: stats.mtimeMs });
    if (unreadable === undefined && stats.nlink > 1) hardLinked.set(rel, inodeKey(stats));
  };

  const loadRules = async (visit: DirVisit, entries: Dirent[]): Promise<IgnoreContext> => {
    const present = new Set<string>();
    for (const entry of entries) {
      if (IGNORE_FILE_NAMES.has(entry.name) && (entry.isFile() || kindOfDirent(entry) === undefined)) {
        present.add(entry.name);
      }
    }
    if (present.size === 0) return visit.context;
    const read = async (name: string): Promise<SourcedPattern[]> => {
      if (!present.has(name)) return [];
      const text = await limit(() => readOptionalText(`${visit.abs}${sep}${name}`));
      return text === undefined ? [] : parseIgnoreFile(text, visit.rel, joinRel(visit.rel, name));
    };
    const [git, ...umbra] = await Promise.all([read(".gitignore"), ...UMBRA_IGNORE_FILES.map(read)]);
    return {
      git: extendRules(visit.context.git, git ?? []),
      umbra: extendRules(visit.context.umbra, umbra.flat()),
    };
  };

  const visitLink = async (
    visit: DirVisit,
    context: IgnoreContext,
    name: string,
    rel: string,
  ): Promise<void> => {
    const abs = `${visit.abs}${sep}${name}`;
    if (!followSymlinks) {
      const mark = matchIgnore(context, rel, false);
      return mark ? skip(rel, "ignored", mark) : skip(rel, "symlink", "symlinks are not followed");
    }
    let target: string;
    let stats: Stats;
    try {
      [target, stats] = await limit(() => Promise.all([realpath(abs), stat(abs)]));
    } catch (error) {
      const mark = matchIgnore(context, rel, false);
      if (mark) return skip(rel, "ignored", mark);
      return skip(rel, "symlink", errorCode(error) === "ENOENT" ? "broken link" : describeFsError(error));
    }
    const kind = kindOfStats(stats);
    const isDir = kind === "dir";
    if (isDir && isExcludedDir(name, rel)) return skip(rel, "excluded-dir", undefined, true);
    const mark = matchIgnore(context, rel, isDir);
    if (mark) return skip(rel, "ignored", mark, isDir);
    if (!isInside(realRoot, target)) return skip(rel, "symlink", "points outside the workspace", isDir);
    if (kind === "file") return addFile(rel, abs, stats);
    if (!isDir) return skip(rel, "special", "socket, fifo or device");
    if (onChain(visit.chain, target)) return skip(rel, "symlink", "link loop", true);
    if (linkedDirs.has(target))
      return skip(rel, "symlink", "target already scanned through another link", true);
    linkedDirs.add(target);
    return walk({ abs, rel, real: target, context, chain: { real: target, parent: visit.chain } });
  };

  /**
   * Starts the walk of a subfolder, unless it is excluded or ignored. A default-excluded folder that git
   * tracks is walked for its tracked files only.
   */
  const enterDir = async (
    visit: DirVisit,
    context: IgnoreContext,
    name: string,
    rel: string,
  ): Promise<void> => {
    let inTracked = visit.tracked;
    if (inTracked ? !inTracked.dirs.has(rel) : isExcludedDir(name, rel)) {
      const known = inTracked ? undefined : await trackedPaths();
      if (!known?.dirs.has(rel)) {
        return skip(
          rel,
          "excluded-dir",
          inTracked ? "untracked, inside a default-excluded folder" : undefined,
          true,
        );
      }
      inTracked = known;
    }
    const mark = matchIgnore(context, rel, true);
    if (mark) {
      noteHidden(context, rel, `${visit.abs}${sep}${name}`, true);
      return skip(rel, "ignored", mark, true);
    }
    const real = `${visit.real}${visit.real.endsWith(sep) ? "" : sep}${name}`;
    const abs = `${visit.abs}${sep}${name}`;
    const chain = { real, parent: visit.chain };
    return walk({ abs, rel, real, context, chain, ...(inTracked ? { tracked: inTracked } : {}) });
  };

  /** lstat of one file, or undefined when that failed (the reason is recorded in `skipped`). */
  const lstatFile = (abs: string, rel: string): Stats | undefined => {
    try {
      const stats = lstatSync(abs, { throwIfNoEntry: false });
      if (!stats) skip(rel, "unreadable", "vanished during scan");
      return stats;
    } catch (error) {
      skip(rel, "unreadable", describeFsError(error));
      return undefined;
    }
  };

  const walk = async (visit: DirVisit, known?: Dirent[]): Promise<void> => {
    signal?.throwIfAborted();
    let entries = known;
    if (!entries) {
      try {
        entries = await limit(() => readdir(visit.abs, { withFileTypes: true }));
      } catch (error) {
        return skip(visit.rel, "unreadable", describeFsError(error), true);
      }
    }
    const context = await loadRules(visit, entries);
    // Subfolder walks run while this folder's files are stat'ed. Each is marked handled at once: if the
    // walk is aborted before they are awaited below, their rejections must not surface as unhandled.
    const pending: Promise<void>[] = [];
    const track = (walking: Promise<void>): void => {
      walking.catch(() => {});
      pending.push(walking);
    };
    const plainFiles: { name: string; stats?: Stats }[] = [];
    const unknown: string[] = [];

    const route = (name: string, kind: EntryKind, stats?: Stats): void => {
      const rel = joinRel(visit.rel, name);
      if (kind === "dir") {
        track(enterDir(visit, context, name, rel));
      } else if (visit.tracked && !visit.tracked.files.has(rel)) {
        skip(rel, "excluded-dir", "untracked, inside a default-excluded folder");
      } else if (kind === "symlink") {
        track(visitLink(visit, context, name, rel));
      } else {
        const mark = matchIgnore(context, rel, false);
        if (mark) {
          noteHidden(context, rel, `${visit.abs}${sep}${name}`, false);
          skip(rel, "ignored", mark);
        } else if (kind === "special") skip(rel, "special", "socket, fifo or device");
        else plainFiles.push(stats ? { name, stats } : { name });
      }
    };

    for (const entry of entries) {
      const kind = kindOfDirent(entry);
      if (entry.name === ".git")
        skip(joinRel(visit.rel, entry.name), "excluded-dir", undefined, kind === "dir");
      else if (kind === undefined) unknown.push(entry.name);
      else route(entry.name, kind);
    }
    // The filesystem did not report these types (DT_UNKNOWN): lstat tells them apart.
    for (const name of unknown) {
      const stats = lstatFile(`${visit.abs}${sep}${name}`, joinRel(visit.rel, name));
      if (stats) route(name, kindOfStats(stats), stats);
    }
    for (const file of plainFiles) {
      const turn = pace();
      if (turn) {
        await turn;
        signal?.throwIfAborted();
      }
      const rel = joinRel(visit.rel, file.name);
      const abs = `${visit.abs}${sep}${file.name}`;
      const stats = file.stats ?? lstatFile(abs, rel);
      if (!stats) continue;
      if (stats.isFile()) addFile(rel, abs, stats);
      else skip(rel, "unreadable", "changed type during scan");
    }
    await Promise.all(pending);
  };

  const rootChain: Chain = { real: realRoot, parent: undefined };
  await walk(
    {
      abs: absRoot,
      rel: "",
      real: realRoot,
      context: { git: extendRules(undefined, globalRules) },
      chain: rootChain,
    },
    rootEntries,
  );
  signal?.throwIfAborted();

  const kept = hardLinked.size > 0 ? await withoutHiddenLinks(files, hardLinked, hidden, skip) : files;
  kept.sort(byPath);
  skipped.sort(byPath);
  return { files: kept, skipped };
}

/**
 * The paths among `paths` (relative to `root`) that are another name (a hard link) of a file the
 * .umbraignore / .cursorignore rules hide. Cheap when none has more than one name; else one scan.
 */
export async function hardLinksToHidden(root: string, paths: Iterable<string>): Promise<Set<string>> {
  const linked: string[] = [];
  for (const path of new Set(paths)) {
    const info = lstatSync(join(root, path), { throwIfNoEntry: false });
    if (info?.isFile() && info.nlink > 1) linked.push(path);
  }
  if (linked.length === 0) return new Set();
  const { skipped } = await scanWorkspace(root);
  const links = new Set(skipped.filter((entry) => entry.detail === HARD_LINK_TO_HIDDEN).map((e) => e.path));
  return new Set(linked.filter((path) => links.has(path)));
}

function inodeKey(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

/**
 * `files` without the other names of hidden files: a hard link `notes.txt` to a hidden `.env` holds the
 * secret under a name no rule matches. Only looked for when some file has more than one name.
 */
async function withoutHiddenLinks(
  files: ScannedFile[],
  hardLinked: ReadonlyMap<string, string>,
  hidden: readonly string[],
  skip: (path: string, reason: ScanSkipReason, detail?: string) => void,
): Promise<ScannedFile[]> {
  const inodes = new Set<string>();
  const collect = async (abs: string): Promise<void> => {
    if (inodes.size >= MAX_HIDDEN_INODES) return;
    const info = lstatSync(abs, { throwIfNoEntry: false });
    if (!info || info.isSymbolicLink()) return;
    if (!info.isDirectory()) {
      inodes.add(inodeKey(info));
      return;
    }
    const names = await readdir(abs).catch(() => [] as string[]);
    for (const name of names) await collect(`${abs}${sep}${name}`);
  };
  for (const abs of hidden) await collect(abs);
  return files.filter((file) => {
    const key = hardLinked.get(file.path);
    if (key === undefined || !inodes.has(key)) return true;
    skip(file.path, "ignored", HARD_LINK_TO_HIDDEN);
    return false;
  });
}
