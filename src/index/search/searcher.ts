import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { sha256Hex } from "../../workspace/hash.js";
import { umbraIgnoreMatcher } from "../../workspace/ignore-rules.js";
import type { Embedder } from "../embed/index.js";
import { type ChunkRow, type FileRow, type LexicalStore, symbolName } from "../store/lexical.js";
import type { VectorStore } from "../store/vectors.js";
import { codeTokens } from "../tokenize.js";
import { keepFileScores, liftByFile, supportByFile } from "./focus.js";
import { memberAccesses, phraseForms, wordForms } from "./forms.js";
import { type RankedList, reciprocalRankFusion } from "./fusion.js";
import { HitAssembler, PER_FILE_IN_TOP } from "./hits.js";
import { ImportResolver } from "./imports.js";
import { classifyQuery, type QueryIntent } from "./intent.js";
import { bareShapes, chunkNameFit, framingChunks, nameFit } from "./names.js";
import { PathIndex } from "./paths.js";
import { isStopWord, type ParsedQuery, parseQuery } from "./query.js";
import { type FileRole, fileRole, priorFor } from "./roles.js";
import { codeNames } from "./thesaurus.js";

export interface SearchOptions {
  limit?: number;
  /** Glob over workspace-relative paths (e.g. `src/**\/*.ts`). */
  pathGlob?: string;
  language?: string;
  /** Leg weights for fusion; a weight of 0 turns a leg off. */
  weights?: Partial<Record<LegName, number>>;
  /** The most query terms the lexical legs read postings for (the most telling ones); default 64. */
  maxQueryTerms?: number;
  /** Reciprocal-rank-fusion constant: smaller values favour each leg's top ranks (default 20). */
  fusionK?: number;
  /** How much each kind of file counts (default: implementation code first); `false` ranks all alike. */
  prior?: Record<FileRole, number> | false;
  /**
   * A file imported by one of the best-ranked files gains this fraction of its importer's score (the
   * second file of a change is often one the first one uses), for descriptive queries; 0 turns it off.
   * Default 0.1.
   */
  importBoost?: number;
  /**
   * For a descriptive report or trace, a file's best chunk gains this share of the scores of its next
   * chunks in the ranking (see supportByFile): a file several of whose chunks match outranks one with a
   * single match as strong. Default 0.5; 0 turns it off.
   */
  fileSupport?: number;
  /** Told what kind of query this is (a question, a report, an identifier, …: see QueryIntent). */
  onIntent?: (intent: QueryIntent) => void;
}

export type LegName = "lexical" | "forms" | "file" | "path" | "vector" | "exact";

export interface SearchHit {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  symbol: string;
  /**
   * The definitions of code that start in the hit's lines, with their symbol paths, in file order: the
   * small functions a chunk groups, whose symbol names none or one of them.
   */
  defines: string[];
  language: string;
  /** The file changed on disk since it was indexed: the lines may have moved. */
  stale: boolean;
}

/**
 * `forms`, for a question only: BM25 over chunks again, each word counted with its other forms (see
 * withForms). bench/questions (a development set, 115 questions): file@1 0.730 → 0.748, symbol@5 0.800 →
 * 0.817 at 0.5, alike from 0.45 to 0.7; at 1 file@1 falls below the leg's absence (first 95: 0.758 → 0.747).
 */
const DEFAULT_WEIGHTS: Record<LegName, number> = {
  lexical: 1,
  forms: 0.5,
  file: 1,
  path: 0.75,
  vector: 0.7,
  exact: 1.2,
};
const LEG_DEPTH = 200;
const FILE_LEG_DEPTH = 50;
/** An identifier found in more chunks than this is too common for the exact leg. */
const EXACT_MAX_DOCUMENTS = 10;
/** How many of the best-ranked files have their imports followed. */
const IMPORTERS_FOLLOWED = 3;
const DEFAULT_IMPORT_BOOST = 0.1;
/**
 * A report's file: how much of its next chunks' scores its best chunk gains, and how many of them count
 * (see supportByFile). Measured in process on the tuning sets (bench/retrieval/ablation.mjs, BENCHMARKS.md):
 * Acc@5 on the development issues 0.813 → 0.822, pip + pylint 0.815 → 0.833, sympy half A 0.796 at both
 * (Acc@1 0.463 → 0.500); 0.25 / 1 gave 0.822 / 0.813 on the development issues, one chunk or four 0.813.
 */
