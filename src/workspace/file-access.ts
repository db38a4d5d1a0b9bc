import { accessSync, constants, type Stats } from "node:fs";
import { errorCode } from "./errors.js";

/** A one-line reason for a failed filesystem call. */
export function describeFsError(error: unknown): string {
  const code = errorCode(error);
  if (code === "EACCES" || code === "EPERM") return `permission denied (${code})`;
  if (code === "ENOENT") return "vanished during scan";
  return code ?? (error instanceof Error ? error.message : String(error));
}

/**
 * A check that a file can be read by this process: mode bits first (free, from the stats already at
 * hand), and only when they say no, a real access(2) call (ACLs may still allow it). Returns undefined
 * when readable, else why not. Root reads everything.
 */
export function createReadCheck(): (absPath: string, stats: Stats) => string | undefined {
  const uid = process.getuid?.();
  const groups = new Set<number>([
    ...(process.getgroups?.() ?? []),
    ...(process.getgid ? [process.getgid()] : []),
  ]);
  const allowedByMode = (stats: Stats): boolean => {
    if (uid === undefined || uid === 0) return true;
    if (stats.uid === uid) return (stats.mode & 0o400) !== 0;
    if (groups.has(stats.gid)) return (stats.mode & 0o040) !== 0;
    return (stats.mode & 0o004) !== 0;
  };
  return (absPath, stats) => {
    if (allowedByMode(stats)) return undefined;
    try {
      accessSync(absPath, constants.R_OK);
      return undefined;
    } catch (error) {
      return describeFsError(error);
    }
  };
}

/**
 * Returns a function to call once per unit of synchronous work: every `every` calls it hands back a
 * promise that resolves on the next turn of the event loop, so long runs of sync calls never block it.
 */
export function createPacer(every: number): () => Promise<void> | undefined {
  let count = 0;
  return () => {
    count++;
    if (count < every) return undefined;
    count = 0;
    return new Promise((resolve) => setImmediate(resolve));
  };
}
