/**
 * The ranked lists fusion reads besides chunk BM25: whole-file BM25, file paths, the vector leg and exact
 * matches of what a query names (frames, definitions, identifiers, paths); each file's best chunk stands
 * for it in the lists that rank files.
 */
import type { ChunkRow, FileRow } from "../store/lexical.js";
import type { SearchContext } from "./context.js";
import type { RankedList } from "./fusion.js";
import type { QueryIntent } from "./intent.js";
import type { ParsedQuery } from "./query.js";
import { type FileSnapshot, matchPath } from "./snapshot.js";

const FILE_LEG_DEPTH = 50;
/** An identifier found in more chunks than this is too common for the exact leg. */
const EXACT_MAX_DOCUMENTS = 10;

/**
 * Each file's best chunk in the chunk-level ranking (best first): the first of the file, or, given `weigh`
 * (≥ 1), the one whose score × weigh(chunk) is highest.
 */
export function bestChunkOfFiles(
  context: SearchContext,
  hits: readonly { id: number; score: number }[],
  weigh?: (row: ChunkRow) => number,
): Map<string, number> {
  const rows = context.lexical.chunks(hits.map((hit) => hit.id));
  const best = new Map<string, { id: number; score: number }>();
  for (const { id, score } of hits) {
    const row = rows.get(id);
    const known = row && best.get(row.path);
    if (!row || (known && !weigh)) continue;
    const fitted = weigh ? score * weigh(row) : score;
    if (!known || fitted > known.score) best.set(row.path, { id, score: fitted });
  }
  return new Map([...best].map(([path, { id }]) => [path, id]));
}

/**
 * A ranking of files as a ranking of chunks: each file represented by its best chunk in the chunk-level
 * ranking (or its first chunk when no chunk of it ranked).
 */
function representatives(
  context: SearchContext,
  paths: readonly string[],
  bestChunk: ReadonlyMap<string, number>,
): number[] {
  const first = new Map(
    context.lexical
      .firstChunks(paths.filter((path) => !bestChunk.has(path)))
      .map((row) => [row.path, row.id]),
  );
  return paths
    .map((path) => bestChunk.get(path) ?? first.get(path))
    .filter((id): id is number => id !== undefined);
}

/** The file and path legs' lists with each file's chunk replaced by the one `chosen` for it; other legs as they are. */
export function renamed(
  context: SearchContext,
  list: RankedList,
  chosen: ReadonlyMap<string, number>,
): RankedList {
  if (list.name !== "file" && list.name !== "path") return list;
  const rows = context.lexical.chunks(list.ids);
  const ids = list.ids.map((id) => {
    const path = rows.get(id)?.path;
    return (path === undefined ? undefined : chosen.get(path)) ?? id;
  });
  return { ...list, ids };
}

/** Whole-file BM25: files ranked by all the evidence they hold. */
export function fileLeg(
  context: SearchContext,
  query: ParsedQuery,
  bestChunk: ReadonlyMap<string, number>,
  maxTerms: number | undefined,
): number[] {
  const files = context.lexical.bm25Files(query.terms, {
    limit: FILE_LEG_DEPTH,
    ...(maxTerms ? { maxTerms } : {}),
  });
  return representatives(
    context,
    files.map((file) => file.path),
    bestChunk,
  );
}

/** Files whose paths name what the query names (see PathIndex). */
export function pathLeg(
  context: SearchContext,
  snapshot: FileSnapshot,
  query: ParsedQuery,
  bestChunk: ReadonlyMap<string, number>,
): number[] {
  return representatives(context, snapshot.pathIndex().rank(query.terms, FILE_LEG_DEPTH), bestChunk);
}

/**
 * Chunks the query names: stack-frame lines first, then definitions of the identifiers it uses, then
 * chunks holding those identifiers verbatim, then files it mentions (paths, dotted modules). `named` holds
 * the frames (stack frames, links to a line): the query points at them exactly, whatever kind of file
 * holds them. Definitions are not in it: a report's example code names test helpers and vendored code too.
 */
export function exactLeg(
  context: SearchContext,
  query: ParsedQuery,
  intent: QueryIntent,
  files: ReadonlyMap<string, readonly FileRow[]>,
): { ids: number[]; named: Set<number> } {
  const ranked: number[] = [];
  const seen = new Set<number>();
  const push = (ids: Iterable<number>) => {
    for (const id of ids) {
      if (!seen.has(id)) {
        seen.add(id);
        ranked.push(id);
      }
    }
  };
  const idsOf = (rows: readonly ChunkRow[]) => rows.map((row) => row.id);
  for (const frame of query.frames) {
    const file = matchPath(files, frame.path);
    if (!file) continue;
    const chunks = context.lexical.chunksOfPaths([file.path]);
    push(
      idsOf(
        chunks.filter(
          (c) => frame.line !== undefined && c.startLine <= frame.line && frame.line <= c.endLine,
        ),
      ),
    );
  }
  const named = new Set(ranked);
  // a report's or a trace's identifiers name the chunks of their own definitions; one that merely holds
  // a small definition of the name among others moved the development issues' files down
  // (bench/retrieval: Acc@5 0.813 → 0.804), so for them only a chunk's own symbol counts
  const held = intent.kind !== "report" && intent.kind !== "trace";
  push(idsOf(context.lexical.chunksBySymbolName(query.identifiers, 20, { held })));
  const verbatim = query.identifiers.map((identifier) => identifier.toLowerCase());
  push(context.lexical.chunksWithTerms(verbatim, EXACT_MAX_DOCUMENTS).slice(0, 10));
  for (const path of query.paths) {
    const file = matchPath(files, path);
    if (file) push(idsOf(context.lexical.chunksOfPaths([file.path]).slice(0, 20)));
  }
  return { ids: ranked, named };
}

/**
 * Chunks nearest to the query's vector that are still indexed (chunk ids are never reused: a vector row
 * left by a file no longer indexed names no chunk); undefined when there is no vector leg.
 */
export async function vectorLeg(
  context: SearchContext,
  query: ParsedQuery,
  depth: number,
): Promise<number[] | undefined> {
  if (!context.vectors || !context.embedder) return undefined;
  const [vector] = await context.embedder.embed([query.cleaned]);
  if (!vector?.some((x) => x !== 0)) return undefined;
  const ids = (await context.vectors.search(vector, depth)).map((hit) => hit.id);
  const indexed = context.lexical.chunks(ids);
  return ids.filter((id) => indexed.has(id));
}
