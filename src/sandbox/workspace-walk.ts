/**
 * The workspace walk of the sandbox policy: what the .umbraignore and .cursorignore rules hide, and the
 * ignore files, editor and umbra settings to protect. Its result is cached in umbra's data directory,
 * folder by folder, so that a run in an unchanged workspace lists no folder again: each folder is
 * checked by its stamp (device, inode, change and modification time) and its ignore files by theirs.
 * A file added, removed or renamed in a folder changes the folder's times, and its change time cannot be
 * set back by a process (utimes sets it to now), so a changed folder is always listed again; a changed
 * ignore file lists again every folder below its own.
 *
 * Excluded folders (node_modules, build output, the configured `index.excludeDirs`, …) are walked for
 * the hiding rules like any other (a secret or an ignore file there is hidden like anywhere else), but
 * nothing else is looked for inside them: no nested `.git`, no git-only ignore file, no subfolder that
 * is entered in a different way. A workspace's configuration can choose which folders are excluded; it
 * cannot make a folder escape the rules.
 */
import { type Dirent, lstatSync, readdirSync, type Stats, statSync } from "node:fs";
import { join, sep } from "node:path";
import { DEFAULT_EXCLUDED_DIRS, excludedDirMatcher } from "../workspace/excluded-dirs.js";
import type { IgnoreRules } from "../workspace/ignore-match.js";
import {
  extendRules,
  IGNORE_FILE_NAMES,
  matchIgnore,
  parseIgnoreFile,
  readOptionalTextSync,
  UMBRA_IGNORE_FILES,
} from "../workspace/ignore-rules.js";
import { FEW, masksFolder, ROOT_FEW } from "./hidden-masks.js";
import type { HiddenMask } from "./types.js";
import {
  type FolderRecord,
  readCache,
  readCheck,
  sameListing,
  type WalkCheck,
  type WalkSummary,
  writeCache,
} from "./walk-cache.js";

const UMBRA_IGNORE_NAMES: ReadonlySet<string> = new Set(UMBRA_IGNORE_FILES);

/** Folders of `.umbra/` that agents may write (everything else there is protected). */
export const AGENT_WRITABLE_UMBRA_DIRS: readonly string[] = Object.freeze(["rules", "notes"]);

export interface WorkspacePaths {
  /** Absolute paths matched by .umbraignore / .cursorignore (a matched folder is listed, not its files),
   * but those of masked folders. */
  hidden: string[];
  /** Folders that hold more matches than other entries, as the entries that stay visible (sorted). */
  masks: HiddenMask[];
  /** Ignore files found at any depth (absolute); inside excluded folders only .umbraignore/.cursorignore. */
  ignoreFiles: string[];
  /** `*.code-workspace` files at the root (absolute). */
  codeWorkspaces: string[];
  /** Entries of `.umbra/` other than the agent-writable folders (absolute). */
  umbraEntries: string[];
  /** `.git` is a folder (not a worktree's `.git` file). */
  gitIsDir: boolean;
  /**
   * Workspace-relative `.git` entries of any type (the top one and nested repositories or gitlinks),
   * outside hidden folders, and at the top of excluded ones (`dist/.git`); `.git` folders are not entered.
   */
  gitEntries: string[];
  /**
   * Workspace-relative folders, outside `.git` folders and excluded ones, that look like a git directory
   * to git (see looksLikeGitDir): git run in them or below uses their configuration and hooks.
   */
  bareGitDirs: string[];
  /** `.umbra` is a folder. */
  umbraIsDir: boolean;
  /** The walk stopped at `maxEntries`: the hidden paths may be incomplete. */
  truncated: boolean;
  /** Folders listed in this walk (absent from the cache, or changed); the others came from the cache. */
  listed: number;
}

export interface FindWorkspacePathsOptions {
  /** Folders searched for hiding rules and their matches only (default: DEFAULT_EXCLUDED_DIRS). */
  excludeDirs?: readonly string[];
  /** Stop after this many directory entries (default 1,000,000). */
  maxEntries?: number;
  /** Writable roots (absolute): such a folder is masked only past ROOT_FEW matches (see hidden-masks). */
  writableRoots?: readonly string[];
  /** The cache file of this workspace's walk (in the data directory); none: every folder is listed. */
  cacheFile?: string;
}