const DEFAULT_FILE_SUPPORT = 0.5;
const SUPPORTING_CHUNKS = 2;
/** Reports and traces with at least this many distinct terms are descriptive: the file-role prior applies. */
const DESCRIPTIVE_QUERY_TERMS = 6;
/** The most chunks a query jumps to (the lines of a range, the definitions of a name, a trace's frames). */
const MAX_JUMP = 10;
/** Chunks read for the definitions of a name, before the best few are kept. */
const DEFINITIONS_READ = 100;
/**
 * For a question: how much a chunk whose name says what the query says (see names.ts; 0–1) gains
 * when a file's chunk is chosen to stand for it in the file and path legs, when a file's chunks are
 * ordered, and in the order of files (a definition named for what is asked is evidence for its file too,
 * though less than for which of its chunks comes first: bench/questions file@1 0.765 → 0.791 at 0.5, and
 * 0.783–0.791 from 0.3 to 1; at 1.5 0.722); the share of its file's best score each chunk gains; how many
 * of the first 5 hits one file may hold. Measured on bench/questions (a development set):
 * bench/questions/inprocess.mjs, BENCHMARKS.md.
 */
const QUESTION_NAME_GAIN = { representative: 4, withinFile: 3, fileOrder: 0.5 };
const QUESTION_FILE_LIFT = 1;
const QUESTION_PER_FILE_IN_TOP = 3;
/**
 * For a question, how much a chunk that only frames code (a class's or struct's own chunk, a declaration,
 * imports: `framingChunks`) counts when its file's chunks are ordered (bench/questions: symbol@1 0.453 →
 * 0.474, nothing else moved; 0.25 lost a question at symbol@5).
 */
const FRAMING_WEIGHT = 0.5;
/**
 * A phrase's acronym or compound (see forms.ts) weighs as one word of prose. Measured on bench/questions
 * (a development set): file@1 0.726 → 0.737, and 0.747 with the other forms of words the index does not
 * hold; other forms of every word lost symbol@5 (0.832 → 0.684–0.800) and are not added.
 */
const PHRASE_WEIGHT = 1;
/**
 * For a question, how much a piece of a shape that no code of its file belongs to counts (`bareShapes`:
 * an options interface, a type alias; not a Go struct with methods), in the order of files and within
 * one. Its doc comments say in prose what the code elsewhere does. bench/questions (a development set,
 * 115 questions): file@1 0.757 → 0.765, symbol@5 0.817 → 0.843, every gain in got. At 0.7 / 0.5 / 0.15 / 0:
 * file@1 0.765 at each, symbol@5 0.826 / 0.835 / 0.843 / 0.843.
 */
const QUESTION_SHAPE_WEIGHT = 0.3;
/** A member a question names as code does (`c.json`) weighs as an identifier of code. */
const MEMBER_WEIGHT = 3;

/** Stores a search reads; opened by the caller for the lifetime of one or many searches. */
export interface SearchContext {
  root: string;
  lexical: LexicalStore;
  vectors: VectorStore | undefined;
  embedder: Embedder | undefined;
}

/**
 * What searches derive from one snapshot of the indexed files, built on first use. The lexical store hands
 * out the same array until the index changes, so a long-lived process (watch, agent) builds each once per
 * index version instead of once per search.
 */
class FileSnapshot {
  readonly byPath: ReadonlyMap<string, FileRow>;
  readonly byName: ReadonlyMap<string, readonly FileRow[]>;
  /** Imports already read, by path and content hash. */
  readonly importsRead = new Map<string, string[]>();
  /** Each file's bare shapes (see bareShapes), read once per snapshot for the files a search asks about. */
  private readonly shapes = new Map<string, ReadonlySet<string>>();
  private paths?: PathIndex;
  private imports?: ImportResolver;
  /** Each path's role, judged once: a search weighs hundreds of candidates by it. */
  private readonly roles = new Map<string, FileRole>();

  constructor(readonly files: readonly FileRow[]) {
    this.byPath = new Map(files.map((file) => [file.path, file]));
    this.byName = filesByName(files);
  }

