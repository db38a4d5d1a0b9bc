import { mkdirSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { Chunk } from "../chunk/index.js";

const SCHEMA_VERSION = "3";

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

interface CorpusStats {
  documents: number;
  averageLength: number;
}

type Aggregate = { n: number; avg: number | null };

export class CorruptIndexError extends Error {
  override name = "CorruptIndexError";
}

/**
 * The local lexical index (SQLite): indexed files, chunk metadata and a term → chunk postings table
 * scored with BM25. It is also the record of which file contents are fully indexed, so an interrupted
 * run resumes from it.
 */
export class LexicalStore {
  private stats: { chunks: CorpusStats; files: CorpusStats } | undefined;

  private constructor(private readonly db: Database.Database) {}

  /** Opens (creating) the store; a damaged or foreign file is a CorruptIndexError. */
  static open(file: string): LexicalStore {
    mkdirSync(dirname(file), { recursive: true });
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
    const version = this.getMeta("schema");
    if (version !== undefined && version !== SCHEMA_VERSION) {
      throw new CorruptIndexError(
        `the index was built by another version of umbra (schema ${version}; this one uses ${SCHEMA_VERSION})`,
      );
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS files(
        path TEXT PRIMARY KEY, mpath TEXT NOT NULL, hash TEXT NOT NULL,
        size INTEGER NOT NULL, mtime REAL NOT NULL, language TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS chunks(
        id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        language TEXT NOT NULL, symbol TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
        length INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
      CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name);
      CREATE TABLE IF NOT EXISTS postings(
        term TEXT NOT NULL, chunk INTEGER NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL,
        PRIMARY KEY(term, chunk)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS postings_chunk ON postings(chunk);
      CREATE TABLE IF NOT EXISTS file_postings(
        term TEXT NOT NULL, path TEXT NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL,
        PRIMARY KEY(term, path)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS file_postings_path ON file_postings(path);
    `);
    if (version === undefined) this.setMeta("schema", SCHEMA_VERSION);
  }

  getMeta(key: string): string | undefined {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.db
      .prepare(
        "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      )
      .run(key, value);
  }

  /** Every indexed file. */
  files(): FileRow[] {
    return this.db
      .prepare("SELECT path, mpath, hash, size, mtime AS mtimeMs, language FROM files ORDER BY path")
      .all() as FileRow[];
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
   * Replaces, in one transaction, everything indexed for the given paths: removed paths lose their rows,
   * written files get their new chunks. Chunk ids are assigned by the caller (they are shared with the
   * vector store).
   */
  replaceFiles(
    removedPaths: readonly string[],
    written: readonly { file: FileRow; chunks: (NewChunk & { id: number })[] }[],
  ): void {
    const deletePostings = this.db.prepare(
      "DELETE FROM postings WHERE chunk IN (SELECT id FROM chunks WHERE path = ?)",
    );
    const deleteChunks = this.db.prepare("DELETE FROM chunks WHERE path = ?");
    const deleteFile = this.db.prepare("DELETE FROM files WHERE path = ?");
    const insertFile = this.db.prepare(
      "INSERT INTO files(path, mpath, hash, size, mtime, language) VALUES(@path, @mpath, @hash, @size, @mtimeMs, @language)",
    );
    const insertChunk = this.db.prepare(
      "INSERT INTO chunks(id, path, start_line, end_line, language, symbol, name, hash, length) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const insertPosting = this.db.prepare("INSERT INTO postings(term, chunk, tf, dl) VALUES(?, ?, ?, ?)");
    const deleteFilePostings = this.db.prepare("DELETE FROM file_postings WHERE path = ?");
    const insertFilePosting = this.db.prepare(
      "INSERT INTO file_postings(term, path, tf, dl) VALUES(?, ?, ?, ?)",
    );
    this.stats = undefined;
    const run = this.db.transaction(() => {
      let maxId = 0;
      const clear = (path: string) => {
        deleteFilePostings.run(path);
        deletePostings.run(path);
        deleteChunks.run(path);
        deleteFile.run(path);
      };
      for (const path of removedPaths) clear(path);
      for (const { file, chunks } of written) {
        clear(file.path);
        insertFile.run(file);
        const fileTerms = new Map<string, number>();
        let fileLength = 0;
        for (const chunk of chunks) {
          fileLength += chunk.length;
          for (const [term, tf] of chunk.terms) fileTerms.set(term, (fileTerms.get(term) ?? 0) + tf);
        }
        for (const [term, tf] of fileTerms) insertFilePosting.run(term, file.path, tf, fileLength);
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
          );
          for (const [term, tf] of chunk.terms) insertPosting.run(term, chunk.id, tf, chunk.length);
          maxId = Math.max(maxId, chunk.id);
        }
      }
      if (maxId > 0)
        this.setMeta("nextChunkId", String(Math.max(maxId + 1, Number(this.getMeta("nextChunkId") ?? "1"))));
    });
    run();
  }

  /** Chunk rows by id. */
  chunks(ids: readonly number[]): Map<number, ChunkRow> {
    const out = new Map<number, ChunkRow>();
    const statement = this.db.prepare(
      "SELECT id, path, start_line AS startLine, end_line AS endLine, language, symbol, hash FROM chunks WHERE id = ?",
    );
    for (const id of ids) {
      const row = statement.get(id) as ChunkRow | undefined;
      if (row) out.set(id, row);
    }
    return out;
  }

  /** Chunks of the given files, in file order. */
  chunksOfPaths(paths: readonly string[]): ChunkRow[] {
    const statement = this.db.prepare(
      "SELECT id, path, start_line AS startLine, end_line AS endLine, language, symbol, hash FROM chunks WHERE path = ? ORDER BY start_line",
    );
    return paths.flatMap((path) => statement.all(path) as ChunkRow[]);
  }

  /** Chunks whose symbol path ends with one of the names (exact, case-sensitive). */
  chunksBySymbolName(names: readonly string[], limit: number): ChunkRow[] {
    const statement = this.db.prepare(
      "SELECT id, path, start_line AS startLine, end_line AS endLine, language, symbol, hash FROM chunks WHERE name = ? LIMIT ?",
    );
    return names.flatMap((name) => statement.all(name, limit) as ChunkRow[]);
  }

  /**
   * Chunks holding the given terms verbatim, ranked by how many of them they hold (rarer terms break
   * ties). Terms in more than `maxDocuments` chunks are too common to point anywhere and are left out.
   */
  chunksWithTerms(terms: readonly string[], maxDocuments: number): number[] {
    const count = this.db.prepare("SELECT count(*) AS n FROM postings WHERE term = ?");
    const chunks = this.db.prepare("SELECT chunk FROM postings WHERE term = ?").pluck();
    const matched = new Map<number, { terms: number; rarity: number }>();
    for (const term of new Set(terms)) {
      const df = (count.get(term) as { n: number }).n;
      if (df === 0 || df > maxDocuments) continue;
      for (const id of chunks.all(term) as number[]) {
        const entry = matched.get(id) ?? { terms: 0, rarity: 0 };
        entry.terms++;
        entry.rarity += 1 / df;
        matched.set(id, entry);
      }
    }
    return [...matched]
      .sort(([a, x], [b, y]) => y.terms - x.terms || y.rarity - x.rarity || a - b)
      .map(([id]) => id);
  }

  /**
   * BM25 over chunks with per-term query weights. Terms present in more than `maxDocumentRatio` of the
   * chunks are skipped: they barely move scores and cost the most to read.
   */
  bm25(
    weights: ReadonlyMap<string, number>,
    options: { limit: number; maxDocumentRatio?: number; maxTerms?: number },
  ): ScoredChunk[] {
    const scores = scoreBm25<number>(
      this.db,
      "postings",
      this.corpusStats().chunks,
      weights,
      options.maxDocumentRatio ?? 0.3,
      options.maxTerms ?? MAX_QUERY_TERMS,
    );
    return topScores(scores, options.limit);
  }

  /** BM25 over whole files (the sum of their chunks' terms), best first. */
  bm25Files(
    weights: ReadonlyMap<string, number>,
    options: { limit: number; maxTerms?: number },
  ): { path: string; score: number }[] {
    const stats = this.corpusStats().files;
    const scores = scoreBm25<string>(
      this.db,
      "file_postings",
      stats,
      weights,
      0.5,
      options.maxTerms ?? MAX_QUERY_TERMS,
    );
    return [...scores]
      .map(([path, score]) => ({ path, score }))
      .sort((x, y) => y.score - x.score || (x.path < y.path ? -1 : 1))
      .slice(0, options.limit);
  }

  /** Document counts and average lengths, cached until this store writes (readers may lag other writers). */
  private corpusStats(): { chunks: CorpusStats; files: CorpusStats } {
    if (!this.stats) {
      const chunks = this.db
        .prepare("SELECT count(*) AS n, avg(length) AS avg FROM chunks")
        .get() as Aggregate;
      const files = this.db
        .prepare(
          "SELECT count(*) AS n, avg(length) AS avg FROM (SELECT sum(length) AS length FROM chunks GROUP BY path)",
        )
        .get() as Aggregate;
      this.stats = {
        chunks: { documents: chunks.n, averageLength: chunks.avg ?? 1 },
        files: { documents: files.n, averageLength: files.avg ?? 1 },
      };
    }
    return this.stats;
  }

  close(): void {
    this.db.close();
  }
}

/**
 * Okapi BM25 (k1 = 1.2, b = 0.75) with per-term query weights, over a postings table of
 * (document, tf, document length) rows. Terms in more than `maxDocumentRatio` of the documents are skipped.
 */
function scoreBm25<K>(
  db: Database.Database,
  table: "postings" | "file_postings",
  stats: CorpusStats,
  weights: ReadonlyMap<string, number>,
  maxDocumentRatio: number,
  maxTerms: number,
): Map<K, number> {
  const scores = new Map<K, number>();
  if (stats.documents === 0) return scores;
  const k1 = 1.2;
  const b = 0.75;
  const maxDf = Math.max(50, Math.floor(stats.documents * maxDocumentRatio));
  const key = table === "postings" ? "chunk" : "path";
  // Counting stops at maxDf + 1: a common term costs no more than a rare one to reject.
  const count = db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE term = ? LIMIT ?)`);
  const postings = db.prepare(`SELECT ${key}, tf, dl FROM ${table} WHERE term = ?`).raw();
  // A long query (a whole bug report) is cut to its most telling terms: weight × idf, best MAX_QUERY_TERMS.
  const telling: { term: string; weight: number; idf: number }[] = [];
  for (const [term, weight] of weights) {
    const df = (count.get(term, maxDf + 1) as { n: number }).n;
    if (df === 0 || df > maxDf) continue;
    telling.push({ term, weight, idf: Math.log(1 + (stats.documents - df + 0.5) / (df + 0.5)) });
  }
  telling.sort((x, y) => y.weight * y.idf - x.weight * x.idf || (x.term < y.term ? -1 : 1));
  for (const { term, weight, idf } of telling.slice(0, maxTerms)) {
    for (const [doc, tf, dl] of postings.all(term) as [K, number, number][]) {
      const norm = tf + k1 * (1 - b + (b * dl) / stats.averageLength);
      scores.set(doc, (scores.get(doc) ?? 0) + weight * idf * ((tf * (k1 + 1)) / norm));
    }
  }
  return scores;
}

/** The innermost name of a symbol path: `Invoice > total` → `total`. */
export function symbolName(symbol: string): string {
  const at = symbol.lastIndexOf(" > ");
  return at < 0 ? symbol : symbol.slice(at + 3);
}

/** The `limit` highest entries of a score map, best first (ties broken by id for determinism). */
export function topScores(scores: ReadonlyMap<number, number>, limit: number): ScoredChunk[] {
  const all: ScoredChunk[] = [];
  for (const [id, score] of scores) all.push({ id, score });
  all.sort((a, b) => b.score - a.score || a.id - b.id);
  return all.slice(0, limit);
}
