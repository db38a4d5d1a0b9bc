/**
 * Split-then-merge over a section tree (after cAST, "chunking with abstract syntax trees"):
 *
 * - the children of a section become units (line ranges); a comment, decorator or attribute right above
 *   a unit (at most one blank line between) joins that unit, and blank lines between units go to the
 *   unit above, so the units tile the section's rows exactly;
 * - consecutive units that fit the budget are merged into as few groups as possible, as even in size as
 *   possible; a unit that does not fit is split into its own children, recursively (the signature of a
 *   definition opens its first piece); a run of lines without structure is split by lines, preferably
 *   at blank lines; a single line that does not fit is cut by characters;
 * - a group's symbol is the path of its one definition when that makes up at least half of it, else the
 *   path of the enclosing section ("" at top level);
 * - the signature of a definition that is split (a function, a class, a markdown heading) is carried:
 *   every piece after the first starts its text with the signature lines (outer definitions first),
 *   while its line range is that of its own statements; signatures take at most a quarter of the budget
 *   each (else their first line, else nothing) and half of it together (outer ones are dropped first);
 * - at the end, a tiny piece (under `min` tokens) that holds no definition of its own is folded into a
 *   neighbour when the result stays within `max + min` tokens (closing braces, a stray statement), and
 *   a definition's header left alone is folded into its first body piece.
 *
 * Works on rows only: token counts of any row range come from prefix sums, texts are built once at the
 * end, so the whole pass is linear in the file plus the syntax nodes of the sections that are opened.
 */
import type { Section } from "./sections.js";
import { cutPoint, estimateTokens } from "./tokens.js";

/** A piece of a file: rows [start, end], or part of one row when `cut` is set. */
export interface Segment {
  start: number;
  end: number;
  symbol: string;
  /** Signatures of the split definitions around it, carried in front of the text (outer first). */
  frames: Frame[];
  /** Estimated tokens of its own rows (carried signatures not included). */
  tokens: number;
  /** Holds at least one whole definition (so it is never folded into a neighbour). */
  ownsDefinition: boolean;
  /** Character range within row `start` for a piece of an over-long line. */
  cut?: { from: number; to: number };
}

export interface Frame {
  /** Rows of the signature; a piece starting after `end` carries `text`. */
  start: number;
  end: number;
  text: string;
  tokens: number;
}

interface Unit {
  start: number;
  end: number;
  section: Section;
  path: readonly string[];
}

interface Group {
  start: number;
  end: number;
  definitions: (readonly string[])[];
  /** Tokens of the definitions' own units. */
  definitionTokens: number;
}

const MAX_DEPTH = 256;
/** Most units one group may hold (bounds the partition's work). */
const PARTITION_WINDOW = 512;
/** Between the names of a symbol path. */
export const SEPARATOR = " > ";

export class Splitter {
  private readonly prefix: Float64Array;
  private readonly out: Segment[] = [];

  constructor(
    private readonly lines: readonly string[],
    private readonly blank: readonly boolean[],
    private readonly max: number,
    private readonly min: number,
  ) {
    this.prefix = new Float64Array(lines.length + 1);
    for (let row = 0; row < lines.length; row++) {
      const line = lines[row] ?? "";
      this.prefix[row + 1] = (this.prefix[row] ?? 0) + (blank[row] ? 0 : estimateTokens(line));
    }
  }

  /** Estimated tokens of rows [start, end]. */
  tokens(start: number, end: number): number {
    return (this.prefix[end + 1] ?? 0) - (this.prefix[start] ?? 0);
  }

  /** Splits a root section (never emitted whole, so a lone definition still gets its symbol). */
  run(root: Section): Segment[] {
    const last = this.lines.length - 1;
    const units = this.units(root.kids(), 0, last, []);
    if (units.length === 0) this.lineSplit(0, last, "", [], false);
    else this.merge(units, [], [], false, 0);
    return this.foldTiny(this.out);
  }