  /**
   * Takes over what an earlier snapshot derived and still holds here: with the same paths (an edit changes
   * contents, not names), its path index, import resolver and roles; the imports it read of files whose
   * contents are the same.
   */
  inherit(earlier: FileSnapshot): void {
    const same =
      earlier.files.length === this.files.length &&
      earlier.files.every((file, i) => file.path === this.files[i]?.path);
    if (same) {
      this.paths ??= earlier.paths;
      this.imports ??= earlier.imports;
      for (const [path, role] of earlier.roles) this.roles.set(path, role);
    }
    for (const [key, imports] of earlier.importsRead) {
      const path = key.slice(0, key.indexOf("\0"));
      if (key === `${path}\0${this.byPath.get(path)?.hash}`) this.importsRead.set(key, imports);
    }
  }

  /** The bare shapes of each of `paths` (read with one query for those not read before). */
  bareShapes(lexical: LexicalStore, paths: Iterable<string>): ReadonlyMap<string, ReadonlySet<string>> {
    const unread = [...new Set(paths)].filter((path) => !this.shapes.has(path));
    if (unread.length > 0) {
      const byFile = new Map<string, ChunkRow[]>(unread.map((path) => [path, []]));
      for (const row of lexical.chunksOfPaths(unread)) byFile.get(row.path)?.push(row);
      for (const [path, chunks] of byFile) this.shapes.set(path, bareShapes(chunks));
    }
    return this.shapes;
  }

  pathIndex(): PathIndex {
    this.paths ??= new PathIndex(this.files.map((file) => file.path));
    return this.paths;
  }

  role(path: string): FileRole {
    let role = this.roles.get(path);
    if (!role) {
      role = fileRole(path);
      this.roles.set(path, role);
    }
    return role;
  }

  importResolver(): ImportResolver {
    this.imports ??= new ImportResolver(this.files.map((file) => file.path));
    return this.imports;
  }
}

/**
 * Each store's snapshot of its files as last read: renewed when the store hands out another file list,
 * and kept for the index that replaces the store (warmSearch).
 */
const snapshots = new WeakMap<LexicalStore, FileSnapshot>();

function snapshotOf(lexical: LexicalStore): FileSnapshot {
  const files = lexical.files();
  let snapshot = snapshots.get(lexical);
  if (snapshot?.files !== files) {
    snapshot = new FileSnapshot(files);
    snapshots.set(lexical, snapshot);
  }
  return snapshot;
}

/**
 * Makes an index ready to answer at once: reads what every search reads and builds what searches derive
 * from its files, taking over from `earlier` (the index it replaces) what is still the same. A long-lived
 * process calls it when it opens an index, before the first search would pay for it.
 */
export function warmSearch(context: SearchContext, earlier?: SearchContext): void {
  context.lexical.warm();
  const snapshot = snapshotOf(context.lexical);
  const before = earlier && snapshots.get(earlier.lexical);
  if (before && before !== snapshot) snapshot.inherit(before);
  snapshot.pathIndex();
  snapshot.importResolver();
}

/**
 * Each file's best chunk in the chunk-level ranking (best first): the first of the file, or, given `weigh`
 * (≥ 1), the one whose score × weigh(chunk) is highest.
 */
