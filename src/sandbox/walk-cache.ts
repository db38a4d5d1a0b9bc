/**
 * The cache file of the workspace walk (one per workspace, in umbra's data directory): what the walk
 * keeps of each folder, by its workspace-relative path. Read on every `umbra run`, so it is kept small
 * and cheap to check: fields that hold nothing (an empty list, false, "") are left out of the file, and
 * each record is checked by hand (a schema library costs more than the rest of a cached walk of tens of
 * thousands of folders). A file that is not exactly of this form is not used.
 *
 * The file is two lines of JSON. The first holds what a walk of an unchanged workspace needs (the check):
 * the stamp of every folder below the root, those of their ignore files, the root's record and what the
 * folders below the root add to the result. The second holds every folder's record, for a walk that
 * finds a change. A run in an unchanged workspace reads the first line only and looks at each folder
 * once, with no per-folder record to build.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { PRIVATE_FILE, privateDirSync } from "../config/private.js";
import type { HiddenMask } from "./types.js";

/** What the walk keeps of one folder. */
export interface FolderRecord {
  /** The folder's stamp when it was listed; "" when too close to a change to be trusted. */
  stamp: string;
  /** The stamps of its .umbraignore/.cursorignore files ("?": not to be trusted). */
  rules: string;
  entries: number;
  /** Its ignore files (names; symlinks included, folders not; in an excluded folder, the umbra ones). */
  ignoreFiles: readonly string[];
  /** Its subfolders that the walk enters as workspace folders. */
  dirs: readonly string[];
  /** Its excluded subfolders (entered for the hiding rules only; looked at for a `.git` at their top on
   * every walk). */
  excluded: readonly string[];
  /** Whether it holds a `.git` entry that is not hidden. */
  git: boolean;
  /** Its entries hidden one by one. */
  hidden: readonly string[];
  /** Masked: the entries that stay visible (all others are matches). */
  keep?: string[];
  /** The root only. */
  codeWorkspaces?: readonly string[];
  gitIsDir?: boolean;
  umbraIsDir?: boolean;
  /** It looks like a git directory to git (see looksLikeGitDir in workspace-walk.ts). */
  bareGit?: boolean;
}

/** What a set of folders adds to the walk's result. */
export interface WalkSummary {
  /** Hidden paths (absolute). */
  hidden: string[];
  masks: HiddenMask[];
  /** Ignore files (absolute). */
  ignoreFiles: string[];
  /** Workspace-relative `.git` entries the folders hold. */
  gitEntries: string[];
  /** Workspace-relative excluded folders to look at for a `.git` at their top, on every walk. */
  excludedTops: string[];
  /** Workspace-relative folders that look like a git directory to git. */
  bareGitDirs: string[];
}

/** What a walk needs to tell, without the folders' records, that nothing changed. */
export interface WalkCheck {
  /** Every folder below the root and its stamp, in pairs: [rel, stamp, rel, stamp, …]. */
  stamps: string[];
  /** The folders below the root that hold umbra ignore files: [rel, their stamp, the names]. */
  rules: [string, string, string[]][];
  /** Entries of the folders below the root (for maxEntries). */
  entries: number;
  root: FolderRecord;
  below: WalkSummary;
}

/**
 * 7: the form of 5; the rules are matched by ignore-match.ts, which decides some patterns otherwise than
 * the `ignore` package did (as git does), so a cache of 6 may hide what they no longer match or not hide
 * what they do: not used. (6: a cache of 5 may leave out a folder named `__proto__`.)
 */
const CACHE_VERSION = 7;

const LISTS = ["ignoreFiles", "dirs", "excluded", "hidden"] as const;
const OPTIONAL_LISTS = ["keep", "codeWorkspaces"] as const;
const FLAGS = ["git", "gitIsDir", "umbraIsDir", "bareGit"] as const;
const FIELDS: ReadonlySet<string> = new Set([
  "stamp",
  "rules",
  "entries",
  ...LISTS,
  ...OPTIONAL_LISTS,
  ...FLAGS,
]);

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * The record a stored one stands for, or undefined when it is not one: the stored object itself, its
 * left-out fields filled in (empty lists shared: a cached walk of node_modules reads tens of thousands).
 */
function decodeRecord(value: unknown): FolderRecord | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const stored = value as Record<string, unknown>;
  for (const field of Object.keys(stored)) if (!FIELDS.has(field)) return undefined;
  stored.stamp ??= "";
  stored.rules ??= "";
  if (typeof stored.stamp !== "string" || typeof stored.rules !== "string") return undefined;
  if (typeof stored.entries !== "number") return undefined;
  for (const field of LISTS) {
    stored[field] ??= NONE;
    if (!isStrings(stored[field])) return undefined;
  }
  for (const field of OPTIONAL_LISTS)
    if (stored[field] !== undefined && !isStrings(stored[field])) return undefined;
  stored.git ??= false;
  for (const field of FLAGS)
    if (stored[field] !== undefined && typeof stored[field] !== "boolean") return undefined;
  return stored as unknown as FolderRecord;
}