  private budget(frames: readonly Frame[]): number {
    let carried = 0;
    for (const frame of frames) carried += frame.tokens;
    return Math.max(1, this.max - carried);
  }

  /** Children as units tiling rows [start, end]. */
  private units(kids: readonly Section[], start: number, end: number, path: readonly string[]): Unit[] {
    const units: Unit[] = [];
    let previous = start - 1;
    for (const section of kids) {
      const from = Math.max(section.start, previous + 1);
      const to = Math.min(section.end, end);
      if (to < from) continue; // entirely on rows already taken by the unit above
      units.push({ start: from, end: to, section, path: section.name ? [...path, ...section.name] : path });
      previous = to;
    }
    // Comments, decorators and attributes right above a unit (at most one blank line between) belong to it.
    const merged: Unit[] = [];
    for (let i = units.length - 1; i >= 0; i--) {
      const unit = units[i];
      const next = merged[merged.length - 1];
      if (!unit) continue;
      if (next && unit.section.attached && !unit.section.name && next.start - unit.end - 1 <= 1) {
        next.start = unit.start;
        continue;
      }
      merged.push(unit);
    }
    merged.reverse();
    const first = merged[0];
    if (!first) return merged;
    first.start = start;
    for (let i = 0; i + 1 < merged.length; i++) {
      const unit = merged[i];
      const next = merged[i + 1];
      if (unit && next) unit.end = next.start - 1;
    }
    const last = merged[merged.length - 1];
    if (last) last.end = end;
    return merged;
  }

  /**
   * Merges runs of units that fit into as few groups as possible, as even in size as possible, and
   * splits the units that do not fit.
   */
  private merge(
    units: readonly Unit[],
    path: readonly string[],
    frames: readonly Frame[],
    inDefinition: boolean,
    depth: number,
  ): void {
    const budget = this.budget(frames);
    // What a definition's opening plus its body may hold before the body must be split (see foldTiny):
    // the budget without this definition's own carried signature, plus the tiny-fold slack.
    const own = inDefinition ? (frames[frames.length - 1]?.tokens ?? 0) : 0;
    const opened = budget + own + this.min;
    let run: Unit[] = [];
    let runHasDefinition = false;
    /** Nothing of this section has been emitted yet: a first group is its opening (a signature). */
    let opening = true;
    for (const unit of units) {
      const first = run[0];
      const body =
        inDefinition &&
        opening &&
        first !== undefined &&
        !runHasDefinition &&
        !unit.section.name &&
        this.tokens(first.start, unit.end) > opened;
      if (!body && this.tokens(unit.start, unit.end) <= budget) {
        run.push(unit);
        if (unit.section.name) runHasDefinition = true;
        continue;
      }
      // Too big: split it. A definition's signature before its body, or a tiny group of other code,
      // opens the unit's first piece instead of standing alone.
      const groups = this.partition(run, budget);
      const last = groups[groups.length - 1];
      let start = unit.start;
      if (
        last &&
        last.definitions.length === 0 &&
        !unit.section.name &&
        ((inDefinition && opening && groups.length === 1) || this.tokens(last.start, last.end) < this.min)
      ) {
        groups.pop();
        start = last.start;
      }
      for (const group of groups) this.flush(group, path, frames);
      run = [];
      runHasDefinition = false;
      opening = false;
      this.split(unit, start, frames, depth + 1);
    }
    for (const group of this.partition(run, budget)) this.flush(group, path, frames);
  }

