import { readFileSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { PRIVATE_FILE, privateFileSync } from "../config/private.js";

export class LockBusyError extends Error {
  override name = "LockBusyError";
}

function holder(file: string): string {
  try {
    const owner = JSON.parse(readFileSync(`${file}.owner`, "utf8")) as { pid: number; since: string };
    return `pid ${owner.pid}, since ${owner.since}`;
  } catch {
    return "unknown process";
  }
}

/**
 * An exclusive lock on one workspace's index, held as an exclusive SQLite transaction on a lock file:
 * the kernel releases it when the holder exits or is killed, so a crash never leaves a stale lock.
 * A live holder is waited for up to `waitMs`, then a LockBusyError names it.
 */
export async function acquireLock(
  file: string,
  options: { waitMs?: number; onWait?: (holder: string) => void; signal?: AbortSignal } = {},
): Promise<() => void> {
  privateFileSync(file);
  const db = new Database(file);
  db.pragma("busy_timeout = 0");
  const deadline = Date.now() + (options.waitMs ?? 0);
  let told = false;
  for (;;) {
    try {
      db.exec("BEGIN EXCLUSIVE");
      writeFileSync(`${file}.owner`, JSON.stringify({ pid: process.pid, since: new Date().toISOString() }), {
        mode: PRIVATE_FILE,
      });
      return () => {
        db.exec("ROLLBACK");
        db.close();
      };
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY") {
        db.close();
        throw error;
      }
    }
    if (Date.now() >= deadline || options.signal?.aborted) {
      db.close();
      throw new LockBusyError(`another umbra process (${holder(file)}) is indexing this workspace`);
    }
    if (!told) {
      options.onWait?.(holder(file));
      told = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