/** The stored form of a record: what holds nothing is left out. */
function encodeRecord(record: FolderRecord): Partial<FolderRecord> {
  const stored: Partial<FolderRecord> = { entries: record.entries };
  if (record.stamp !== "") stored.stamp = record.stamp;
  if (record.rules !== "") stored.rules = record.rules;
  for (const field of LISTS) if (record[field].length > 0) stored[field] = record[field];
  if (record.keep) stored.keep = record.keep;
  if (record.codeWorkspaces) stored.codeWorkspaces = record.codeWorkspaces;
  for (const field of FLAGS) if (record[field]) stored[field] = true;
  return stored;
}

/** Whether two records of a folder hold the same listing (their stamps aside). */
export function sameListing(a: FolderRecord, b: FolderRecord): boolean {
  return (
    JSON.stringify(encodeRecord({ ...a, stamp: "" })) === JSON.stringify(encodeRecord({ ...b, stamp: "" }))
  );
}

function isMask(value: unknown): value is HiddenMask {
  if (typeof value !== "object" || value === null) return false;
  const { folder, keep } = value as Record<string, unknown>;
  return typeof folder === "string" && isStrings(keep) && Object.keys(value).length === 2;
}

function isSummary(value: unknown): value is WalkSummary {
  if (typeof value !== "object" || value === null) return false;
  const { hidden, masks, ignoreFiles, gitEntries, excludedTops, bareGitDirs } = value as Record<
    string,
    unknown
  >;
  return (
    isStrings(hidden) &&
    Array.isArray(masks) &&
    masks.every(isMask) &&
    isStrings(ignoreFiles) &&
    isStrings(gitEntries) &&
    isStrings(excludedTops) &&
    isStrings(bareGitDirs)
  );
}

function isRules(value: unknown): value is WalkCheck["rules"] {
  return (
    Array.isArray(value) &&
    value.every(
      (item) =>
        Array.isArray(item) &&
        item.length === 3 &&
        typeof item[0] === "string" &&
        typeof item[1] === "string" &&
        isStrings(item[2]),
    )
  );
}

/** The parsed line `index` of the cache `file` when the file is this version's, made for `key`. */
function readLine(file: string | undefined, key: string, index: 0 | 1): Record<string, unknown> | undefined {
  if (!file) return undefined;
  try {
    const bytes = readFileSync(file);
    const cut = bytes.indexOf(0x0a);
    if (cut < 0) return undefined;
    const header: unknown = JSON.parse(bytes.toString("utf8", 0, cut));
    if (typeof header !== "object" || header === null) return undefined;
    const { version, key: stored } = header as Record<string, unknown>;
    if (version !== CACHE_VERSION || stored !== key) return undefined;
    const line: unknown = index === 0 ? header : JSON.parse(bytes.toString("utf8", cut + 1));
    return typeof line === "object" && line !== null && !Array.isArray(line)
      ? (line as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The check of the cache `file` made for `key`; undefined when there is none or it is not valid. */
export function readCheck(file: string | undefined, key: string): WalkCheck | undefined {
  const check = readLine(file, key, 0)?.check;
  if (typeof check !== "object" || check === null) return undefined;
  const { stamps, rules, entries, root, below } = check as Record<string, unknown>;
  const top = decodeRecord(root);
  if (!isStrings(stamps) || stamps.length % 2 !== 0 || !isRules(rules) || typeof entries !== "number")
    return undefined;
  return top && isSummary(below) ? { stamps, rules, entries, root: top, below } : undefined;
}

/**
 * The folders of the cache `file` made for `key`, by workspace-relative path; none when it is missing,
 * another's or not valid. A Map: a folder may be named `__proto__` or `constructor`.
 */
export function readCache(file: string | undefined, key: string): Map<string, FolderRecord> {
  const folders = readLine(file, key, 1);
  const out = new Map<string, FolderRecord>();
  if (!folders) return out;
  // JSON.parse makes every key an own property, `__proto__` included
  for (const [rel, value] of Object.entries(folders)) {
    const record = decodeRecord(value);
    if (!record) return new Map();
    out.set(rel, record);
  }
  return out;
}

/** Writes the cache (0600 in a 0700 folder) through a rename: a reader sees the old file or the new. */
export function writeCache(
  file: string,
  key: string,
  folders: ReadonlyMap<string, FolderRecord>,
  check: WalkCheck | undefined,
): void {
  // Object.fromEntries defines own properties: a folder named `__proto__` is kept as one
  const stored = Object.fromEntries([...folders].map(([rel, record]) => [rel, encodeRecord(record)]));
  const header = {
    version: CACHE_VERSION,
    key,
    ...(check ? { check: { ...check, root: encodeRecord(check.root) } } : {}),
  };
  try {
    privateDirSync(dirname(file));
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(header)}\n${JSON.stringify(stored)}`, { mode: PRIVATE_FILE });
    renameSync(tmp, file);
  } catch {
    // a cache that cannot be written only costs the next walk its time
  }
}