  /**
   * Groups consecutive units that each fit the budget: the fewest groups, and among those the most even
   * sizes (least sum of squared slack). Dynamic programming over a window of units, so linear in
   * practice.
   */
  private partition(run: readonly Unit[], budget: number): Group[] {
    const k = run.length;
    if (k === 0) return [];
    const count = new Float64Array(k + 1).fill(Number.POSITIVE_INFINITY);
    const cost = new Float64Array(k + 1);
    const from = new Int32Array(k + 1);
    count[0] = 0;
    for (let j = 1; j <= k; j++) {
      const end = run[j - 1]?.end ?? 0;
      for (let i = j - 1; i >= 0 && i >= j - PARTITION_WINDOW; i--) {
        const size = this.tokens(run[i]?.start ?? 0, end);
        if (size > budget && i < j - 1) break;
        const groups = (count[i] ?? 0) + 1;
        const slack = budget - size;
        const total = (cost[i] ?? 0) + slack * slack;
        if (groups < (count[j] ?? 0) || (groups === count[j] && total < (cost[j] ?? 0))) {
          count[j] = groups;
          cost[j] = total;
          from[j] = i;
        }
      }
    }
    const groups: Group[] = [];
    for (let j = k; j > 0; j = from[j] ?? 0) {
      const i = from[j] ?? 0;
      const group: Group = {
        start: run[i]?.start ?? 0,
        end: run[j - 1]?.end ?? 0,
        definitions: [],
        definitionTokens: 0,
      };
      for (let u = i; u < j; u++) {
        const unit = run[u];
        if (!unit?.section.name) continue;
        group.definitions.push(unit.path);
        group.definitionTokens += this.tokens(unit.start, unit.end);
      }
      groups.push(group);
    }
    return groups.reverse();
  }

  /**
   * Emits a group. Its symbol is that of its one definition when that definition makes up at least
   * half of it, else the enclosing path (several definitions, or mostly other code).
   */
  private flush(group: Group, path: readonly string[], frames: readonly Frame[]): void {
    const dominant = group.definitionTokens * 2 >= this.tokens(group.start, group.end);
    const only = group.definitions.length === 1 && dominant ? group.definitions[0] : undefined;
    this.emit(group.start, group.end, (only ?? path).join(SEPARATOR), frames, group.definitions.length > 0);
  }

  /** Splits one oversized unit whose rows are [start, unit.end]. */
  private split(unit: Unit, start: number, frames: readonly Frame[], depth: number): void {
    const { section, path, end } = unit;
    const symbol = path.join(SEPARATOR);
    const inner = section.name ? this.trim([...frames, ...this.frame(section)]) : frames;
    const kids = depth > MAX_DEPTH || start === end ? [] : section.kids();
    const units = kids.length > 0 ? this.units(kids, start, end, path) : [];
    if (units.length === 0) {
      this.lineSplit(start, end, symbol, inner, false);
      return;
    }
    this.merge(units, path, inner, section.name !== undefined, depth);
  }

  /** The signature frame of a definition being split (empty when it would take too much room). */
  private frame(section: Section): Frame[] {
    const signature = section.signature();
    if (!signature) return [];
    const room = this.max / 4;
    let last = signature.end;
    let tokens = this.tokens(signature.start, last);
    if (tokens > room) {
      last = signature.start;
      tokens = this.tokens(signature.start, last);
      if (tokens > room) return [{ start: signature.start, end: signature.end, text: "", tokens: 0 }];
    }
    const text = this.lines.slice(signature.start, last + 1).join("\n");
    return [{ start: signature.start, end: signature.end, text, tokens }];
  }

  /** Keeps the carried signatures within half the budget, dropping outer ones first. */
  private trim(frames: readonly Frame[]): Frame[] {
    const out = [...frames];
    let total = 0;
    for (const frame of out) total += frame.tokens;
    while (total > this.max / 2 && out.length > 0) {
      const dropped = out.shift();
      total -= dropped?.tokens ?? 0;
    }
    return out;
  }

  /** Rows [start, end] by lines, greedily, cutting preferably after a blank line. */
  private lineSplit(
    start: number,
    end: number,
    symbol: string,
    frames: readonly Frame[],
    ownsDefinition: boolean,
  ): void {
    const budget = this.budget(frames);
    let from = start;
    let blankRow = -1;
    for (let row = start; row <= end; row++) {
      while (row > from && this.tokens(from, row) > budget) {
        if (blankRow > from && this.tokens(from, blankRow) >= budget / 4) {
          this.emit(from, blankRow - 1, symbol, frames, ownsDefinition);
          from = blankRow + 1;
        } else {
          this.emit(from, row - 1, symbol, frames, ownsDefinition);
          from = row;
        }
        blankRow = -1;
      }
      if (this.blank[row] && row > from) blankRow = row;
    }
    if (from <= end) this.emit(from, end, symbol, frames, ownsDefinition);
  }

