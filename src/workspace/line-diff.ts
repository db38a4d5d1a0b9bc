/**
 * Line diffs in bounded time: the one door through which umbra diffs two versions of a file (the shadow
 * diff the user reviews, the hunks a partial accept applies, the conflict regions of a merge, the agent's
 * edits, the line map of a branch's diagnostics). Pure, no I/O.
 *
 * Both sides may be an agent's: jsdiff's Myers algorithm costs (n + m) × d, so two 20,000-line files
 * with no line in common took 76 s (all of it on the engine's one thread, every agent on it waiting), a
 * 64 MiB file hours (bench/speed/hostile-diff.mjs). Here, as git's xdiff does, the common first and last
 * lines are set aside and a line that occurs on one side only is changed without a search (it can be in
 * no common subsequence, so the diff stays a shortest one); Myers then runs on what is left with an edit
 * length bounded by MAX_DIFF_WORK / (n + m). Past that bound the part left is shown as removed and added
 * as a whole: a longer diff than the shortest, still an exact one. The bound depends on the sizes only,
 * never on the clock, so the same two texts give the same hunks each time (a partial accept numbers the
 * hunks as the diff the user read did).
 */
import { diffArrays, type StructuredPatch, type StructuredPatchHunk } from "diff";

/** A run of lines kept, removed (from `before`) or added (from `after`). */
export interface LineChange {
  kind: "keep" | "del" | "add";
  lines: string[];
}

/** Cells of Myers' search allowed per diff (~0.5 s): the edit length is bounded by this over n + m. */
const MAX_DIFF_WORK = 20_000_000;

/** The changes turning `before` into `after`, line by line (lines compared exactly). */
export function diffLines(before: readonly string[], after: readonly string[]): LineChange[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail++;
  const changes = new Changes();
  changes.push("keep", before.slice(0, head));
  const oldMiddle = before.slice(head, before.length - tail);
  const newMiddle = after.slice(head, after.length - tail);
  let o = 0;
  let n = 0;
  for (const [i, j] of commonPairs(oldMiddle, newMiddle)) {
    changes.push("del", oldMiddle.slice(o, i));
    changes.push("add", newMiddle.slice(n, j));
    changes.push("keep", [oldMiddle[i] as string]);
    o = i + 1;
    n = j + 1;
  }
  changes.push("del", oldMiddle.slice(o));
  changes.push("add", newMiddle.slice(n));
  changes.push("keep", before.slice(before.length - tail));
  return changes.runs;
}

/** Where each line that diffLines keeps moved: its index in `before` → its index in `after` (0-based). */
export function keptLines(before: readonly string[], after: readonly string[]): Map<number, number> {
  const kept = new Map<number, number>();
  let i = 0;
  let j = 0;
  for (const { kind, lines } of diffLines(before, after)) {
    if (kind === "add") j += lines.length;
    else if (kind === "del") i += lines.length;
    else for (let k = 0; k < lines.length; k++) kept.set(i++, j++);
  }
  return kept;
}

/**
 * The unified diff of two texts as jsdiff's structuredPatch gives it (hunks with `context` lines around
 * each change, `\ No newline at end of file` where a side's last line has none), computed by diffLines.
 */
export function linePatch(before: string, after: string, context: number): StructuredPatch {
  const changes = diffLines(splitKeepingNewlines(before), splitKeepingNewlines(after));
  return {
    oldFileName: undefined,
    newFileName: undefined,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: hunksOf(changes, context),
  };
}

/** Runs of changes, a line added to the run before it when of the same kind. */
class Changes {
  readonly runs: LineChange[] = [];

  push(kind: LineChange["kind"], lines: readonly string[]): void {
    if (lines.length === 0) return;
    const last = this.runs.at(-1);
    if (last?.kind !== kind) this.runs.push({ kind, lines: [...lines] });
    else for (const line of lines) last.lines.push(line); // not push(...lines): a million arguments throw
  }
}

/**
 * The pairs (i, j) of a longest common subsequence of `before` and `after` (as far as the work bound
 * lets Myers search for one), in order. Lines found on one side only are left out before the search.
 */