/**
 * How close to the walk (ms) a change makes a stamp untrustworthy: a folder changed again within the
 * same tick of the filesystem's clock would keep its stamp ("racy git"). Covers coarse clocks. Times are
 * kept as milliseconds with their fraction (sub-microsecond today), which is enough: a stamp is trusted
 * only this long after the folder's last change, so any later change moves its change time by more.
 */
const RACY_MS = 2_000;

function stampOf(stats: Stats, racyAfter: number): string {
  if (stats.ctimeMs > racyAfter || stats.mtimeMs > racyAfter) return "";
  return `${stats.dev}:${stats.ino}:${stats.ctimeMs}:${stats.mtimeMs}`;
}

/** The stamps of the umbra ignore files among `names` of folder `abs`: their contents, as followed. */
function rulesStamp(abs: string, names: readonly string[], racyAfter: number): string {
  const parts: string[] = [];
  for (const name of names) {
    if (!(UMBRA_IGNORE_FILES as readonly string[]).includes(name)) continue;
    let stats: Stats;
    try {
      stats = statSync(join(abs, name));
    } catch {
      parts.push(`${name}:-`);
      continue;
    }
    if (stats.ctimeMs > racyAfter || stats.mtimeMs > racyAfter) return "?";
    parts.push(`${name}:${stats.ino}:${stats.size}:${stats.ctimeMs}:${stats.mtimeMs}`);
  }
  return parts.join("|");
}

/**
 * Walks the workspace (`root`: absolute, symlink-free) with the rules of every .umbraignore and
 * .cursorignore (git syntax, nested, negation) — the same parser and matcher as the workspace scan — and
 * lists what they match. Unlike the scan, git-ignored folders are entered (a secret is often git-ignored
 * too), and so are excluded folders (node_modules, build output, …: for the hiding rules only); `.git`
 * folders are not, though they are hidden themselves when a rule matches them. Symlinks are matched as
 * entries and never followed. A folder with more matches than other entries comes back as a mask (see
 * hidden-masks.ts).
 */
