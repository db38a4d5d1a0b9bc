/**
 * The cache file of the workspace walk (one per workspace, in umbra's data directory): what the walk
 * keeps of each folder, by its workspace-relative path. Read on every `umbra run`, so it is kept small
 * and cheap to check: fields that hold nothing (an empty list, false, "") are left out of the file, and
 * each record is checked by hand (a schema library costs more than the rest of a cached walk of tens of
 * thousands of folders). A file that is not exactly of this form is not used.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** What the walk keeps of one folder. */
export interface FolderRecord {
  /** The folder's stamp when it was listed; "" when too close to a change to be trusted. */
  stamp: string;
  /** The stamps of its .umbraignore/.cursorignore files ("?": not to be trusted). */
  rules: string;
  entries: number;
  /** Its ignore files (names; symlinks included, folders not; in an excluded folder, the umbra ones). */
  ignoreFiles: string[];
  /** Its subfolders that the walk enters as workspace folders. */
  dirs: string[];
  /** Its excluded subfolders (entered for the hiding rules only; looked at for a `.git` at their top on
   * every walk). */
  excluded: string[];
  /** Whether it holds a `.git` entry that is not hidden. */
  git: boolean;
  /** Its entries hidden one by one. */
  hidden: string[];
  /** Masked: the entries that stay visible (all others are matches). */
  keep?: string[];
  /** The root only. */
  codeWorkspaces?: string[];
  gitIsDir?: boolean;
  umbraIsDir?: boolean;
}

const CACHE_VERSION = 3;

const LISTS = ["ignoreFiles", "dirs", "excluded", "hidden"] as const;
const OPTIONAL_LISTS = ["keep", "codeWorkspaces"] as const;
const FLAGS = ["git", "gitIsDir", "umbraIsDir"] as const;
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

/** The record a stored one stands for (left-out fields filled in), or undefined when it is not one. */
function decodeRecord(value: unknown): FolderRecord | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const stored = value as Record<string, unknown>;
  for (const field of Object.keys(stored)) if (!FIELDS.has(field)) return undefined;
  const { stamp = "", rules = "", entries } = stored;
  if (typeof stamp !== "string" || typeof rules !== "string" || typeof entries !== "number") return undefined;
  const record: FolderRecord = {
    stamp,
    rules,
    entries,
    ignoreFiles: [],
    dirs: [],
    excluded: [],
    git: false,
    hidden: [],
  };
  for (const field of LISTS) {
    const list = stored[field] ?? [];
    if (!isStrings(list)) return undefined;
    record[field] = list;
  }
  for (const field of OPTIONAL_LISTS) {
    const list = stored[field];
    if (list === undefined) continue;
    if (!isStrings(list)) return undefined;
    record[field] = list;
  }
  for (const field of FLAGS) {
    const flag = stored[field] ?? false;
    if (typeof flag !== "boolean") return undefined;
    if (flag) record[field] = true;
  }
  return record;
}

/** The stored form of a record: what holds nothing is left out. */
function encodeRecord(record: FolderRecord): Partial<FolderRecord> {
  const stored: Partial<FolderRecord> = { entries: record.entries };
  if (record.stamp !== "") stored.stamp = record.stamp;
  if (record.rules !== "") stored.rules = record.rules;
  for (const field of LISTS) if (record[field].length > 0) stored[field] = record[field];
  for (const field of OPTIONAL_LISTS) if (record[field]) stored[field] = record[field];
  for (const field of FLAGS) if (record[field]) stored[field] = true;
  return stored;
}

/** The folders of the cache `file` made for `key`; none when it is missing, another's or not valid. */
export function readCache(file: string | undefined, key: string): Record<string, FolderRecord> {
  if (!file) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return {};
  }
  if (typeof parsed !== "object" || parsed === null) return {};
  const { version, key: stored, folders } = parsed as Record<string, unknown>;
  if (version !== CACHE_VERSION || stored !== key) return {};
  if (typeof folders !== "object" || folders === null || Array.isArray(folders)) return {};
  const out: Record<string, FolderRecord> = {};
  for (const [rel, value] of Object.entries(folders)) {
    const record = decodeRecord(value);
    if (!record) return {};
    out[rel] = record;
  }
  return out;
}

/** Writes the cache (0600 in a 0700 folder) through a rename: a reader sees the old file or the new. */
export function writeCache(file: string, key: string, folders: Record<string, FolderRecord>): void {
  const stored: Record<string, Partial<FolderRecord>> = {};
  for (const [rel, record] of Object.entries(folders)) stored[rel] = encodeRecord(record);
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: CACHE_VERSION, key, folders: stored }), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // a cache that cannot be written only costs the next walk its time
  }
}
