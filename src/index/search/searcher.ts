import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { compileGlob } from "../../workspace/glob.js";
import { sha256Hex } from "../../workspace/hash.js";
import { umbraIgnoreMatcher } from "../../workspace/ignore-rules.js";
import type { ChunkRow, FileRow } from "../store/lexical.js";
import type { SearchContext } from "./context.js";
import { keepFileScores, liftByFile, supportByFile } from "./focus.js";
import { memberAccesses, phraseForms, wordForms } from "./forms.js";
import { byScore, type RankedList, reciprocalRankFusion } from "./fusion.js";
import { HitAssembler, PER_FILE_IN_TOP } from "./hits.js";
import { boostImported } from "./import-boost.js";
import { classifyQuery, type QueryIntent } from "./intent.js";
import { jumpFirst, jumpTargets, MAX_JUMP } from "./jump.js";
import { bestChunkOfFiles, exactLeg, fileLeg, pathLeg, renamed, vectorLeg } from "./legs.js";
import { chunkNameFit, framingChunks, nameFit } from "./names.js";
import { isStopWord, type ParsedQuery, parseQuery } from "./query.js";
import { type FileRole, priorFor } from "./roles.js";
import { snapshotOf } from "./snapshot.js";
import { codeNames } from "./thesaurus.js";

export interface SearchOptions {
  limit?: number;
  /** Glob over workspace-relative paths (e.g. `src/**\/*.ts`; see workspace/glob.ts); a bad one throws GlobError. */
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
      .sort(byScore);
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
        : jumpTargets(context, intent, snapshot, boosted);
  for (const row of jump) rows.set(row.id, row);
  const ranked = jumpFirst(jump, boosted);
  const matchesGlob = options.pathGlob ? compileGlob(options.pathGlob) : undefined;
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