export function findWorkspacePaths(root: string, options: FindWorkspacePathsOptions = {}): WorkspacePaths {
  const excludeDirs = options.excludeDirs ?? DEFAULT_EXCLUDED_DIRS;
  const isExcluded = excludedDirMatcher(excludeDirs);
  const maxEntries = options.maxEntries ?? 1_000_000;
  const roots = new Set(options.writableRoots ?? []);
  const key = JSON.stringify({ root, excludeDirs, maxEntries, roots: [...roots].sort() });
  // Maps, by workspace-relative path: a folder may be named `__proto__` or `constructor`
  let cached = new Map<string, FolderRecord>();
  const folders = new Map<string, FolderRecord>();
  const racyAfter = Date.now() - RACY_MS;
  let seen = 0;
  let truncated = false;
  let listed = 0;

  /** Lists the folder and matches its entries with the rules `rulesFor` makes of its ignore files (the
   * parent's and its own); `excluded`: the folder is (inside) an excluded one. */
  const list = (
    abs: string,
    rel: string,
    rulesFor: (names: readonly string[]) => () => IgnoreRules | undefined,
    stamp: string,
    excluded: boolean,
  ): { record: FolderRecord; rules: () => IgnoreRules | undefined } | undefined => {
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return undefined;
    }
    listed++;
    const names: ReadonlySet<string> = excluded ? UMBRA_IGNORE_NAMES : IGNORE_FILE_NAMES;
    const ignoreFiles = entries
      .filter((entry) => names.has(entry.name) && !entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    // Stamped before they are read: a change after this shows in the next walk.
    const rulesNow = rulesStamp(abs, ignoreFiles, racyAfter);
    const hidden: string[] = [];
    const dirs: string[] = [];
    const excludedDirs: string[] = [];
    let git = false;
    // only the ignore files it holds are read (most folders, those of node_modules above all, have none)
    const rules = rulesFor(ignoreFiles);
    const umbra = rules();
    const keep: string[] = [];
    let keptMounts = 0;
    for (const entry of entries) {
      const name = entry.name;
      const isDir = entry.isDirectory();
      const childRel = rel === "" ? name : `${rel}/${name}`;
      if (name === ".git" && rel === "") {
        keep.push(name);
        keptMounts++;
        git = true;
        continue;
      }
      if (umbra && matchIgnore({ umbra }, childRel, isDir)) {
        hidden.push(name);
        continue;
      }
      keep.push(name);
      if (!entry.isSymbolicLink()) keptMounts++;
      if (name === ".git") git ||= !excluded;
      else if (!isDir) continue;
      else if (excluded) dirs.push(name);
      else if (isExcluded(name, childRel)) excludedDirs.push(name);
      else dirs.push(name);
    }
    const record: FolderRecord = {
      stamp,
      rules: rulesNow,
      entries: entries.length,
      ignoreFiles,
      dirs,
      excluded: excludedDirs,
      git,
      hidden,
    };
    if (!excluded && looksLikeGitDir(entries.map((entry) => entry.name))) record.bareGit = true;
    const few = roots.has(abs) ? ROOT_FEW : FEW;
    // A name that is not UTF-8 reaches here with U+FFFD in place of its bytes, so it cannot be named to
    // the sandbox (nor this folder entered): when it is a match or a folder, the folder is masked and
    // keeps only the names it can name. Hiding too much of such names is the safe side.
    const unnamable = entries.some(
      (entry) => entry.name.includes(LOST_BYTES) && (entry.isDirectory() || hidden.includes(entry.name)),
    );
    if (abs !== sep && (unnamable || masksFolder(hidden.length, keptMounts, few))) {
      const named = (name: string) => !name.includes(LOST_BYTES);
      record.keep = keep.filter(named).sort();
      record.hidden = [];
      record.dirs = dirs.filter(named);
      record.excluded = excludedDirs.filter(named);
    }
    if (rel === "") {
      record.codeWorkspaces = entries
        .filter((entry) => entry.name.endsWith(".code-workspace") && !entry.isDirectory())
        .map((entry) => entry.name);
      record.gitIsDir = entries.some((entry) => entry.name === ".git" && entry.isDirectory());
      record.umbraIsDir = entries.some((entry) => entry.name === ".umbra" && entry.isDirectory());
    }
    return { record, rules };
  };

  /** `parentRules` gives the rules in force in the parent (computed only when a folder is listed);
   * `fresh`: the rules changed at or above this folder, so nothing below comes from the cache;
   * `excluded`: the folder is (inside) an excluded one. */
  const visit = (
    abs: string,
    rel: string,
    parentRules: () => IgnoreRules | undefined,
    fresh: boolean,
    excluded: boolean,
  ): void => {
    if (truncated) return;
    const stats = folderStats(abs);
    if (!stats) return;
    const stamp = stampOf(stats, racyAfter);
    const old = fresh ? undefined : cached.get(rel);
    const ownRules = (names: readonly string[]) => rulesOf(abs, rel, names, parentRules);
    let record: FolderRecord | undefined;
    let rules: () => IgnoreRules | undefined;
    let childrenFresh = fresh;
    if (
      old &&
      stamp !== "" &&
      old.stamp === stamp &&
      old.rules !== "?" &&
      rulesStamp(abs, old.ignoreFiles, racyAfter) === old.rules
    ) {
      record = old;
      rules = ownRules(record.ignoreFiles);
    } else {
      const listing = list(abs, rel, ownRules, stamp, excluded);
      if (!listing) return;
      ({ record, rules } = listing);
      childrenFresh = fresh || !old || old.rules !== record.rules || record.rules === "?";
    }
    seen += record.entries;
    if (seen > maxEntries) {
      truncated = true;
      return;
    }
    folders.set(rel, record);
    const prefix = abs.endsWith(sep) ? abs : abs + sep;
    for (const name of record.dirs)
      visit(prefix + name, rel === "" ? name : `${rel}/${name}`, rules, childrenFresh, excluded);
    for (const name of record.excluded)
      visit(prefix + name, rel === "" ? name : `${rel}/${name}`, rules, childrenFresh, true);
  };

  /**
   * The walk of a workspace in which nothing changed since the check was cached: every folder below the
   * root and its ignore files as stamped, the root listed again when its stamp changed (the sandbox's
   * stand-ins for missing protected paths come and go there) and found the same. Undefined otherwise.
   */
  const unchanged = (check: WalkCheck): WorkspacePaths | undefined => {
    const prefix = root.endsWith(sep) ? root : root + sep;
    const { stamps } = check;
    for (let i = 0; i < stamps.length; i += 2) {
      const stats = folderStats(prefix + stamps[i]);
      if (!stats || stampOf(stats, racyAfter) !== stamps[i + 1]) return undefined;
    }
    for (const [rel, stamp, names] of check.rules)
      if (rulesStamp(prefix + rel, names, racyAfter) !== stamp) return undefined;
    let top = check.root;
    const stats = folderStats(root);
    if (!stats) return undefined;
    const stamp = stampOf(stats, racyAfter);
    const same = stamp !== "" && stamp === top.stamp && top.rules !== "?";
    if (!same || rulesStamp(root, top.ignoreFiles, racyAfter) !== top.rules) {
      const again = list(
        root,
        "",
        (names) => rulesOf(root, "", names, () => undefined),
        stamp,
        false,
      )?.record;
      if (!again || again.rules === "?" || !sameListing(top, again)) return undefined;
      top = again;
    }
    if (top.entries + check.entries > maxEntries) return undefined;
    return finish(root, merge(summarize(root, new Map([["", top]])), check.below), top, false, listed);
  };
  const check = readCheck(options.cacheFile, key);
  const quick = check && unchanged(check);
  if (quick) return quick;

  listed = 0;
  cached = readCache(options.cacheFile, key);
  visit(root, "", () => undefined, false, false);
  if (options.cacheFile && !truncated) writeCache(options.cacheFile, key, folders, checkOf(root, folders));
  return finish(root, summarize(root, folders), folders.get(""), truncated, listed);
}

