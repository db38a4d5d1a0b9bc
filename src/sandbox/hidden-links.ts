/**
 * Other names of hidden files. The sandbox hides names (it mounts over paths), and a hard link is the
 * same file under another name: a `notes.txt` made by `ln .env notes.txt` before the run would show the
 * secret. So every other name inside the workspace of a hidden file is hidden like the file itself.
 *
 * A file with one link (st_nlink 1) has no other name, so the common case costs one lstat per hidden
 * file: only when a hidden file has more than one link does umbra walk the workspace (lstat, device and
 * inode compared) for its other names, every folder but hidden ones (excluded folders such as
 * node_modules and `.git` included: a link can sit anywhere), and it stops once every link is found.
 * A link made during a run cannot reach a hidden file: the command sees a stand-in (another inode, on
 * another filesystem: EXDEV) or nothing at all where the hidden name was.
 *
 * The result is kept beside the policy walk's cache and used again while the walk finds the workspace
 * unchanged (no folder listed again, the walk's cache file the same) for the same hidden paths: a new
 * name in the workspace is a new entry of one of its folders, which the walk sees. What it cannot see
 * is a visible file given a second name inside a hidden folder or outside the workspace (`ln notes.txt
 * ~/.ssh/x`): a file whose content was visible already; it is hidden from the next change on.
 */
import { createHash } from "node:crypto";
import { type Dirent, lstatSync, readdirSync, type Stats } from "node:fs";
import { sep } from "node:path";
import { fileIdentity, KEPT_VERSION, readKept, writeKept } from "./links-cache.js";
import type { HiddenMask } from "./types.js";

/** Hidden entries looked at (lstat) at most, as the file door caps its collection of hidden inodes. */
export const MAX_HIDDEN_ENTRIES = 20_000;
/** Workspace entries looked at at most (the policy walk's own limit). */
const MAX_WORKSPACE_ENTRIES = 1_000_000;

/** What the file system's decoding puts for bytes of a name that are not UTF-8. */
const LOST_BYTES = "\uFFFD";

export interface HiddenLinksInput {
  /** The workspace (absolute, symlink-free): where other names are looked for. */
  workspace: string;
  /** The hidden paths (absolute; files and folders, inside the workspace or not). */
  hiddenPaths: readonly string[];
  /** The masked folders (every entry hidden but the kept ones). */
  masks: readonly HiddenMask[];
  /** Hidden entries looked at at most (default MAX_HIDDEN_ENTRIES). */
  maxHidden?: number;
  /** Workspace entries looked at at most (default 1,000,000). */
  maxWorkspace?: number;
  /** Where the result is kept, and whether the policy walk found the workspace unchanged. */
  cache?: LinksCache;
}

export interface LinksCache {
  /** The result's file (in the data directory, beside the walk's cache). */
  file: string;
  /** The policy walk's cache file: the result is tied to the walk that wrote it. */
  walkFile: string;
  /** The policy walk listed no folder again: nothing changed in the workspace since it was cached. */
  unchanged: boolean;
}

export interface HiddenLinks {
  /** Other names of hidden files inside the workspace (absolute, sorted), to hide as well. */
  paths: string[];
  /** Folders to mask: those holding another name that is not UTF-8 (it cannot be named to the helper). */
  masks: HiddenMask[];
  /** What could not be looked at in full (one line each), so that some other names may stay readable. */
  warnings: string[];
  /** Whether the workspace was walked (some hidden file has another name that is not hidden itself). */
  searched: boolean;
}

/** A file with more than one link: its link count and the names of it known so far. */
interface Linked {
  nlink: number;
  names: Set<string>;
}

