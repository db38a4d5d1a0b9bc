import { renameSync } from "node:fs";
import Database from "better-sqlite3";
import { privateFileSync } from "../../config/private.js";
import type { Chunk } from "../chunk/index.js";
import { bm25Idf } from "./idf.js";
import { PostingsTable } from "./postings.js";

/**
 * 5: chunks list the definitions that start in them (`defines`, `declares`), each name findable
 * (`chunk_names`).
 */
const SCHEMA_VERSION = "5";

/** One chunk as the lexical store keeps it: location and metadata, never code. */
export type ChunkRow = Omit<Chunk, "text"> & { id: number };

export interface FileRow {
  path: string;
  mpath: string;
  hash: string;
  size: number;
  mtimeMs: number;
  language: string;
}

/** A chunk ready to be written: its row (without id) and its lexical terms with frequencies. */
export interface NewChunk extends Omit<ChunkRow, "id"> {
  terms: Map<string, number>;
  length: number;
}

export interface ScoredChunk {
  id: number;
  score: number;
}

/** The most terms of one query that BM25 reads postings for, by default. */
export const MAX_QUERY_TERMS = 64;

/** Meta key counting the changes of the indexed content (files, chunks, postings). */
const CONTENT_VERSION = "contentVersion";

/** The columns of a ChunkRow, for the queries that read rows of chunks (`defines` as stored: see chunkRow). */
const CHUNK_COLUMNS =
  "chunks.id AS id, path, start_line AS startLine, end_line AS endLine, language, symbol, defines, declares, hash";
const CHUNK_ROWS = `SELECT ${CHUNK_COLUMNS} FROM chunks`;

/** A chunk row as SQLite returns it: `defines` and `declares` are symbol paths joined by line breaks. */
type StoredChunkRow = Omit<ChunkRow, "defines" | "declares"> & { defines: string; declares: string };

/** Between the symbol paths of a `defines` or `declares` column (a symbol path never holds a line break). */
const PATH_SEPARATOR = "\n";

function paths(stored: string): string[] {
  return stored === "" ? [] : stored.split(PATH_SEPARATOR);
}

function chunkRow(stored: StoredChunkRow): ChunkRow {
  return { ...stored, defines: paths(stored.defines), declares: paths(stored.declares) };
}

/**
 * The names a chunk can be found by (chunksBySymbolName): its symbol's and those of what it defines and
 * declares.
 */
export function definedNames(chunk: Pick<Chunk, "symbol" | "defines" | "declares">): string[] {
  const names = new Set<string>();
  for (const path of [chunk.symbol, ...chunk.defines, ...chunk.declares]) {
    const name = symbolName(path);
    if (name !== "") names.add(name);
  }
  return [...names];
}

/** Every name a chunk defines (definedNames), for finding chunks by name. */
const CHUNK_NAMES_TABLE = `
  CREATE TABLE IF NOT EXISTS chunk_names(
    id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY(id, name)) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS chunk_names_name ON chunk_names(name, id);`;

/** The most chunk rows (and first chunks of files) kept read between searches: ~15 MiB at most. */
const CACHED_ROWS = 50_000;

/** The map, or a fresh one once it holds more than CACHED_ROWS entries. */
function bounded<K, V>(map: Map<K, V> | undefined): Map<K, V> {
  return map && map.size <= CACHED_ROWS ? map : new Map();
}

interface CorpusStats {
  documents: number;
  averageLength: number;
}

type Aggregate = { n: number; avg: number | null };

/**
 * What searches read over and over, kept until the indexed content changes (by this or another
 * connection). A commit that changes only bookkeeping (the time of the last sync) keeps it: a long-lived
 * reader (the engine) would otherwise read it all again after every periodic check of the tree.
 */