/** The rules in force in folder `abs` (`rel`) with its ignore files among `names`, read when first asked. */
function rulesOf(
  abs: string,
  rel: string,
  names: readonly string[],
  parentRules: () => IgnoreRules | undefined,
): () => IgnoreRules | undefined {
  let memo: { rules: IgnoreRules | undefined } | undefined;
  return () => {
    if (!memo) {
      const patterns = [];
      for (const name of UMBRA_IGNORE_FILES) {
        if (!names.includes(name)) continue;
        const text = readOptionalTextSync(join(abs, name));
        if (text !== undefined)
          patterns.push(...parseIgnoreFile(text, rel, rel === "" ? name : `${rel}/${name}`));
      }
      memo = { rules: extendRules(parentRules(), patterns) };
    }
    return memo.rules;
  };
}

/** What the folders (by workspace-relative path) add to the result; `below`: the root's left out. */
function summarize(root: string, folders: ReadonlyMap<string, FolderRecord>, below = false): WalkSummary {
  const summary: WalkSummary = {
    hidden: [],
    masks: [],
    ignoreFiles: [],
    gitEntries: [],
    excludedTops: [],
    bareGitDirs: [],
  };
  for (const [rel, record] of folders) {
    if ((below && rel === "") || isBare(record)) continue;
    const abs = rel === "" ? root : join(root, rel);
    const inside = (name: string) => (rel === "" ? name : `${rel}/${name}`);
    if (record.git) summary.gitEntries.push(inside(".git"));
    if (record.bareGit) summary.bareGitDirs.push(rel);
    for (const name of record.excluded) summary.excludedTops.push(inside(name));
    for (const name of record.hidden) summary.hidden.push(join(abs, name));
    for (const name of record.ignoreFiles) summary.ignoreFiles.push(join(abs, name));
    if (record.keep) summary.masks.push({ folder: abs, keep: record.keep });
  }
  return summary;
}

