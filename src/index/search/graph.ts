/**
 * The code-graph leg: the definitions that the best-ranked chunks call. A question's words land on the
 * code that uses a thing as often as on the thing (a test, a caller, the entry point of a request); the
 * names those chunks call, resolved to their definitions by the store's symbol-name index, point one step
 * down to the implementation. A name called by several of the best chunks, or by better-ranked ones,
 * counts more; a name defined in many files (`get`, `__init__`, `String`) resolves to nothing in
 * particular and is left out. Bounded work: one query for the seeds' calls, one indexed lookup per name
 * followed.
 */
import { type ChunkRow, type LexicalStore, symbolName } from "../store/lexical.js";

/** How many of the best-ranked chunks have their calls followed. */
export const GRAPH_SEEDS = 10;
/** The most called names resolved per search (the heaviest ones). */
const NAMES_FOLLOWED = 24;
/** Definitions read per name before counting the files they lie in. */
const DEFINITIONS_READ = 20;
/** A name defined in more files than this is too ambiguous to follow. */
const MAX_DEFINING_FILES = 3;

/** The first chunk of each definition (a split function's later pieces have the same path and symbol). */
export function firstChunkOfEach(rows: readonly ChunkRow[]): ChunkRow[] {
  const first = new Map<string, ChunkRow>();
  for (const row of rows) {
    const key = `${row.path}\0${row.symbol}`;
    const known = first.get(key);
    if (!known || row.startLine < known.startLine) first.set(key, row);
  }
  return [...first.values()];
}

/**
 * The definitions the `seeds` (chunk ids, best first) call, best first: each called name weighs the sum
 * over the seeds calling it of 1 / (seed rank), shared among the files defining it. A seed's call of
 * its own name (recursion) is not followed.
 */
export function calledDefinitions(lexical: LexicalStore, seeds: readonly number[]): number[] {
  const calls = lexical.callsOf(seeds);
  const rows = lexical.chunks(seeds);
  const weight = new Map<string, number>();
  seeds.forEach((id, rank) => {
    const own = symbolName(rows.get(id)?.symbol ?? "");
    for (const name of calls.get(id) ?? []) {
      if (name !== own) weight.set(name, (weight.get(name) ?? 0) + 1 / (rank + 1));
    }
  });
  const followed = [...weight].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).slice(0, NAMES_FOLLOWED);
  const scored: { id: number; score: number }[] = [];
  for (const [name, w] of followed) {
    const definitions = firstChunkOfEach(lexical.chunksBySymbolName([name], DEFINITIONS_READ));
    const files = new Set(definitions.map((row) => row.path)).size;
    if (files === 0 || files > MAX_DEFINING_FILES) continue;
    for (const row of definitions) scored.push({ id: row.id, score: w / files });
  }
  const best = new Map<number, number>();
  for (const { id, score } of scored) best.set(id, Math.max(best.get(id) ?? 0, score));
  return [...best].sort(([a, x], [b, y]) => y - x || a - b).map(([id]) => id);
}