function inodeKey(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

function lstatOrNone(path: string | Buffer): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function entriesOf(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
}

function below(folder: string): string {
  return folder.endsWith(sep) ? folder : folder + sep;
}

/**
 * The other names, inside `workspace`, of the hidden files: those of the hidden paths (a folder: every
 * file below it), of the hidden entries of masked folders, inside the workspace or outside it (home
 * credentials). Symlinks are not followed and not counted (a link itself holds no data).
 *
 * Past `maxHidden` hidden entries, the rest of the hidden files are not looked at; the workspace is then
 * walked in full, and a file there whose other names are not all found visible in it could be a hidden
 * file's: a warning says how many, with the first of them (they stay readable).
 */
export function findHiddenLinks(input: HiddenLinksInput): HiddenLinks {
  const { cache } = input;
  if (!cache) return lookForLinks(input);
  const walk = fileIdentity(cache.walkFile);
  const key = createHash("sha256")
    .update(
      JSON.stringify([input.workspace, input.hiddenPaths, input.masks, input.maxHidden, input.maxWorkspace]),
    )
    .digest("hex");
  if (walk && cache.unchanged) {
    const kept = readKept(cache.file);
    if (kept && kept.key === key && kept.walk === walk)
      return { paths: kept.paths, masks: kept.masks, warnings: kept.warnings, searched: false };
  }
  const result = lookForLinks(input);
  if (walk)
    writeKept(cache.file, {
      version: KEPT_VERSION,
      key,
      walk,
      paths: result.paths,
      masks: result.masks,
      warnings: result.warnings,
    });
  return result;
}

function lookForLinks(input: HiddenLinksInput): HiddenLinks {
  const maxHidden = input.maxHidden ?? MAX_HIDDEN_ENTRIES;
  const maxWorkspace = input.maxWorkspace ?? MAX_WORKSPACE_ENTRIES;
  const hidden = new Set(input.hiddenPaths);
  const kept = new Map(input.masks.map((mask) => [mask.folder, new Set(mask.keep)]));
  const linked = new Map<string, Linked>();
  const warnings: string[] = [];
  let looked = 0;
  let cut: string | undefined;

  const note = (path: string, stats: Stats): void => {
    const key = inodeKey(stats);
    const known = linked.get(key);
    if (known) known.names.add(path);
    else linked.set(key, { nlink: stats.nlink, names: new Set([path]) });
  };
  /** Looks at a hidden entry (`isDir`: known to be a folder, from its folder's listing). */
  const collect = (path: string, isDir?: boolean): void => {
    if (cut !== undefined) return;
    if (++looked > maxHidden) {
      cut = path;
      return;
    }
    let stats: Stats | undefined;
    if (!isDir) {
      stats = lstatOrNone(path);
      if (!stats || stats.isSymbolicLink()) return;
    }
    if (isDir || stats?.isDirectory()) {
      const prefix = below(path);
      for (const entry of entriesOf(path))
        if (!entry.isSymbolicLink()) collect(prefix + entry.name, entry.isDirectory());
      return;
    }
    if (stats && stats.nlink > 1) note(path, stats);
  };
  for (const path of input.hiddenPaths) collect(path);
  for (const mask of input.masks) {
    const keep = kept.get(mask.folder);
    const prefix = below(mask.folder);
    for (const entry of entriesOf(mask.folder))
      if (!keep?.has(entry.name) && !entry.isSymbolicLink())
        collect(prefix + entry.name, entry.isDirectory());
  }

  const unfound = () => [...linked.values()].some((file) => file.names.size < file.nlink);
  if (cut === undefined && !unfound()) return { paths: [], masks: [], warnings, searched: false };

  // The workspace's visible files with another name, when some hidden files were not looked at.
  const others = new Map<string, Linked>();
  const paths: string[] = [];
  const masks: HiddenMask[] = [];
  let seen = 0;
  let done = false;
  const search = (folder: string): void => {
    const entries = entriesOf(folder);
    const keep = kept.get(folder);
    const prefix = below(folder);
    let lost = false;
    for (const entry of entries) {
      if (done) return;
      const path = prefix + entry.name;
      if ((keep && !keep.has(entry.name)) || hidden.has(path)) continue;
      if (++seen > maxWorkspace) {
        warnings.push(
          `the workspace has too many entries to look for every other name (hard link) of a hidden file; some may stay readable`,
        );
        done = true;
        return;
      }
      if (entry.isDirectory()) search(path);
      else if (entry.name.includes(LOST_BYTES)) lost = true;
      else if (!entry.isSymbolicLink()) found(path, lstatOrNone(path));
    }
    if (lost && !done && lostLinks(folder)) {
      const named = entries.filter(
        (entry) => !entry.name.includes(LOST_BYTES) && !hidden.has(prefix + entry.name),
      );
      masks.push({ folder, keep: named.map((entry) => entry.name).sort() });
    }
  };
  /** Whether an entry of `folder` whose name is not UTF-8 is another name of a hidden file. */
  const lostLinks = (folder: string): boolean => {
    let raw: Buffer[];
    try {
      raw = readdirSync(folder, { encoding: "buffer" });
    } catch {
      return false;
    }
    const prefix = Buffer.from(below(folder));
    return raw.some((name) => {
      if (!name.toString("utf8").includes(LOST_BYTES)) return false;
      const stats = lstatOrNone(Buffer.concat([prefix, name]));
      return stats !== undefined && linked.has(inodeKey(stats));
    });
  };
  const found = (path: string, stats: Stats | undefined): void => {
    if (!stats || stats.nlink < 2) return;
    const key = inodeKey(stats);
    const file = linked.get(key);
    if (file) {
      paths.push(path);
      file.names.add(path);
      if (cut === undefined && !unfound()) done = true;
      return;
    }
    if (cut === undefined) return;
    const other = others.get(key);
    if (other) other.names.add(path);
    else others.set(key, { nlink: stats.nlink, names: new Set([path]) });
  };
  search(input.workspace);

  if (cut !== undefined) {
    const unsure = [...others.values()].filter((file) => file.names.size < file.nlink);
    const first = unsure[0]?.names.values().next().value;
    if (first !== undefined)
      warnings.push(
        `more than ${maxHidden.toLocaleString("en")} hidden files (from ${cut}) were not looked at for other names (hard links): ${unsure.length} file(s) of the workspace with other names elsewhere, such as ${first}, may be one of them and stay readable`,
      );
  }
  return { paths: paths.sort(), masks, warnings, searched: true };
}