interface ReadCache {
  /** SQLite's count of other connections' commits when the cache was last checked. */
  dataVersion: number;
  /** The CONTENT_VERSION meta value the cache was filled at. */
  contentVersion?: string | undefined;
  files?: FileRow[];
  pathsById?: Map<number, string>;
  stats?: { chunks: CorpusStats; files: CorpusStats };
  /** Chunk rows read so far, by id (null: no such chunk); a search reads hundreds, repeated searches the same. */
  rows?: Map<number, ChunkRow | null>;
  /** Each file's first chunk read so far (null: the file has none). */
  firstRows?: Map<string, ChunkRow | null>;
  dead?: { chunk: Set<number>; file: Set<number> };
}

export class CorruptIndexError extends Error {
  override name = "CorruptIndexError";
}

/**
 * The local lexical index (SQLite): indexed files, chunk metadata and a term → chunk postings table
 * scored with BM25. It is also the record of which file contents are fully indexed, so an interrupted
 * run resumes from it.
 */
export class LexicalStore {
  private cache: ReadCache = { dataVersion: -1 };
  private postings!: { chunk: PostingsTable; file: PostingsTable };

  private readonly statements = new Map<string, Database.Statement>();

  private constructor(private readonly db: Database.Database) {}

  /** The statement for `text`, prepared once per connection: preparing costs more than running a small one. */
  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  /** Opens (creating) the store; a damaged or foreign file is a CorruptIndexError. */
  static open(file: string): LexicalStore {
    privateFileSync(file);
    let db: Database.Database;
    try {
      db = new Database(file);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("busy_timeout = 10000");
    } catch (error) {
      throw new CorruptIndexError(`lexical index ${file} is corrupt: ${(error as Error).message}`);
    }
    const store = new LexicalStore(db);
    try {
      store.migrate();
    } catch (error) {
      db.close();
      throw error;
    }
    return store;
  }