function merge(a: WalkSummary, b: WalkSummary): WalkSummary {
  return {
    hidden: [...a.hidden, ...b.hidden],
    masks: [...a.masks, ...b.masks],
    ignoreFiles: [...a.ignoreFiles, ...b.ignoreFiles],
    gitEntries: [...a.gitEntries, ...b.gitEntries],
    excludedTops: [...a.excludedTops, ...b.excludedTops],
    bareGitDirs: [...a.bareGitDirs, ...b.bareGitDirs],
  };
}

/** The check of a complete walk, or none when a stamp there is not to be trusted yet or a folder is
 * missing from it. */
function checkOf(root: string, folders: ReadonlyMap<string, FolderRecord>): WalkCheck | undefined {
  const top = folders.get("");
  if (!top) return undefined;
  const stamps: string[] = [];
  const rules: WalkCheck["rules"] = [];
  let entries = 0;
  for (const [rel, record] of folders) {
    // A subfolder the walk could not list (unreadable, or gone) is tried again by every walk.
    for (const name of [...record.dirs, ...record.excluded])
      if (!folders.has(rel === "" ? name : `${rel}/${name}`)) return undefined;
    if (rel === "") continue;
    if (record.stamp === "" || record.rules === "?") return undefined;
    stamps.push(rel, record.stamp);
    if (record.rules !== "") rules.push([rel, record.rules, [...record.ignoreFiles]]);
    entries += record.entries;
  }
  return { stamps, rules, entries, root: top, below: summarize(root, folders, true) };
}

/** The walk's result from what its folders add and the root's record. */
function finish(
  root: string,
  summary: WalkSummary,
  top: FolderRecord | undefined,
  truncated: boolean,
  listed: number,
): WorkspacePaths {
  const gitEntries = [...summary.gitEntries];
  // A repository planted at the top of an excluded folder (dist/.git) changes that folder, not the one
  // above: looked for on every walk, never taken from the cache.
  for (const rel of summary.excludedTops)
    if (entryExists(join(root, rel, ".git"))) gitEntries.push(`${rel}/.git`);
  const masks = [...summary.masks].sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
  const umbraEntries = (top?.umbraIsDir ? safeList(join(root, ".umbra")) : [])
    .filter((name) => !AGENT_WRITABLE_UMBRA_DIRS.includes(name))
    .map((name) => join(root, ".umbra", name));
  return {
    hidden: [...summary.hidden].sort(),
    masks,
    ignoreFiles: [...summary.ignoreFiles].sort(),
    codeWorkspaces: (top?.codeWorkspaces ?? []).map((name) => join(root, name)).sort(),
    umbraEntries: umbraEntries.sort(),
    gitIsDir: top?.gitIsDir ?? false,
    gitEntries: gitEntries.sort(),
    bareGitDirs: [...summary.bareGitDirs].sort(),
    umbraIsDir: top?.umbraIsDir ?? false,
    truncated,
    listed,
  };
}

/**
 * Whether a folder holding entries named `names` is a git directory to git (run in it or below it, git
 * uses it): a HEAD, and objects and refs of its own or in the folder its `commondir` names.
 */
export function looksLikeGitDir(names: readonly string[]): boolean {
  const has = (name: string) => names.includes(name);
  return has("HEAD") && (has("commondir") || (has("objects") && has("refs")));
}

/** What the file system's decoding puts for bytes of a name that are not UTF-8. */
const LOST_BYTES = "\uFFFD";

/** A folder that adds nothing to the result (most of those of node_modules). */
function isBare(record: FolderRecord): boolean {
  return (
    !record.git &&
    !record.bareGit &&
    !record.keep &&
    record.excluded.length === 0 &&
    record.hidden.length === 0 &&
    record.ignoreFiles.length === 0
  );
}

/** The stats of `path` when it is a folder (not a link to one). */
function folderStats(path: string): Stats | undefined {
  try {
    const stats = lstatSync(path);
    return stats.isDirectory() ? stats : undefined;
  } catch {
    return undefined;
  }
}

function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function safeList(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