function commonPairs(before: readonly string[], after: readonly string[]): [number, number][] {
  if (before.length === 0 || after.length === 0) return [];
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    const known = ids.get(line);
    if (known !== undefined) return known;
    ids.set(line, ids.size);
    return ids.size - 1;
  };
  const oldIds = before.map(idOf);
  const newIds = after.map(idOf);
  const inOld = new Set(oldIds);
  const inNew = new Set(newIds);
  const oldKept = indicesWhere(oldIds, (id) => inNew.has(id));
  const newKept = indicesWhere(newIds, (id) => inOld.has(id));
  const oldSeq = oldKept.map((i) => oldIds[i] as number);
  const newSeq = newKept.map((j) => newIds[j] as number);
  if (oldSeq.length === 0 || newSeq.length === 0) return [];
  const maxEditLength = Math.max(1, Math.floor(MAX_DIFF_WORK / (oldSeq.length + newSeq.length)));
  const parts = diffArrays(oldSeq, newSeq, { maxEditLength });
  if (!parts) return []; // too far apart to search: all of it changed
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  for (const part of parts) {
    const count = part.value.length;
    if (part.added) j += count;
    else if (part.removed) i += count;
    else for (let k = 0; k < count; k++) pairs.push([oldKept[i++] as number, newKept[j++] as number]);
  }
  return pairs;
}

function indicesWhere(values: readonly number[], keep: (value: number) => boolean): number[] {
  const out: number[] = [];
  values.forEach((value, i) => {
    if (keep(value)) out.push(i);
  });
  return out;
}

/** `text`'s lines, each with its `\n` (the last without one when the text does not end with one). */
function splitKeepingNewlines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n").map((line) => `${line}\n`);
  const last = lines.pop() as string;
  if (last !== "\n") lines.push(last.slice(0, -1));
  return lines;
}

/**
 * Unified hunks of `changes` (lines with their `\n`): each change with up to `context` kept lines around
 * it, two changes sharing a hunk when at most 2 × `context` kept lines part them (as jsdiff groups them).
 */
function hunksOf(changes: readonly LineChange[], context: number): StructuredPatchHunk[] {
  const hunks: StructuredPatchHunk[] = [];
  let open: StructuredPatchHunk | undefined;
  let oldLine = 1;
  let newLine = 1;
  changes.forEach((change, c) => {
    const { kind, lines } = change;
    if (kind !== "keep") {
      if (!open) {
        // the kept lines before it (a hunk opens after a kept run or at the start)
        const lead = context > 0 && c > 0 ? (changes[c - 1] as LineChange).lines.slice(-context) : [];
        open = {
          oldStart: oldLine - lead.length,
          oldLines: lead.length,
          newStart: newLine - lead.length,
          newLines: lead.length,
          lines: lead.map((line) => ` ${line}`),
        };
      }
      const sign = kind === "add" ? "+" : "-";
      for (const line of lines) open.lines.push(`${sign}${line}`);
      if (kind === "add") {
        open.newLines += lines.length;
        newLine += lines.length;
      } else {
        open.oldLines += lines.length;
        oldLine += lines.length;
      }
      return;
    }
    if (open) {
      const last = c === changes.length - 1;
      const shown = !last && lines.length <= context * 2 ? lines : lines.slice(0, context);
      for (const line of shown) open.lines.push(` ${line}`);
      open.oldLines += shown.length;
      open.newLines += shown.length;
      if (shown.length < lines.length || last) {
        hunks.push(open);
        open = undefined;
      }
    }
    oldLine += lines.length;
    newLine += lines.length;
  });
  if (open) hunks.push(open);
  for (const hunk of hunks) hunk.lines = hunk.lines.flatMap(withoutNewline);
  return hunks;
}

/** A hunk line without its `\n`, or followed by git's marker when it had none. */
function withoutNewline(line: string): string[] {
  return line.endsWith("\n") ? [line.slice(0, -1)] : [line, "\\ No newline at end of file"];
}
