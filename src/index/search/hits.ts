/**
 * The last step of a search: ranked chunks become hits. Pure, no I/O.
 *
 * - Chunks of one symbol that lie next to each other in one file (pieces of one split function) collapse
 *   into one hit covering all their lines, with the best score (the first one seen, as chunks come best
 *   first). Next to each other means consecutive chunk ids: the indexer numbers a file's chunks in file
 *   order, so no lookup is needed. Chunks without a symbol (top-level code, text) never collapse: being
 *   neighbours says nothing about them answering the same thing. A hit lists what its chunks define.
 * - The first `TOP` hits hold at most `PER_FILE_IN_TOP` hits of one file (or the number the caller
 *   gives: a question, which asks for one place, lets its best file show more) while hits of other files
 *   are there to take the slot; the hits held back come right after them, in their order. Two, not one: an
 *   answer is often a function and the helper beside it, and the best file keeps both; at least three
 *   files make the first five whenever three files match. Only the order within the first slots
 *   changes, so the order in which files first appear is the same as the ranking's.
 */

import type { ChunkRow } from "../store/lexical.js";
import type { SearchHit } from "./searcher.js";

export type HitRow = Pick<
  ChunkRow,
  "id" | "path" | "startLine" | "endLine" | "symbol" | "language" | "defines"
>;
export type AssembledHit = Omit<SearchHit, "stale">;

/** Slots at the top of the list where one file may not hold more than `PER_FILE_IN_TOP`. */
export const TOP = 5;
export const PER_FILE_IN_TOP = 2;

interface Group {
  hit: AssembledHit;
  /** Chunk ids [first, last] the hit covers. */
  first: number;
  last: number;
  /** What each of its chunks defines, by chunk id. */
  defines: Map<number, readonly string[]>;
}

export class HitAssembler {
  private groups: Group[] = [];
  /** Groups by file and symbol, for finding the one a chunk joins. */
  private readonly bySymbol = new Map<string, Group[]>();
  /** Groups per file, and the sum over files of min(groups, perFileInTop): how many could be on top. */
  private readonly perFile = new Map<string, number>();
  private eligible = 0;
  private readonly top: number;

  constructor(
    private readonly limit: number,
    private readonly perFileInTop = PER_FILE_IN_TOP,
  ) {
    this.top = Math.min(TOP, limit);
  }

  /** Adds the next chunk of the ranking (scores never rise from one call to the next). */
  add(row: HitRow, score: number): void {
    const key = `${row.path}\0${row.symbol}`;
    const siblings = row.symbol === "" ? undefined : this.bySymbol.get(key);
    const group = siblings?.find((g) => touches(g, row.id));
    if (!group) {
      const { path, startLine, endLine, symbol, language } = row;
      const created = {
        hit: { path, startLine, endLine, score, symbol, language, defines: [] },
        first: row.id,
        last: row.id,
        defines: new Map([[row.id, row.defines]]),
      };
      this.groups.push(created);
      if (siblings) siblings.push(created);
      else if (symbol !== "") this.bySymbol.set(key, [created]);
      this.count(path, 1);
      return;
    }
    extend(group, row.id, row.startLine, row.endLine);
    group.defines.set(row.id, row.defines);
    // The chunk may bridge two hits of the symbol (ids 4 and 6 seen, then 5): the later one joins.
    const other = siblings?.find((g) => g !== group && (touches(g, group.first) || touches(g, group.last)));
    if (other && siblings) {
      extend(group, other.first, other.hit.startLine, other.hit.endLine);
      extend(group, other.last, other.hit.startLine, other.hit.endLine);
      for (const [id, defines] of other.defines) group.defines.set(id, defines);
      this.groups.splice(this.groups.indexOf(other), 1);
      siblings.splice(siblings.indexOf(other), 1);
      this.count(row.path, -1);
    }
  }

  /** Whether further chunks can change neither which hits are kept nor which files hold the top slots. */
  full(): boolean {
    return this.groups.length >= this.limit && this.eligible >= this.top;
  }

  /** The hits, at most `limit`, in their final order. */
  hits(): AssembledHit[] {
    const admitted: Group[] = [];
    const held: Group[] = [];
    const perFile = new Map<string, number>();
    for (const group of this.groups) {
      const count = perFile.get(group.hit.path) ?? 0;
      if (admitted.length < this.top && count < this.perFileInTop) {
        perFile.set(group.hit.path, count + 1);
        admitted.push(group);
      } else {
        held.push(group);
      }
    }
    return [...admitted, ...held].slice(0, this.limit).map((group) => ({
      ...group.hit,
      defines: definesOf(group),
    }));
  }

  private count(path: string, delta: 1 | -1): void {
    const before = this.perFile.get(path) ?? 0;
    const after = before + delta;
    this.perFile.set(path, after);
    this.eligible += Math.min(after, this.perFileInTop) - Math.min(before, this.perFileInTop);
  }
}

/** What a hit's chunks define, in file order (chunk ids are), each once. */
function definesOf(group: Group): string[] {
  const ids = [...group.defines.keys()].sort((a, b) => a - b);
  return [...new Set(ids.flatMap((id) => group.defines.get(id) ?? []))];
}

/** Chunk `id` lies within the group's chunks or right beside them. */
function touches(group: Group, id: number): boolean {
  return id >= group.first - 1 && id <= group.last + 1;
}

function extend(group: Group, id: number, startLine: number, endLine: number): void {
  group.first = Math.min(group.first, id);
  group.last = Math.max(group.last, id);
  group.hit.startLine = Math.min(group.hit.startLine, startLine);
  group.hit.endLine = Math.max(group.hit.endLine, endLine);
}
