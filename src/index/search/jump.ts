/** What a path, a line or a name points at, put first like a jump to it. */
import { type ChunkRow, symbolName } from "../store/lexical.js";
import { codeTokens } from "../tokenize.js";
import type { SearchContext } from "./context.js";
import type { QueryIntent } from "./intent.js";
import { type FileSnapshot, matchPath } from "./snapshot.js";

/** The most chunks a query jumps to (the lines of a range, the definitions of a name, a trace's frames). */
export const MAX_JUMP = 10;
/** Chunks read for the definitions of a name, before the best few are kept. */
const DEFINITIONS_READ = 100;

/**
 * The chunks a path, a location or an identifier names, to come first like a jump: the chunks holding the
 * lines, the file's first chunk, or the first chunk of each definition of the name (implementation code
 * first, then as `ranked` has them; those whose symbol path or file path hold the name's qualifiers when
 * any do).
 */
export function jumpTargets(
  context: SearchContext,
  intent: QueryIntent,
  snapshot: FileSnapshot,
  ranked: readonly { id: number }[],
): ChunkRow[] {
  if (intent.target) {
    const file = matchPath(snapshot.byName, intent.target.path);
    if (!file) return [];
    const { line, endLine = line } = intent.target;
    if (line === undefined || endLine === undefined) return context.lexical.firstChunks([file.path]);
    const chunks = context.lexical.chunksOfPaths([file.path]);
    const holding = chunks.filter((c) => c.startLine <= endLine && line <= c.endLine).slice(0, MAX_JUMP);
    // a blank line between chunks, or past the end: the chunk before it
    const before = chunks.filter((c) => c.startLine <= line).at(-1) ?? chunks[0];
    return holding.length > 0 ? holding : before ? [before] : [];
  }
  if (!intent.name) return [];
  const { name, qualifiers } = intent.name;
  // each definition of the name (a chunk's symbol, or one of the definitions a chunk holds) by its first chunk
  const first = new Map<string, { row: ChunkRow; symbol: string }>();
  for (const row of context.lexical.chunksBySymbolName([name], DEFINITIONS_READ)) {
    const symbol =
      [row.symbol, ...row.defines, ...row.declares].find((path) => symbolName(path) === name) ?? row.symbol;
    const key = `${row.path}\0${symbol}`;
    const known = first.get(key);
    if (!known || row.startLine < known.row.startLine) first.set(key, { row, symbol });
  }
  const qualified = ({ row, symbol }: { row: ChunkRow; symbol: string }) =>
    qualifiers.every(
      (q) => symbol.split(" > ").includes(q) || codeTokens(row.path).includes(q.toLowerCase()),
    );
  const all = [...first.values()];
  const definitions = (all.some(qualified) ? all.filter(qualified) : all).map(({ row }) => row);
  const order = (row: ChunkRow) => (snapshot.role(row.path) === "source" ? 0 : 1);
  const rank = new Map(ranked.map((hit, i) => [hit.id, i]));
  return definitions
    .sort(
      (a, b) =>
        order(a) - order(b) ||
        (rank.get(a.id) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b.id) ?? Number.MAX_SAFE_INTEGER) ||
        a.id - b.id,
    )
    .slice(0, MAX_JUMP);
}

/** `jump` first, scored above the best of `ranked`, then the rest of `ranked`. */
export function jumpFirst(
  jump: readonly ChunkRow[],
  ranked: readonly { id: number; score: number }[],
): readonly { id: number; score: number }[] {
  if (jump.length === 0) return ranked;
  const top = ranked[0]?.score || 1;
  const ids = new Set(jump.map((row) => row.id));
  return [
    ...jump.map((row, i) => ({ id: row.id, score: top * (1 + (jump.length - i) / jump.length) })),
    ...ranked.filter((hit) => !ids.has(hit.id)),
  ];
}
