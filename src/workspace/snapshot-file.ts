import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { CorruptStateError, errorCode } from "./errors.js";
import type { FileEntry, SkippedEntry, SkipReason, Snapshot } from "./types.js";

const HASH = /^[0-9a-f]{64}$/;
const CONTENT_KINDS: ReadonlySet<string> = new Set(["text", "binary", "invalid-utf8"]);
const SKIP_REASONS: ReadonlySet<string> = new Set<SkipReason>([
  "ignored",
  "excluded-dir",
  "too-large",
  "symlink",
  "unreadable",
  "special",
  "binary",
  "invalid-utf8",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Checks parsed JSON against the Snapshot shape; returns why it does not fit, or the snapshot. */
function validate(data: unknown): Snapshot | string {
  if (!isRecord(data)) return "not a JSON object";
  if (data.version !== 1) return `unsupported version ${JSON.stringify(data.version)}`;
  if (typeof data.scannedAt !== "string") return "scannedAt missing";
  if (!isRecord(data.files)) return "files missing";
  if (!isRecord(data.dirs)) return "dirs missing";
  if (!Array.isArray(data.skipped)) return "skipped missing";
  const files: Record<string, FileEntry> = Object.create(null);
  for (const [path, raw] of Object.entries(data.files)) {
    if (
      !isRecord(raw) ||
      !isNumber(raw.size) ||
      !isNumber(raw.mtimeMs) ||
      typeof raw.hash !== "string" ||
      !HASH.test(raw.hash) ||
      typeof raw.content !== "string" ||
      !CONTENT_KINDS.has(raw.content)
    ) {
      return `bad entry for ${JSON.stringify(path)}`;
    }
    files[path] = {
      size: raw.size,
      mtimeMs: raw.mtimeMs,
      hash: raw.hash,
      content: raw.content as FileEntry["content"],
    };
  }
  const dirs: Record<string, string> = Object.create(null);
  for (const [path, hash] of Object.entries(data.dirs)) {
    if (typeof hash !== "string" || !HASH.test(hash)) return `bad hash for folder ${JSON.stringify(path)}`;
    dirs[path] = hash;
  }
  const skipped: SkippedEntry[] = [];
  for (const raw of data.skipped) {
    if (
      !isRecord(raw) ||
      typeof raw.path !== "string" ||
      typeof raw.reason !== "string" ||
      !SKIP_REASONS.has(raw.reason)
    ) {
      return "bad skipped entry";
    }
    const entry: SkippedEntry = { path: raw.path, reason: raw.reason as SkipReason };
    if (typeof raw.detail === "string") entry.detail = raw.detail;
    if (raw.dir === true) entry.dir = true;
    skipped.push(entry);
  }
  if (typeof data.rootHash !== "string" || data.rootHash !== dirs[""])
    return "root hash does not match the tree";
  return { version: 1, rootHash: data.rootHash, files, dirs, skipped, scannedAt: data.scannedAt };
}

/**
 * Reads a snapshot saved by saveSnapshot. A missing file is undefined; a file that is not valid JSON or
 * not a version-1 snapshot throws CorruptStateError (the caller rebuilds it). Other I/O errors propagate.
 */
export async function loadSnapshot(file: string): Promise<Snapshot | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CorruptStateError(file, "not valid JSON", { cause: error });
  }
  const result = validate(data);
  if (typeof result === "string") throw new CorruptStateError(file, result);
  return result;
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not every platform or filesystem can fsync a folder; the rename itself is still atomic.
  }
}

/**
 * Writes a snapshot atomically: to a temporary file in the same folder, fsynced, then renamed over `file`.
 * A crash or a full disk leaves either the old file or the new one, never a torn one.
 */
export async function saveSnapshot(file: string, snapshot: Snapshot): Promise<void> {
  const dir = dirname(file);
  const data = JSON.stringify(snapshot);
  await privateDir(dir);
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(temp, "wx", PRIVATE_FILE);
    await handle.writeFile(data, "utf8");
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => {});
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
  await syncDir(dir);
}
