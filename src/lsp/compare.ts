import { keptLines } from "../workspace/line-diff.js";
import type { Diag } from "./types.js";

/** Maps a 1-based line of the old text to its line in the new text; undefined when it was edited away. */
export type LineMap = (oldLine: number) => number | undefined;

export const identityLineMap: LineMap = (line) => line;

function splitLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/**
 * The line mapping of an edit from `oldText` to `newText`: unchanged lines map to where they moved,
 * changed or deleted lines to undefined.
 */
export function lineMapping(oldText: string, newText: string): LineMap {
  const before = splitLines(oldText);
  const after = splitLines(newText);
  const kept = keptLines(before, after);
  const shift = after.length - before.length;
  // a line past the old text's end moves with it
  return (line) => {
    if (line > before.length) return line + shift;
    const at = kept.get(line - 1);
    return at === undefined ? undefined : at + 1;
  };
}

function key(diag: Diag): string {
  return `${diag.severity}\u0000${diag.code ?? ""}\u0000${diag.message}`;
}

/**
 * The diagnostics of `current` that `baseline` (the same file before the edit) does not explain.
 * A current diagnostic is pre-existing when a baseline one with the same severity, code and message
 * sits on the line it maps to through the edit, or sat on a line the edit changed (the error
 * survived the rewrite of its line). Each baseline diagnostic explains at most one current one.
 */
export function introducedDiagnostics(
  current: Diag[],
  baseline: Diag[],
  mapLine: LineMap = identityLineMap,
): Diag[] {
  const unused = new Map<string, { mapped: number | undefined; used: boolean }[]>();
  for (const diag of baseline) {
    const list = unused.get(key(diag)) ?? [];
    list.push({ mapped: mapLine(diag.line), used: false });
    unused.set(key(diag), list);
  }
  const explained = new Set<Diag>();
  // Pass 1: same diagnostic on the same (mapped) line.
  for (const diag of current) {
    const match = unused.get(key(diag))?.find((entry) => !entry.used && entry.mapped === diag.line);
    if (match) {
      match.used = true;
      explained.add(diag);
    }
  }
  // Pass 2: a diagnostic that sat on an edited line and still exists.
  for (const diag of current) {
    if (explained.has(diag)) continue;
    const match = unused.get(key(diag))?.find((entry) => !entry.used && entry.mapped === undefined);
    if (match) {
      match.used = true;
      explained.add(diag);
    }
  }
  return current.filter((diag) => !explained.has(diag));
}