  private emit(
    start: number,
    end: number,
    symbol: string,
    frames: readonly Frame[],
    ownsDefinition: boolean,
  ): void {
    let from = start;
    let to = end;
    while (from <= to && this.blank[from]) from++;
    while (to >= from && this.blank[to]) to--;
    if (from > to) return;
    const tokens = this.tokens(from, to);
    if (from === to && tokens > this.max) {
      this.cutLine(from, symbol);
      return;
    }
    const carried = frames.filter((frame) => from > frame.end);
    // A line that fills the budget by itself goes without (outer) signatures rather than over budget.
    let total = tokens;
    for (const frame of carried) total += frame.tokens;
    while (total > this.max && carried.length > 0) total -= carried.shift()?.tokens ?? 0;
    this.out.push({ start: from, end: to, symbol, frames: carried, tokens, ownsDefinition });
  }

  /** A line longer than the budget, in pieces of at most `max` tokens (whitespace never stands alone). */
  private cutLine(row: number, symbol: string): void {
    const line = this.lines[row] ?? "";
    let start = 0;
    let from = 0;
    while (from < line.length) {
      const to = cutPoint(line, from, this.max);
      from = to;
      if (estimateTokens(line, start, to) === 0) {
        const last = this.out[this.out.length - 1];
        if (last?.cut && last.start === row) {
          last.cut.to = to;
          start = to;
        }
        continue;
      }
      const tokens = estimateTokens(line, start, to);
      const cut = { from: start, to };
      this.out.push({ start: row, end: row, symbol, frames: [], tokens, ownsDefinition: false, cut });
      start = to;
    }
    const last = this.out[this.out.length - 1];
    if (start < line.length && last?.cut && last.start === row) last.cut.to = line.length;
  }

  /**
   * Folds tiny pieces that hold no definition into a neighbour when the result stays within
   * `max + min`; a piece that ends inside the next piece's carried signature (a definition's header
   * left alone) is folded into it whatever its size, and the next piece then stops carrying it.
   */
  private foldTiny(segments: Segment[]): Segment[] {
    const limit = this.max + this.min;
    const total = (segment: Segment): number => {
      let tokens = segment.tokens;
      for (const frame of segment.frames) tokens += frame.tokens;
      return tokens;
    };
    const out: Segment[] = [];
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (!segment) continue;
      if (segment.ownsDefinition || segment.cut) {
        out.push(segment);
        continue;
      }
      const tiny = segment.tokens < this.min;
      const next = segments[i + 1];
      const previous = out[out.length - 1];
      // Signatures that the folded rows contain are no longer carried by the next piece.
      const kept = next?.frames.filter((frame) => frame.start < segment.start) ?? [];
      let intoNext = 0;
      if (next && !next.cut) {
        intoNext = next.tokens + segment.tokens;
        for (const frame of kept) intoNext += frame.tokens;
      }
      const fitsNext = next !== undefined && !next.cut && intoNext <= limit;
      const header = fitsNext && next.frames.some((f) => f.start <= segment.end && segment.end <= f.end);
      const fitsPrevious =
        previous !== undefined && !previous.cut && total(previous) + segment.tokens <= limit;
      if (next && (header || (tiny && !fitsPrevious && fitsNext && kept.length === next.frames.length))) {
        next.start = segment.start;
        next.frames = kept;
        next.tokens += segment.tokens;
        continue;
      }
      if (previous && tiny && fitsPrevious) {
        previous.end = segment.end;
        previous.tokens += segment.tokens;
        continue;
      }
      out.push(segment);
    }
    return out;
  }
}
