/**
 * The accept journal, in the data directory (`<workspace>/accept/`, folders 0700, files 0600): before
 * any file of the user's is touched, what each path held (a file's bytes stored as an object named by
 * its sha256, a link's target, or nothing) and what the accept puts there. It is written and synced
 * first; then the files are replaced one by one; then it is marked done. The next accept replaces it
 * (and drops the objects no longer named), so the user's previous bytes are kept until then.
 */
import { randomBytes } from "node:crypto";
import { open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { workspaceDir } from "../config/paths.js";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { errorCode } from "../workspace/errors.js";
import { sha256Hex } from "../workspace/hash.js";
import { AcceptError } from "./errors.js";
import type { StepCounter } from "./seam.js";
import type { StateRecord } from "./state.js";

export type JournalState =
  /** Files are being replaced (a journal left in this state is an interrupted accept). */
  | "writing"
  | "done"
  /** The accept stopped and put back what it had written. */
  | "rolled-back"
  | "undone";

export interface JournalEntry {
  path: string;
  /** The temporary name used in the path's folder while replacing it. */
  tmp: string;
  before: StateRecord;
  after: StateRecord;
}

export interface Journal {
  version: 1;
  id: string;
  createdAt: string;
  state: JournalState;
  entries: JournalEntry[];
  /** Folders the accept creates (outermost first); an undo removes them again when empty. */
  dirs: string[];
}

const FILE = "journal.json";

export function acceptDir(root: string, env: NodeJS.ProcessEnv): string {
  return join(workspaceDir(root, env), "accept");
}

/** A fresh accept id (names its temporary files). */
export function newAcceptId(): string {
  return randomBytes(6).toString("hex");
}

/** Writes `data` as `dir/name` atomically: a temporary file, fsync, rename, fsync of the folder. */
async function writeDurably(dir: string, name: string, data: Buffer | string, step: StepCounter) {
  const tmp = join(dir, `.${name}.${process.pid}.tmp`);
  const handle = await open(tmp, "w", PRIVATE_FILE);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  step("journal write");
  await rename(tmp, join(dir, name));
  step("journal rename");
  const folder = await open(dir, "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

function isJournal(value: unknown): value is Journal {
  const v = value as Partial<Journal> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    v.version === 1 &&
    typeof v.id === "string" &&
    /^[0-9a-f]+$/.test(v.id) &&
    Array.isArray(v.entries) &&
    Array.isArray(v.dirs)
  );
}

/** The last accept's journal, or undefined when there was none. */
export async function readJournal(root: string, env: NodeJS.ProcessEnv): Promise<Journal | undefined> {
  let text: string;
  try {
    text = await readFile(join(acceptDir(root, env), FILE), "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isJournal(parsed))
    throw new AcceptError(
      "CORRUPT_JOURNAL",
      `the accept journal ${join(acceptDir(root, env), FILE)} is damaged`,
    );
  return parsed;
}

/**
 * Records a new accept (state `writing`): the user's current bytes of each path first (objects), then
 * the journal, both synced; objects of the previous journal that this one does not name are removed.
 */
export async function beginJournal(
  root: string,
  env: NodeJS.ProcessEnv,
  journal: Omit<Journal, "version" | "createdAt" | "state">,
  previousBytes: ReadonlyMap<string, Buffer>,
  step: StepCounter,
): Promise<Journal> {
  const dir = acceptDir(root, env);
  const objects = join(dir, "objects");
  await privateDir(objects);
  const keep = new Set<string>();
  for (const data of previousBytes.values()) {
    const hash = sha256Hex(data);
    if (keep.has(hash)) continue;
    keep.add(hash);
    await writeDurably(objects, hash, data, step);
  }
  const full: Journal = { version: 1, createdAt: new Date().toISOString(), state: "writing", ...journal };
  await writeDurably(dir, FILE, `${JSON.stringify(full, null, 2)}\n`, step);
  for (const name of await readdir(objects))
    if (!keep.has(name)) await unlink(join(objects, name)).catch(() => {});
  return full;
}

/** Records the journal's new state. */
export async function markJournal(
  root: string,
  env: NodeJS.ProcessEnv,
  journal: Journal,
  state: JournalState,
  step: StepCounter,
): Promise<void> {
  journal.state = state;
  await writeDurably(acceptDir(root, env), FILE, `${JSON.stringify(journal, null, 2)}\n`, step);
}

/** The bytes of a file the journal kept (checked against their hash). */
export async function journalObject(root: string, env: NodeJS.ProcessEnv, sha256: string): Promise<Buffer> {
  const path = join(acceptDir(root, env), "objects", sha256);
  const data = await readFile(path).catch(() => undefined);
  if (!data || sha256Hex(data) !== sha256)
    throw new AcceptError("CORRUPT_JOURNAL", `the accept journal lost the bytes of a file (${path})`);
  return data;
}
