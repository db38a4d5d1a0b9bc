/**
 * The kept result of findHiddenLinks (hidden-links.ts), one file per workspace beside the policy walk's
 * cache in the data directory. A file that is not exactly of this form is not used.
 */
import { lstatSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { PRIVATE_FILE, privateDirSync } from "../config/private.js";
import type { HiddenMask } from "./types.js";

export const KEPT_VERSION = 1;

/** What is kept of a result, and what it was found for: its hidden paths' digest and the walk's cache. */
export interface Kept {
  version: number;
  key: string;
  walk: string;
  paths: string[];
  masks: HiddenMask[];
  warnings: string[];
}

/** The identity of a file (a file replaced through a rename has another); undefined when it is absent. */
export function fileIdentity(path: string): string | undefined {
  try {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    return stats && `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  } catch {
    return undefined;
  }
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** The kept result in `file`, or undefined when there is none of this form. */
export function readKept(file: string): Kept | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof value !== "object" || value === null) return undefined;
    const kept = value as Record<string, unknown>;
    const masks = kept.masks;
    const valid =
      kept.version === KEPT_VERSION &&
      typeof kept.key === "string" &&
      typeof kept.walk === "string" &&
      isStrings(kept.paths) &&
      isStrings(kept.warnings) &&
      Array.isArray(masks) &&
      masks.every(
        (mask: unknown) =>
          typeof mask === "object" &&
          mask !== null &&
          typeof (mask as HiddenMask).folder === "string" &&
          isStrings((mask as HiddenMask).keep),
      );
    return valid ? (kept as unknown as Kept) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the kept result (0600 in a 0700 folder) through a rename. */
export function writeKept(file: string, kept: Kept): void {
  try {
    privateDirSync(dirname(file));
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(kept), { mode: PRIVATE_FILE });
    renameSync(tmp, file);
  } catch {
    // a result that cannot be kept only costs the next run its search
  }
}