  /** Moves a corrupt database aside so a fresh one can be built. */
  static quarantine(file: string): string {
    const aside = `${file}.corrupt-${Date.now()}`;
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        renameSync(file + suffix, aside + suffix);
      } catch {
        // a missing side file is fine
      }
    }
    return aside;
  }

  private migrate(): void {
    this.db.exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    if (this.getMeta("schema") === "4") this.upgradeFrom4();
    const version = this.getMeta("schema");
    if (version !== undefined && version !== SCHEMA_VERSION) {
      throw new CorruptIndexError(
        `the index was built by another version of umbra (schema ${version}; this one uses ${SCHEMA_VERSION})`,
      );
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS files(
        path TEXT PRIMARY KEY, id INTEGER NOT NULL UNIQUE, mpath TEXT NOT NULL, hash TEXT NOT NULL,
        size INTEGER NOT NULL, mtime REAL NOT NULL, language TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS chunks(
        id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        language TEXT NOT NULL, symbol TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
        length INTEGER NOT NULL, defines TEXT NOT NULL DEFAULT '', declares TEXT NOT NULL DEFAULT '');
      CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
      CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name);
      ${CHUNK_NAMES_TABLE}
    `);
    this.postings = { chunk: new PostingsTable(this.db, "chunk"), file: new PostingsTable(this.db, "file") };
    if (version === undefined) this.setMeta("schema", SCHEMA_VERSION);
  }

  /**
   * Schema 4 → 5 in place, so an index keeps answering searches until its next run re-chunks it (the
   * chunker version changed with it): chunks gain empty `defines` and `declares`, and their symbols'
   * names are copied into chunk_names. One write transaction; a second process finds the work done.
   */
  private upgradeFrom4(): void {
    this.db
      .transaction(() => {
        if (this.getMeta("schema") !== "4") return;
        this.invalidate();
        this.db.exec(`
          ALTER TABLE chunks ADD COLUMN defines TEXT NOT NULL DEFAULT '';
          ALTER TABLE chunks ADD COLUMN declares TEXT NOT NULL DEFAULT '';
          ${CHUNK_NAMES_TABLE}
          INSERT OR IGNORE INTO chunk_names(id, name) SELECT id, name FROM chunks WHERE name <> '';
        `);
        this.setMeta("schema", SCHEMA_VERSION);
      })
      .immediate();
  }

  getMeta(key: string): string | undefined {
    const row = this.sql("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.db
      .prepare(
        "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      )
      .run(key, value);
  }

  /** Every indexed file (do not modify the returned rows: they are shared between calls). */
  files(): readonly FileRow[] {
    const cache = this.readCache();
    cache.files ??= this.db
      .prepare("SELECT path, mpath, hash, size, mtime AS mtimeMs, language FROM files ORDER BY path")
      .all() as FileRow[];
    return cache.files;
  }

  /**
   * The read cache, emptied when another connection changed the indexed content since it was filled (a
   * commit of bookkeeping alone keeps it).
   */
  private readCache(): ReadCache {
    const dataVersion = this.sql("PRAGMA data_version").pluck().get() as number;
    if (dataVersion === this.cache.dataVersion) return this.cache;
    const contentVersion = this.getMeta(CONTENT_VERSION);
    if (this.cache.dataVersion === -1 || contentVersion !== this.cache.contentVersion)
      this.cache = { dataVersion, contentVersion };
    else this.cache.dataVersion = dataVersion;
    return this.cache;
  }

  /**
   * Forgets everything cached, and marks the content as changed for every other reader: this connection is
   * about to change it. Called inside the transaction that changes it, so a reader that sees the change
   * sees the new version with it.
   */
  private invalidate(): void {
    this.cache = { dataVersion: -1 };
    this.setMeta(CONTENT_VERSION, String(Number(this.getMeta(CONTENT_VERSION) ?? "0") + 1));
  }

  /** Reads now what every search reads (the files, the corpus statistics, the removed documents). */
  warm(): void {
    this.files();
    this.corpusStats();
    this.deadDocs();
    this.pathsById();
  }

  fileByMaskedPath(mpath: string): FileRow | undefined {
    return this.db
      .prepare("SELECT path, mpath, hash, size, mtime AS mtimeMs, language FROM files WHERE mpath = ?")
      .get(mpath) as FileRow | undefined;
  }

  counts(): { files: number; chunks: number } {
    const files = (this.db.prepare("SELECT count(*) AS n FROM files").get() as { n: number }).n;
    const chunks = (this.db.prepare("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
    return { files, chunks };
  }

  /** The next free chunk id (ids are never reused within one database). */
  nextChunkId(): number {
    const row = this.db.prepare("SELECT max(id) AS id FROM chunks").get() as { id: number | null };
    const stored = Number(this.getMeta("nextChunkId") ?? "1");
    return Math.max(stored, (row.id ?? 0) + 1);
  }

  /**
   * Marks the ids below `next` as taken, before vector rows are written with them: a run that dies
   * before its lexical commit leaves vector rows whose ids no later chunk is given (a vector hit's id
   * names one chunk ever, or none).
   */
  reserveChunkIds(next: number): void {
    if (next > Number(this.getMeta("nextChunkId") ?? "1")) this.setMeta("nextChunkId", String(next));
  }

  /**
   * Replaces, in one transaction, everything indexed for the given paths: removed paths lose their rows,
   * written files get their new chunks. Chunk ids are assigned by the caller (they are shared with the
   * vector store).
   */
  replaceFiles(
    removedPaths: readonly string[],
    written: readonly { file: FileRow; chunks: (NewChunk & { id: number })[] }[],
  ): void {
    const chunkIds = this.db.prepare("SELECT id FROM chunks WHERE path = ?").pluck();
    const fileId = this.db.prepare("SELECT id FROM files WHERE path = ?").pluck();
    const deleteNames = this.db.prepare(
      "DELETE FROM chunk_names WHERE id IN (SELECT id FROM chunks WHERE path = ?)",
    );
    const deleteChunks = this.db.prepare("DELETE FROM chunks WHERE path = ?");
    const deleteFile = this.db.prepare("DELETE FROM files WHERE path = ?");
    const insertFile = this.db.prepare(
      "INSERT INTO files(path, id, mpath, hash, size, mtime, language) VALUES(?, ?, ?, ?, ?, ?, ?)",
    );
    const insertChunk = this.db.prepare(
      "INSERT INTO chunks(id, path, start_line, end_line, language, symbol, name, hash, length, defines, declares) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const insertName = this.db.prepare("INSERT OR IGNORE INTO chunk_names(id, name) VALUES(?, ?)");
    const run = this.db.transaction(() => {
      this.invalidate();
      let maxId = 0;
      let nextFileId = Number(this.getMeta("nextFileId") ?? "1");
      const clear = (path: string) => {
        this.postings.chunk.remove(chunkIds.all(path) as number[]);
        this.postings.file.remove(fileId.all(path) as number[]);
        deleteNames.run(path);
        deleteChunks.run(path);
        deleteFile.run(path);
      };
      for (const path of removedPaths) clear(path);
      for (const { file, chunks } of written) {
        clear(file.path);
        const id = nextFileId++;
        insertFile.run(file.path, id, file.mpath, file.hash, file.size, file.mtimeMs, file.language);
        const fileTerms = new Map<string, number>();
        let fileLength = 0;
        for (const chunk of chunks) {
          fileLength += chunk.length;
          for (const [term, tf] of chunk.terms) fileTerms.set(term, (fileTerms.get(term) ?? 0) + tf);
        }
        this.postings.file.add(id, fileTerms, fileLength);
        for (const chunk of chunks) {
          insertChunk.run(
            chunk.id,
            file.path,
            chunk.startLine,
            chunk.endLine,
            chunk.language,
            chunk.symbol,
            symbolName(chunk.symbol),
            chunk.hash,
            chunk.length,
            chunk.defines.join(PATH_SEPARATOR),
            chunk.declares.join(PATH_SEPARATOR),
          );
          for (const name of definedNames(chunk)) insertName.run(chunk.id, name);
          this.postings.chunk.add(chunk.id, chunk.terms, chunk.length);
          maxId = Math.max(maxId, chunk.id);
        }
      }
      this.setMeta("nextFileId", String(nextFileId));
      if (maxId > 0)
        this.setMeta("nextChunkId", String(Math.max(maxId + 1, Number(this.getMeta("nextChunkId") ?? "1"))));
    });
    run();
  }

  /**
   * Folds recent writes into the packed postings segments once they have grown enough to slow searches;
   * returns whether it did (`force` compacts regardless). Call it at the end of an index run, under the
   * index lock.
   */
  compact({ force = false }: { force?: boolean } = {}): boolean {
    let compacted = false;
    for (const table of [this.postings.chunk, this.postings.file]) {
      if (!force && !table.needsCompaction()) continue;
      this.db.transaction(() => {
        this.invalidate();
        table.compact();
      })();
      compacted = true;
    }
    return compacted;
  }

  /** Chunk rows by id. */
  chunks(ids: readonly number[]): Map<number, ChunkRow> {
    const cache = this.readCache();
    cache.rows = bounded(cache.rows);
    const known = cache.rows;
    const missing = [...new Set(ids.filter((id) => !known.has(id)))];
    if (missing.length > 0) {
      // one statement for all of them (a search asks for hundreds): a JSON array of the ids
      const rows = this.sql(`${CHUNK_ROWS} WHERE id IN (SELECT value FROM json_each(?))`).all(
        JSON.stringify(missing),
      ) as StoredChunkRow[];
      for (const id of missing) known.set(id, null);
      for (const row of rows) known.set(row.id, chunkRow(row));
    }
    const found = new Map<number, ChunkRow>();
    for (const id of ids) {
      const row = known.get(id);
      if (row) found.set(id, row);
    }
    return found;
  }

  /** Chunks of the given files, in file order. */
  chunksOfPaths(paths: readonly string[]): ChunkRow[] {
    const statement = this.sql(`${CHUNK_ROWS} WHERE path = ? ORDER BY start_line`);
    return paths.flatMap((path) => (statement.all(path) as StoredChunkRow[]).map(chunkRow));
  }

  /** The first chunk of each of the given files that has one. */
  firstChunks(paths: readonly string[]): ChunkRow[] {
    const cache = this.readCache();
    cache.firstRows = bounded(cache.firstRows);
    const known = cache.firstRows;
    const statement = this.sql(`${CHUNK_ROWS} WHERE path = ? ORDER BY start_line LIMIT 1`);
    return paths.flatMap((path) => {
      let row = known.get(path);
      if (row === undefined) {
        const stored = statement.get(path) as StoredChunkRow | undefined;
        row = stored ? chunkRow(stored) : null;
        known.set(path, row);
      }
      return row ?? [];
    });
  }

  /**
   * Chunks whose symbol path, or (unless `held` is false) the path of a definition they hold (`defines`,
   * `declares`), ends with one of the names (exact, case-sensitive); per name at most `limit`, in id order.
   */
  chunksBySymbolName(names: readonly string[], limit: number, { held = true } = {}): ChunkRow[] {
    const statement = held
      ? this.sql(
          `SELECT ${CHUNK_COLUMNS} FROM chunk_names JOIN chunks ON chunks.id = chunk_names.id
           WHERE chunk_names.name = ? ORDER BY chunk_names.id LIMIT ?`,
        )
      : this.sql(`${CHUNK_ROWS} WHERE name = ? ORDER BY id LIMIT ?`);
    return names.flatMap((name) => (statement.all(name, limit) as StoredChunkRow[]).map(chunkRow));
  }

  /**
   * Chunks holding the given terms verbatim, ranked by how many of them they hold (rarer terms break
   * ties). Terms in more than `maxDocuments` chunks are too common to point anywhere and are left out.
   */
  chunksWithTerms(terms: readonly string[], maxDocuments: number): number[] {
    const dead = this.deadDocs().chunk;
    const matched = new Map<number, { terms: number; rarity: number }>();
    const unique = new Set(terms);
    const frequencies = this.postings.chunk.documentFrequencies(unique);
    for (const term of unique) {
      const df = frequencies.get(term) ?? 0;
      if (df === 0 || df > maxDocuments) continue;
      this.postings.chunk.forEach(term, dead, (id) => {
        const entry = matched.get(id) ?? { terms: 0, rarity: 0 };
        entry.terms++;
        entry.rarity += 1 / df;
        matched.set(id, entry);
      });
    }
    return [...matched]
      .sort(([a, x], [b, y]) => y.terms - x.terms || y.rarity - x.rarity || a - b)
      .map(([id]) => id);
  }

  /** The terms of `terms` that some chunk holds. */
  termsHeld(terms: Iterable<string>): Set<string> {
    return new Set(this.postings.chunk.documentFrequencies(terms).keys());
  }

  /**
   * Inverse document frequency over the chunks (BM25's) of each term; a term in no chunk gets the highest
   * (a word the code never writes, such as `saved` where it says `save`, is still a rare word).
   */
  idf(terms: Iterable<string>): Map<string, number> {
    const { documents } = this.corpusStats().chunks;
    const list = [...terms];
    const df = this.postings.chunk.documentFrequencies(list);
    return new Map(list.map((term) => [term, bm25Idf(documents, df.get(term) ?? 0)]));
  }

  /**
   * BM25 over chunks with per-term query weights. Terms present in more than `maxDocumentRatio` of the
   * chunks are skipped: they barely move scores and cost the most to read. `forms` counts other words as
   * forms of a query term (`suggested`: `suggest`, `suggestions`): a chunk holding any of them holds the
   * term, their occurrences add up, and the term is as rare as the chunks holding one of them are few.
   */
  bm25(
    weights: ReadonlyMap<string, number>,
    options: {
      limit: number;
      maxDocumentRatio?: number;
      maxTerms?: number;
      forms?: ReadonlyMap<string, readonly string[]>;
    },
  ): ScoredChunk[] {
    return scoreBm25(
      this.postings.chunk,
      this.deadDocs().chunk,
      this.corpusStats().chunks,
      Number(this.getMeta("nextChunkId") ?? "1"),
      weights,
      {
        maxDocumentRatio: options.maxDocumentRatio ?? 0.3,
        maxTerms: options.maxTerms ?? MAX_QUERY_TERMS,
        forms: options.forms ?? new Map(),
      },
      options.limit,
    );
  }

  /** BM25 over whole files (the sum of their chunks' terms), best first. */
  bm25Files(
    weights: ReadonlyMap<string, number>,
    options: { limit: number; maxTerms?: number },
  ): { path: string; score: number }[] {
    const scored = scoreBm25(
      this.postings.file,
      this.deadDocs().file,
      this.corpusStats().files,
      Number(this.getMeta("nextFileId") ?? "1"),
      weights,
      { maxDocumentRatio: 0.5, maxTerms: options.maxTerms ?? MAX_QUERY_TERMS, forms: new Map() },
      options.limit,
    );
    const paths = this.pathsById();
    return scored.flatMap(({ id, score }) => {
      const path = paths.get(id);
      return path === undefined ? [] : [{ path, score }];
    });
  }

  private pathsById(): Map<number, string> {
    const cache = this.readCache();
    cache.pathsById ??= new Map(
      (this.db.prepare("SELECT id, path FROM files").raw().all() as [number, string][]).map(([id, path]) => [
        id,
        path,
      ]),
    );
    return cache.pathsById;
  }

  private deadDocs(): { chunk: Set<number>; file: Set<number> } {
    const cache = this.readCache();
    cache.dead ??= { chunk: this.postings.chunk.deadDocs(), file: this.postings.file.deadDocs() };
    return cache.dead;
  }

  /** Document counts and average lengths of both postings spaces. */
  private corpusStats(): { chunks: CorpusStats; files: CorpusStats } {
    const cache = this.readCache();
    if (!cache.stats) {
      const chunks = this.db
        .prepare("SELECT count(*) AS n, avg(length) AS avg FROM chunks")
        .get() as Aggregate;
      const files = this.db
        .prepare(
          "SELECT count(*) AS n, avg(length) AS avg FROM (SELECT sum(length) AS length FROM chunks GROUP BY path)",
        )
        .get() as Aggregate;
      cache.stats = {
        chunks: { documents: chunks.n, averageLength: chunks.avg ?? 1 },
        files: { documents: files.n, averageLength: files.avg ?? 1 },
      };
    }
    return cache.stats;
  }

  close(): void {
    this.db.close();
  }
}

/**
 * Okapi BM25 (k1 = 1.2, b = 0.75) with per-term query weights, the `limit` best documents first. Terms
 * in more than `maxDocumentRatio` of the documents are skipped, and a long query (a whole bug report) is
 * cut to its `maxTerms` most telling terms (weight × idf). A term with `forms` is read as the union of its
 * own and its forms' postings (frequencies summed per document). Scores accumulate in an array indexed
 * by document id (`idBound` is above every id), so a term with 30,000 postings costs a tight loop.
 */
function scoreBm25(
  postings: PostingsTable,
  dead: ReadonlySet<number>,
  stats: CorpusStats,
  idBound: number,
  weights: ReadonlyMap<string, number>,
  options: { maxDocumentRatio: number; maxTerms: number; forms: ReadonlyMap<string, readonly string[]> },
  limit: number,
): ScoredChunk[] {
  if (stats.documents === 0) return [];
  const k1 = 1.2;
  const b = 0.75;
  const maxDf = Math.max(50, Math.floor(stats.documents * options.maxDocumentRatio));
  type Visit = (doc: number, tf: number, dl: number) => void;
  const telling: { term: string; weight: number; idf: number; read: (visit: Visit) => void }[] = [];
  const frequencies = postings.documentFrequencies([
    ...weights.keys(),
    ...[...weights.keys()].flatMap((term) => options.forms.get(term) ?? []),
  ]);
  let scratch: Float64Array | undefined;
  for (const [term, weight] of weights) {
    const words = [term, ...(options.forms.get(term) ?? [])].filter((word) => frequencies.has(word));
    // the union holds at least as many documents as its largest part: a common part is too common
    if (words.length === 0 || words.some((word) => (frequencies.get(word) ?? 0) > maxDf)) continue;
    const [only] = words;
    if (only !== undefined && words.length === 1) {
      const df = frequencies.get(only) ?? 0;
      telling.push({
        term,
        weight,
        idf: bm25Idf(stats.documents, df),
        read: (visit) => postings.forEach(only, dead, visit),
      });
      continue;
    }
    scratch ??= new Float64Array(idBound + 1);
    const union = unionOf(postings, dead, words, scratch);
    if (union.length / 3 > maxDf) continue;
    telling.push({
      term,
      weight,
      idf: bm25Idf(stats.documents, union.length / 3),
      read: (visit) => {
        for (let i = 0; i < union.length; i += 3) {
          visit(union[i] as number, union[i + 1] as number, union[i + 2] as number);
        }
      },
    });
  }
  telling.sort((x, y) => y.weight * y.idf - x.weight * x.idf || (x.term < y.term ? -1 : 1));
  const scores = new Float64Array(idBound + 1);
  const touched: number[] = [];
  const lengthNorm = b / stats.averageLength;
  for (const { weight, idf, read } of telling.slice(0, options.maxTerms)) {
    const factor = weight * idf * (k1 + 1);
    read((doc, tf, dl) => {
      if (doc > idBound) return;
      if (scores[doc] === 0) touched.push(doc);
      scores[doc] = (scores[doc] as number) + (factor * tf) / (tf + k1 * (1 - b + lengthNorm * dl));
    });
  }
  return topOf(touched, scores, limit);
}

/**
 * The live postings of several terms as those of one: (document, summed frequency, length) triples, in
 * the order documents are first met. `scratch` (zeros, at least one slot per document id) is left zeroed.
 */
function unionOf(
  postings: PostingsTable,
  dead: ReadonlySet<number>,
  terms: readonly string[],
  scratch: Float64Array,
): Float64Array {
  const docs: number[] = [];
  const lengths: number[] = [];
  for (const term of terms) {
    postings.forEach(term, dead, (doc, tf, dl) => {
      if (doc >= scratch.length) return;
      if (scratch[doc] === 0) {
        docs.push(doc);
        lengths.push(dl);
      }
      scratch[doc] = (scratch[doc] as number) + tf;
    });
  }
  const triples = new Float64Array(docs.length * 3);
  docs.forEach((doc, i) => {
    triples[i * 3] = doc;
    triples[i * 3 + 1] = scratch[doc] as number;
    triples[i * 3 + 2] = lengths[i] as number;
    scratch[doc] = 0;
  });
  return triples;
}

/** The `limit` best-scored documents, best first (ties broken by id for determinism). */
function topOf(ids: readonly number[], scores: Float64Array, limit: number): ScoredChunk[] {
  const better = (a: number, b: number) =>
    (scores[a] as number) > (scores[b] as number) || (scores[a] === scores[b] && a < b);
  // A min-heap of the best `limit` so far: O(n log limit) instead of sorting every touched document.
  const heap: number[] = [];
  const down = (from: number) => {
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && better(heap[worst] as number, heap[l] as number)) worst = l;
      if (r < heap.length && better(heap[worst] as number, heap[r] as number)) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst] as number, heap[i] as number];
      i = worst;
    }
  };
  for (const id of ids) {
    if (heap.length < limit) {
      heap.push(id);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(heap[parent] as number, heap[i] as number)) break;
        [heap[i], heap[parent]] = [heap[parent] as number, heap[i] as number];
        i = parent;
      }
    } else if (limit > 0 && better(id, heap[0] as number)) {
      heap[0] = id;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1)).map((id) => ({ id, score: scores[id] as number }));
}

/** The innermost name of a symbol path: `Invoice > total` → `total`. */
export function symbolName(symbol: string): string {
  const at = symbol.lastIndexOf(" > ");
  return at < 0 ? symbol : symbol.slice(at + 3);
}
