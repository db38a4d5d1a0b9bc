import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { workspaceDir } from "../config/paths.js";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { errnoCode, ShadowError } from "./errors.js";
import { BRANCH_MODES, type BranchMode } from "./modes.js";

/** The contents of `branches/<id>/branch.json`. */
export interface BranchRecord {
  version: 1;
  id: string;
  /** Real (symlink-free) path of the user's folder. */
  workspaceRoot: string;
  mode: BranchMode;
  /** ISO time. */
  createdAt: string;
  /** The umbra process that owns the branch; when it is gone, the branch is stale. */
  ownerPid: number;
  /** Start time of the owner (clock ticks since boot, /proc/PID/stat), so a reused pid is not mistaken for it. */
  ownerStart?: string;
}

/** Layout of one branch directory. */
export interface BranchPaths {
  dir: string;
  record: string;
  /** Overlay modes: the branch's own layer and overlayfs's work dir. */
  upper: string;
  work: string;
  /** Copy modes: the full copy. */
  tree: string;
  /** Errors of the process that keeps the branch mounted. */
  holderLog: string;
}

export function branchPaths(dir: string): BranchPaths {
  return {
    dir,
    record: join(dir, "branch.json"),
    upper: join(dir, "upper"),
    work: join(dir, "work"),
    tree: join(dir, "tree"),
    holderLog: join(dir, "holder.log"),
  };
}

/** `workspaces/<id>/branches` of the data directory. */
export function branchesRoot(realRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(workspaceDir(realRoot, env), "branches");
}

const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

export function isBranchId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** A new branch id: time-ordered, unique. */
export function newBranchId(): string {
  return `${Date.now().toString(36)}-${randomBytes(5).toString("hex")}`;
}

/** Start time of a process (field 22 of /proc/PID/stat), or undefined when it is not running. */
export function processStart(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); field 22 is fields[19].
    if (fields[0] === "Z" || fields[0] === "X") return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Whether the owner recorded in a branch is still the same running process. */
export function ownerAlive(record: Pick<BranchRecord, "ownerPid" | "ownerStart">): boolean {
  const start = processStart(record.ownerPid);
  if (start === undefined) return false;
  return record.ownerStart === undefined || record.ownerStart === start;
}

/** A record naming the current process as the owner. */
export function ownedRecord(fields: Omit<BranchRecord, "version" | "ownerPid" | "ownerStart">): BranchRecord {
  const start = processStart(process.pid);
  return { version: 1, ...fields, ownerPid: process.pid, ...(start ? { ownerStart: start } : {}) };
}

export async function writeRecord(dir: string, record: BranchRecord): Promise<void> {
  const file = branchPaths(dir).record;
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: PRIVATE_FILE });
  await rename(temp, file);
}

function parseRecord(text: string, file: string): BranchRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ShadowError(
      "CORRUPT_BRANCH",
      `${file} is not valid JSON; the branch is stale and can be removed`,
      {
        cause: error,
      },
    );
  }
  const r = value as Partial<BranchRecord> | null;
  const problem =
    typeof r !== "object" || r === null
      ? "not an object"
      : r.version !== 1
        ? "unknown version"
        : typeof r.id !== "string" || !isBranchId(r.id)
          ? "bad id"
          : typeof r.workspaceRoot !== "string" || !r.workspaceRoot.startsWith("/")
            ? "bad workspaceRoot"
            : typeof r.mode !== "string" || !BRANCH_MODES.includes(r.mode as BranchMode)
              ? "bad mode"
              : typeof r.createdAt !== "string" || Number.isNaN(Date.parse(r.createdAt))
                ? "bad createdAt"
                : typeof r.ownerPid !== "number" || !Number.isInteger(r.ownerPid)
                  ? "bad ownerPid"
                  : undefined;
  if (problem) {
    throw new ShadowError(
      "CORRUPT_BRANCH",
      `${file} is corrupt (${problem}); the branch is stale and can be removed`,
    );
  }
  return value as BranchRecord;
}

/** Reads `branch.json` of a branch directory: BRANCH_NOT_FOUND when there is none, CORRUPT_BRANCH when unusable. */
export async function readRecord(dir: string): Promise<BranchRecord> {
  const file = branchPaths(dir).record;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") {
      try {
        await stat(dir);
      } catch {
        throw new ShadowError("BRANCH_NOT_FOUND", `no branch at ${dir}`, { cause: error });
      }
      throw new ShadowError("CORRUPT_BRANCH", `${file} is missing; the branch is stale and can be removed`, {
        cause: error,
      });
    }
    throw new ShadowError("CORRUPT_BRANCH", `cannot read ${file}: ${code ?? String(error)}`, {
      cause: error,
    });
  }
  return parseRecord(text, file);
}

/** Creates `branches/<id>/` with its layer folders and branch.json. */
export async function createBranchDir(
  realRoot: string,
  mode: BranchMode,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ dir: string; record: BranchRecord }> {
  const id = newBranchId();
  const dir = join(branchesRoot(realRoot, env), id);
  const paths = branchPaths(dir);
  await privateDir(dir);
  if (mode === "overlay" || mode === "fuse-overlayfs") {
    await Promise.all([mkdir(paths.upper), mkdir(paths.work)]);
  } else {
    await mkdir(paths.tree);
  }
  const record = ownedRecord({ id, workspaceRoot: realRoot, mode, createdAt: new Date().toISOString() });
  await writeRecord(dir, record);
  return { dir, record };
}

/** One entry of `branches/`: its record, or why it cannot be read. */
export interface StoredBranch {
  id: string;
  dir: string;
  record?: BranchRecord;
  /** Why branch.json is unusable (the branch is then stale). */
  problem?: string;
  ownerAlive: boolean;
  /** createdAt, or the directory's mtime when branch.json is unusable. */
  createdMs: number;
}

export async function listStored(
  realRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoredBranch[]> {
  const root = branchesRoot(realRoot, env);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return [];
    throw error;
  }
  const out: StoredBranch[] = [];
  for (const id of names.sort()) {
    const dir = join(root, id);
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(dir);
    } catch {
      continue;
    }
    if (!info.isDirectory()) continue;
    try {
      const record = await readRecord(dir);
      out.push({ id, dir, record, ownerAlive: ownerAlive(record), createdMs: Date.parse(record.createdAt) });
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      out.push({ id, dir, problem, ownerAlive: false, createdMs: info.mtimeMs });
    }
  }
  return out;
}

/** Makes every folder below `dir` writable by its owner (overlayfs leaves `work/work` as mode 000). */
async function unlockTree(dir: string): Promise<void> {
  try {
    const info = await lstat(dir);
    if (!info.isDirectory()) return;
    if ((info.mode & 0o700) !== 0o700) await chmod(dir, 0o700);
    for (const name of await readdir(dir)) await unlockTree(join(dir, name));
  } catch {
    // best effort: rm reports what is left
  }
}

/** Removes a branch directory, including folders without write permission. */
export async function removeBranchDir(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  } catch (error) {
    const code = errnoCode(error);
    if (code !== "EACCES" && code !== "EPERM" && code !== "ENOTEMPTY") throw error;
    await unlockTree(dir);
    await rm(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}
