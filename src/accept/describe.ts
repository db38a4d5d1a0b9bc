import type { ConflictHunk } from "./merge-file.js";

/** Where a conflicting region is in the user's file: `line 19`, `lines 19-21`, `before line 5`. */
export function hunkLines(hunk: ConflictHunk): string {
  if (hunk.lines === 0) return `before line ${hunk.line}`;
  return hunk.lines === 1 ? `line ${hunk.line}` : `lines ${hunk.line}-${hunk.line + hunk.lines - 1}`;
}

/** A conflicting file in one line: `path: why (line 3, lines 10-12)`. */
export function conflictLine(conflict: {
  path: string;
  why: string;
  hunks: readonly ConflictHunk[];
}): string {
  const where = conflict.hunks.length ? ` (${conflict.hunks.map(hunkLines).join(", ")})` : "";
  return `${conflict.path}: ${conflict.why}${where}`;
}