function bestChunkOfFiles(
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
function renamed(context: SearchContext, list: RankedList, chosen: ReadonlyMap<string, number>): RankedList {
  if (list.name !== "file" && list.name !== "path") return list;
  const rows = context.lexical.chunks(list.ids);
  const ids = list.ids.map((id) => {
    const path = rows.get(id)?.path;
    return (path === undefined ? undefined : chosen.get(path)) ?? id;
  });
  return { ...list, ids };
}

/** Whole-file BM25: files ranked by all the evidence they hold. */
function fileLeg(
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
function pathLeg(
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
function exactLeg(
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
 * The chunks a path, a location or an identifier names, to come first like a jump: the chunks holding the
 * lines, the file's first chunk, or the first chunk of each definition of the name (implementation code
 * first, then as `ranked` has them; those whose symbol path or file path hold the name's qualifiers when
 * any do).
 */
function jumpTargets(
  context: SearchContext,
  intent: QueryIntent,
  files: ReadonlyMap<string, readonly FileRow[]>,
  ranked: readonly { id: number }[],
): ChunkRow[] {
  if (intent.target) {
    const file = matchPath(files, intent.target.path);
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
  const order = (row: ChunkRow) => (fileRole(row.path) === "source" ? 0 : 1);
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
function jumpFirst(
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

/**
 * Chunks nearest to the query's vector that are still indexed (chunk ids are never reused: a vector row
 * left by a file no longer indexed names no chunk); undefined when there is no vector leg.
 */
async function vectorLeg(
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

/** Indexed files by base name, for resolving paths a query mentions. */
export function filesByName(files: readonly FileRow[]): Map<string, FileRow[]> {
  const byName = new Map<string, FileRow[]>();
  for (const file of files) {
    const name = file.path.slice(file.path.lastIndexOf("/") + 1);
    const list = byName.get(name);
    if (list) list.push(file);
    else byName.set(name, [file]);
  }
  return byName;
}

/**
 * The indexed file a mentioned path refers to: exact, by suffix (either way round), or as a module path
 * (`a/b` → `a/b.py`, `a/b/__init__.py`, …); the shortest match wins.
 */
export function matchPath(
  byName: ReadonlyMap<string, readonly FileRow[]>,
  mentioned: string,
): FileRow | undefined {
  const clean = mentioned.replace(/^\/+/, "");
  const candidates = /\.[A-Za-z0-9]+$/.test(clean)
    ? [clean]
    : [`${clean}.py`, `${clean}/__init__.py`, `${clean}.ts`, `${clean}.js`, `${clean}.go`, `${clean}.rs`];
  let best: FileRow | undefined;
  for (const candidate of candidates) {
    for (const file of byName.get(candidate.slice(candidate.lastIndexOf("/") + 1)) ?? []) {
      const matches =
        file.path === candidate || file.path.endsWith(`/${candidate}`) || candidate.endsWith(`/${file.path}`);
      if (matches && (!best || file.path.length < best.path.length)) best = file;
    }
  }
  return best;
}

async function isStale(root: string, file: FileRow): Promise<boolean> {
  try {
    const info = await stat(join(root, file.path));
    if (info.size === file.size && info.mtimeMs === file.mtimeMs) return false;
    const bytes = await readFile(join(root, file.path));
    return sha256Hex(bytes) !== file.hash;
  } catch {
    return true;
  }
}

/** The indexed files that `file` imports, read from disk once per file version (a search reads the same few files again). */
async function importsOf(
  context: SearchContext,
  snapshot: FileSnapshot,
  file: FileRow,
  language: string,
): Promise<string[]> {
  const key = `${file.path}\0${file.hash}`;
  const known = snapshot.importsRead.get(key);
  if (known) return known;
  const text = await readFile(join(context.root, file.path), "utf8").catch(() => undefined);
  const imports = text === undefined ? [] : snapshot.importResolver().resolve(file.path, text, language);
  snapshot.importsRead.set(key, imports);
  return imports;
}

/**
 * Follows the imports of the best-ranked files (read from disk, as hits are): the best chunk of each file
 * they import that is already a candidate gains `boost` × the importer's score. A bug report names the
 * entry point; the code to change is often one step down.
 */
async function boostImported(
  context: SearchContext,
  ranked: readonly { id: number; score: number }[],
  rows: ReadonlyMap<number, ChunkRow>,
  snapshot: FileSnapshot,
  boost: number,
): Promise<readonly { id: number; score: number }[]> {
  if (boost <= 0) return ranked;
  const bestOfFile = new Map<string, { id: number; score: number }>();
  for (const hit of ranked) {
    const path = rows.get(hit.id)?.path;
    if (path !== undefined && !bestOfFile.has(path)) bestOfFile.set(path, hit);
  }
  const importers = [...bestOfFile].slice(0, IMPORTERS_FOLLOWED);
  const gain = new Map<number, number>();
  for (const [path, best] of importers) {
    const file = snapshot.byPath.get(path);
    if (!file) continue;
    for (const imported of await importsOf(context, snapshot, file, rows.get(best.id)?.language ?? "")) {
      const target = bestOfFile.get(imported);
      if (target) gain.set(target.id, Math.max(gain.get(target.id) ?? 0, boost * best.score));
    }
  }
  if (gain.size === 0) return ranked;
  return ranked
    .map(({ id, score }) => ({ id, score: score + (gain.get(id) ?? 0) }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
}

/**
 * How much a chunk counts for a question by its name: 1 + `gain` × how well its name fits the question,
 * halved for a chunk that only frames code (`framingChunks` over the rows the search has read).
 */
function byName(
  fitOf: (symbol: string) => number,
  gain: number,
  rowsRead: Iterable<ChunkRow>,
): (row: ChunkRow) => number {
  const framing = framingChunks(rowsRead);
  return (row) => (1 + gain * chunkNameFit(fitOf, row)) * (framing(row) ? FRAMING_WEIGHT : 1);
}

/**
 * The query with names the code may write for its words, where the index holds them (see forms.ts): the
 * acronym or compound of a phrase ("json web token" → `jwt`, "request handler" → `requesthandler`), and for a
 * word no chunk holds, its other forms (`suggested` → `suggest`, `suggestions`) in its place; one lookup.
 * A member written as code writes it (`c.json`) becomes an identifier unless `files` (indexed files by
 * base name) has a file of that name. `forms`: each term's other forms and the names code writes for it
 * (thesaurus.ts: `dictionary` → `dict`, `remove` → `strip`) that the index holds and the query does not
 * name, for the forms leg.
 */
function withForms(
  context: SearchContext,
  query: ParsedQuery,
  files: ReadonlyMap<string, readonly FileRow[]>,
): { query: ParsedQuery; forms: Map<string, string[]> } {
  const phrases = phraseForms(query.cleaned, isStopWord).filter((form) => !query.terms.has(form));
  const forms = [...query.terms.keys()].map((term) => ({ term, forms: wordForms(term) }));
  // the names code writes for a word (`dictionary`: `dict`; `remove`: `strip`), counted as its forms
  const names = new Map([...query.terms.keys()].map((term) => [term, codeNames(term)]));
  const held = context.lexical.termsHeld([
    ...phrases,
    ...query.terms.keys(),
    ...forms.flatMap((word) => word.forms),
    ...[...names.values()].flat(),
  ]);
  const terms = new Map(query.terms);
  for (const form of phrases) if (held.has(form)) terms.set(form, PHRASE_WEIGHT);
  for (const word of forms) {
    if (held.has(word.term)) continue;
    const weight = query.terms.get(word.term) ?? 0;
    for (const form of word.forms) if (held.has(form) && !terms.has(form)) terms.set(form, weight);
  }
  // `c.json`: a member the code defines, unless it is the name of an indexed file (`package.json`)
  const members = memberAccesses(query.cleaned)
    .filter(({ written }) => !files.has(written))
    .map(({ member }) => member);
  for (const member of members) {
    const term = member.toLowerCase();
    terms.set(term, Math.max(terms.get(term) ?? 0, MEMBER_WEIGHT));
  }
  const identifiers = [...new Set([...query.identifiers, ...members])];
  // each term's forms that the index holds and the query does not already ask for (a form put in for a
  // word no chunk holds has that word's forms, looked up above)
  const formsOf = new Map(forms.map((word) => [word.term, word.forms]));
  const termForms = new Map<string, string[]>();
  for (const term of terms.keys()) {
    const kept = [...(formsOf.get(term) ?? wordForms(term)), ...(names.get(term) ?? [])].filter(
      (form) => held.has(form) && !terms.has(form),
    );
    if (kept.length > 0) termForms.set(term, kept);
  }
  return { query: { ...query, terms, identifiers }, forms: termForms };
}

/**
 * Hybrid search: BM25 over chunks and over whole files, file paths, vector similarity and exact matches of
 * named files, lines and symbols, fused with reciprocal-rank fusion; for bug reports, a code-first prior and
 * a boost for files the best ones import. Paths are resolved locally and hits whose file changed since
 * indexing are flagged stale.
 */
export async function search(
  context: SearchContext,
  text: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const limit = options.limit ?? 10;
  const weights = { ...DEFAULT_WEIGHTS, ...options.weights };
  const parsed = parseQuery(text);
  const intent = classifyQuery(text, parsed);
  options.onIntent?.(intent);
  const snapshot = snapshotOf(context.lexical);
  const { byPath } = snapshot;
  // a question's words in the forms the code may write them (see forms.ts)
  const { query, forms } =
    intent.kind === "question"
      ? withForms(context, parsed, snapshot.byName)
      : { query: parsed, forms: new Map<string, string[]>() };
  const depth = Math.max(LEG_DEPTH, limit * 5);
  const lists: RankedList[] = [];
  let bestNamed: Map<string, number> | undefined;
  // a question names what the code does, and the function that does it is often named with its words
  const nameScore =
    intent.kind === "question" ? nameFit(query.terms, context.lexical.idf(query.terms.keys())) : undefined;
  // The vector leg runs beside the others: its query is embedded (a remote embedder answers over the
  // network) and searched on LanceDB's own threads, which need this thread for a moment between their
  // steps, so the legs computed here give the event loop a turn between them.
  const vectorIds = weights.vector > 0 ? vectorLeg(context, query, depth) : Promise.resolve(undefined);
  vectorIds.catch(() => undefined); // awaited below; not an unhandled rejection if a leg here throws first
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  await turn();

  const maxTerms = options.maxQueryTerms ? { maxTerms: options.maxQueryTerms } : {};
  if (weights.forms > 0 && forms.size > 0) {
    const withTheirForms = context.lexical.bm25(query.terms, { limit: depth, forms, ...maxTerms });
    lists.push({ name: "forms", weight: weights.forms, ids: withTheirForms.map((hit) => hit.id) });
    await turn();
  }
  if (weights.lexical > 0 && query.terms.size > 0) {
    const hits = context.lexical.bm25(query.terms, { limit: depth, ...maxTerms });
    const chunkRanking = hits.map((hit) => hit.id);
    lists.push({ name: "lexical", weight: weights.lexical, ids: chunkRanking });
    await turn();
    const bestChunk = bestChunkOfFiles(context, hits);
    if (nameScore) {
      const weigh = byName(
        nameScore,
        QUESTION_NAME_GAIN.representative,
        context.lexical.chunks(chunkRanking).values(),
      );
      bestNamed = bestChunkOfFiles(context, hits, weigh);
    }
    if (weights.file > 0) {
      lists.push({
        name: "file",
        weight: weights.file,
        ids: fileLeg(context, query, bestChunk, options.maxQueryTerms),
      });
    }
    await turn();
    if (weights.path > 0) {
      const ids = pathLeg(context, snapshot, query, bestChunk);
      if (ids.length > 0) lists.push({ name: "path", weight: weights.path, ids });
    }
  }
  await turn();
  const { ids: exact, named } =
    weights.exact > 0
      ? exactLeg(context, query, intent, snapshot.byName)
      : { ids: [], named: new Set<number>() };
  const vectorRanking = await vectorIds;
  if (vectorRanking) lists.push({ name: "vector", weight: weights.vector, ids: vectorRanking });
  if (exact.length > 0) lists.push({ name: "exact", weight: weights.exact, ids: exact });

  const fuse = (legs: readonly RankedList[]) =>
    reciprocalRankFusion(legs, options.fusionK ?? 20).slice(0, depth * 2);
  const candidates = fuse(lists);
  // a question: the same legs, the file and path legs' vote for a file going to its best-named chunk
  const namedCandidates = bestNamed && fuse(lists.map((list) => renamed(context, list, bestNamed)));
  const rows = context.lexical.chunks([...candidates, ...(namedCandidates ?? [])].map((hit) => hit.id));
  // The prior ranks code above tests and docs for a question (unless it asks about them) and a long report;
  // a name or a path wants exactly where it occurs, whatever the kind of file.
  const descriptive = query.terms.size >= DESCRIPTIVE_QUERY_TERMS;
  const prose = intent.kind === "question" || intent.kind === "report" || intent.kind === "trace";
  const prior = options.prior === false ? undefined : priorFor(intent, descriptive, options.prior);
  const withPrior = (ranked: readonly { id: number; score: number }[], weigh: (row: ChunkRow) => number) =>
    ranked
      .map(({ id, score }) => {
        const row = rows.get(id);
        if (!row) return { id, score: 0 };
        return {
          id,
          score: score * weigh(row) * (!prior || named.has(id) ? 1 : prior[snapshot.role(row.path)]),
        };
      })
      .sort((a, b) => b.score - a.score || a.id - b.id);
  // A question asks what code does: a piece of a shape no code of its file belongs to counts less (its
  // file's other chunks are read once per snapshot, for the candidates that may be such pieces).
  const maybeShape = (row: ChunkRow) => row.symbol !== "" && row.defines.length === 0;
  const shapes =
    nameScore &&
    snapshot.bareShapes(
      context.lexical,
      [...rows.values()].filter(maybeShape).map((row) => row.path),
    );
  const shapeWeight = (row: ChunkRow) =>
    shapes && maybeShape(row) && shapes.get(row.path)?.has(row.symbol) ? QUESTION_SHAPE_WEIGHT : 1;
  // a question: a chunk named for what it asks counts more in the order of files as well
  const fileOrderWeight = nameScore
    ? (row: ChunkRow) => shapeWeight(row) * (1 + QUESTION_NAME_GAIN.fileOrder * chunkNameFit(nameScore, row))
    : shapeWeight;
  const prioritised = prior || nameScore ? withPrior(candidates, fileOrderWeight) : candidates;
  // A question: files rank as the legs and the names above rank them, and within a file its best-named
  // definitions come first; a strong file's other chunks come before weaker files' only matches (focus.ts).
  const pathOf = (id: number) => rows.get(id)?.path;
  const nameWeight = nameScore && byName(nameScore, QUESTION_NAME_GAIN.withinFile, rows.values());
  const fused =
    nameWeight && namedCandidates
      ? liftByFile(
          keepFileScores(
            prioritised,
            withPrior(namedCandidates, (row) => nameWeight(row) * shapeWeight(row)),
            pathOf,
          ),
          pathOf,
          QUESTION_FILE_LIFT,
        )
      : prioritised;
  // A report or a trace: a file's other matching chunks are evidence for it too (a question has its own
  // reshaping by file, above). The import boost then follows the files in the order this gives them.
  const support = options.fileSupport ?? DEFAULT_FILE_SUPPORT;
  const supported =
    descriptive && (intent.kind === "report" || intent.kind === "trace") && support > 0
      ? supportByFile(fused, pathOf, support, SUPPORTING_CHUNKS)
      : fused;
  // Following imports serves bug reports (they name the entry point; the fix is often one step down);
  // a short query wants the places that hold its words.
  const boosted =
    descriptive && prose
      ? await boostImported(context, supported, rows, snapshot, options.importBoost ?? DEFAULT_IMPORT_BOOST)
      : supported;
  // a path, a line, a name or a trace resolves like a jump: what it names first (a trace: its frames,
  // innermost first), the other legs after
  const jump =
    weights.exact === 0
      ? []
      : intent.kind === "trace"
        ? [...named].flatMap((id) => rows.get(id) ?? []).slice(0, MAX_JUMP)
        : jumpTargets(context, intent, snapshot.byName, boosted);
  for (const row of jump) rows.set(row.id, row);
  const ranked = jumpFirst(jump, boosted);
  // picomatch (CommonJS) is loaded only for a search that has a --path glob
  const matchesGlob = options.pathGlob
    ? (createRequire(import.meta.url)("picomatch") as typeof import("picomatch"))(options.pathGlob, {
        dot: true,
      })
    : undefined;
  // Pieces of one symbol collapse into one hit and one file holds at most two of the first five (three for
  // a question) while others match (see hits.ts); staleness is checked for the hits kept only.
  const assembler = new HitAssembler(limit, nameScore ? QUESTION_PER_FILE_IN_TOP : PER_FILE_IN_TOP);
  // The ignore rules as they are now: a file ignored since it was indexed is never a hit.
  const ignoredNow = umbraIgnoreMatcher(context.root);
  for (const { id, score } of ranked) {
    if (assembler.full()) break;
    const row = rows.get(id);
    if (!row || !byPath.has(row.path)) continue;
    if (matchesGlob && !matchesGlob(row.path)) continue;
    if (options.language && row.language !== options.language) continue;
    if (await ignoredNow(row.path)) continue;
    assembler.add(row, score);
  }
  const hits = assembler.hits();
  const staleness = new Map<string, Promise<boolean>>();
  for (const { path } of hits) {
    const file = byPath.get(path);
    if (file && !staleness.has(path)) staleness.set(path, isStale(context.root, file));
  }
  return Promise.all(hits.map(async (hit) => ({ ...hit, stale: (await staleness.get(hit.path)) ?? false })));
}
