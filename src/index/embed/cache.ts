/**
 * The machine-wide embedding cache: (embedder id, chunk content hash) → vector, in one SQLite file shared
 * by every workspace, clone, branch and process on the machine. WAL mode lets readers run beside a writer;
 * the busy timeout makes concurrent writers wait for each other instead of failing.
 *
 * Vectors are stored as little-endian Float32 blobs with their length beside them. A damaged file is
 * moved aside and recreated: the cache only ever saves work, so losing it costs time, never correctness.
 */
import { existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { embeddingCacheDir } from "../../config/paths.js";
import { PRIVATE_FILE, privateDirSync, privateFileSync } from "../../config/private.js";
import { isCorruptionError } from "../sqlite-errors.js";

export const CACHE_FILE_NAME = "embeddings.sqlite";
const SCHEMA_VERSION = 1;
/** Variables per `IN (...)` lookup; far below SQLite's limit of 32766. */
const LOOKUP_CHUNK = 500;
/** Above this size a plain open skips `PRAGMA quick_check` (it reads the whole file) unless asked. */
const QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The schema, exported so tests (and tools) can write the same layout. Embedder ids are interned in
 * `embedders` so long ids are not repeated on every row.
 */
export const CACHE_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS embedders (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS vectors (
  embedder INTEGER NOT NULL REFERENCES embedders(id),
  hash TEXT NOT NULL,
  dims INTEGER NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (embedder, hash)
);
`;

export interface EmbeddingCacheOptions {
  /** Directory of the cache file; default `embeddingCacheDir(env)`. */
  dir?: string | undefined;
  /** Environment used to find the data directory when `dir` is not given (default `process.env`). */
  env?: NodeJS.ProcessEnv | undefined;
  /** How long a write waits for another process's write to finish, in ms (default 15 000). */
  busyTimeoutMs?: number;
  /**
   * Run `PRAGMA quick_check` on open. "auto" (default) checks files up to 64 MiB, and any file that an
   * earlier process found damaged while using it.
   */
  integrityCheck?: boolean | "auto";
  /** Told when the cache had to be recovered or a damaged cache was skipped. */
  onWarning?: (message: string) => void;
}

export interface CacheEntry {
  hash: string;
  vector: Float32Array;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Float32 little-endian bytes of a vector. */
export function encodeVector(vector: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  const out = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i] ?? 0, i * 4);
  return out;
}

/** A vector from Float32 little-endian bytes (copied into its own aligned buffer). */
export function decodeVector(bytes: Uint8Array, dims: number): Float32Array | undefined {
  if (bytes.byteLength !== dims * 4) return undefined;
  const out = new Float32Array(dims);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(bytes);
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < dims; i++) out[i] = view.getFloat32(i * 4, true);
  }
  return out;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

interface VectorRow {
  hash: string;
  dims: number;
  vector: Uint8Array;
}

export class EmbeddingCache {
  /** Path of the SQLite file. */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #onWarning: (message: string) => void;
  readonly #embedderIds = new Map<string, number>();
  readonly #lookups = new Map<number, Database.Statement>();
  #broken = false;
  readonly #selectEmbedder: Database.Statement;
  readonly #insertEmbedder: Database.Statement;
  readonly #insertVector: Database.Statement;

  constructor(options: EmbeddingCacheOptions = {}) {
    const dir = options.dir ?? embeddingCacheDir(options.env ?? process.env);
    privateDirSync(dir);
    this.path = join(dir, CACHE_FILE_NAME);
    this.#onWarning = options.onWarning ?? (() => {});
    this.#db = this.#openRecovering(options.busyTimeoutMs ?? 15_000, options.integrityCheck ?? "auto");
    this.#selectEmbedder = this.#db.prepare("SELECT id FROM embedders WHERE name = ?");
    this.#insertEmbedder = this.#db.prepare("INSERT OR IGNORE INTO embedders (name) VALUES (?)");
    this.#insertVector = this.#db.prepare(
      "INSERT OR REPLACE INTO vectors (embedder, hash, dims, vector) VALUES (?, ?, ?, ?)",
    );
  }

  /** Cached vectors of `hashes` for one embedder; hashes not in the cache are absent from the map. */
  getMany(embedderId: string, hashes: Iterable<string>): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    if (this.#broken) return found;
    const unique = [...new Set(hashes)];
    if (unique.length === 0) return found;
    try {
      const id = this.#embedderId(embedderId, false);
      if (id === undefined) return found;
      for (let start = 0; start < unique.length; start += LOOKUP_CHUNK) {
        const part = unique.slice(start, start + LOOKUP_CHUNK);
        const rows = this.#lookup(part.length).all(id, ...part) as VectorRow[];
        for (const row of rows) {
          const vector = decodeVector(row.vector, row.dims);
          if (vector) found.set(row.hash, vector);
        }
      }
    } catch (error) {
      this.#handleRuntimeError(error);
    }
    return found;
  }

  /** Stores vectors for one embedder, all in one transaction (replacing existing entries). */
  putMany(embedderId: string, entries: Iterable<CacheEntry> | ReadonlyMap<string, Float32Array>): void {
    if (this.#broken) return;
    const list: CacheEntry[] = [];
    if (entries instanceof Map) {
      for (const [hash, vector] of entries as ReadonlyMap<string, Float32Array>) list.push({ hash, vector });
    } else {
      for (const entry of entries as Iterable<CacheEntry>) list.push(entry);
    }
    if (list.length === 0) return;
    try {
      const write = this.#db.transaction((items: CacheEntry[]) => {
        const id = this.#embedderId(embedderId, true) as number;
        for (const { hash, vector } of items) {
          this.#insertVector.run(id, hash, vector.length, encodeVector(vector));
        }
      });
      // IMMEDIATE takes the write lock up front, so a concurrent writer makes us wait (busy timeout)
      // instead of failing on a read-to-write lock upgrade.
      write.immediate(list);
    } catch (error) {
      // The embedder's row may have been created in the rolled-back transaction.
      this.#embedderIds.delete(embedderId);
      this.#handleRuntimeError(error);
    }
  }

  /** Number of cached vectors, of one embedder or of all. */
  count(embedderId?: string): number {
    if (this.#broken) return 0;
    try {
      if (embedderId === undefined) {
        return (this.#db.prepare("SELECT count(*) AS n FROM vectors").get() as { n: number }).n;
      }
      const id = this.#embedderId(embedderId, false);
      if (id === undefined) return 0;
      return (
        this.#db.prepare("SELECT count(*) AS n FROM vectors WHERE embedder = ?").get(id) as { n: number }
      ).n;
    } catch (error) {
      this.#handleRuntimeError(error);
      return 0;
    }
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #embedderId(name: string, create: boolean): number | undefined {
    const known = this.#embedderIds.get(name);
    if (known !== undefined) return known;
    if (create) this.#insertEmbedder.run(name);
    const row = this.#selectEmbedder.get(name) as { id: number } | undefined;
    if (row) this.#embedderIds.set(name, row.id);
    return row?.id;
  }

  #lookup(size: number): Database.Statement {
    let statement = this.#lookups.get(size);
    if (!statement) {
      const marks = new Array<string>(size).fill("?").join(",");
      statement = this.#db.prepare(
        `SELECT hash, dims, vector FROM vectors WHERE embedder = ? AND hash IN (${marks})`,
      );
      // Keep the full-size statement and a few remainders; any size is cheap to prepare again.
      if (this.#lookups.size < 16 || size === LOOKUP_CHUNK) this.#lookups.set(size, statement);
    }
    return statement;
  }

  #handleRuntimeError(error: unknown): void {
    if (!isCorruptionError(error)) throw error;
    this.#broken = true;
    try {
      writeFileSync(this.#checkMarker(), `${new Date().toISOString()}\n`, { mode: PRIVATE_FILE });
    } catch {
      // The marker only speeds up detection next time.
    }
    this.#onWarning(
      `embedding cache ${this.path} is damaged (${(error as Error).message}); ` +
        "it is skipped now and will be rebuilt the next time it is opened",
    );
  }

  #checkMarker(): string {
    return `${this.path}.needs-check`;
  }

  #openRecovering(busyTimeoutMs: number, integrityCheck: boolean | "auto"): Database.Database {
    for (let attempt = 0; ; attempt++) {
      const inode = existsSync(this.path) ? statSync(this.path).ino : undefined;
      const marked = existsSync(this.#checkMarker());
      let db: Database.Database | undefined;
      try {
        db = this.#open(busyTimeoutMs, this.#wantsCheck(integrityCheck, marked));
        if (marked) rmSync(this.#checkMarker(), { force: true });
        return db;
      } catch (error) {
        if (db?.open) db.close();
        if (!isCorruptionError(error) || attempt >= 2) throw error;
        this.#quarantine(inode, error);
      }
    }
  }

  #wantsCheck(integrityCheck: boolean | "auto", marked: boolean): boolean {
    if (integrityCheck !== "auto") return integrityCheck;
    if (marked) return true;
    try {
      return statSync(this.path).size <= QUICK_CHECK_MAX_BYTES;
    } catch {
      return false;
    }
  }

  #open(busyTimeoutMs: number, quickCheck: boolean): Database.Database {
    privateFileSync(this.path);
    const db = new Database(this.path, { timeout: busyTimeoutMs });
    try {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      // Reading the schema fails with SQLITE_NOTADB on a file that is not a database.
      db.prepare("SELECT count(*) FROM sqlite_master").get();
      if (quickCheck) {
        const rows = db.pragma("quick_check") as { quick_check: string }[];
        const problems = rows.map((row) => row.quick_check).filter((line) => line !== "ok");
        if (problems.length > 0) {
          const error = new Error(`database disk image is malformed: ${problems.slice(0, 3).join("; ")}`);
          Object.assign(error, { code: "SQLITE_CORRUPT" });
          throw error;
        }
      }
      if (String(db.pragma("journal_mode", { simple: true })).toLowerCase() !== "wal") {
        db.pragma("journal_mode = WAL");
      }
      db.pragma("synchronous = NORMAL");
      const version = Number(db.pragma("user_version", { simple: true }));
      if (version < SCHEMA_VERSION) {
        db.transaction(() => {
          db.exec(CACHE_SCHEMA_SQL);
          db.pragma(`user_version = ${SCHEMA_VERSION}`);
        }).immediate();
      }
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Moves a damaged file (and its WAL) aside, unless another process already replaced it. */
  #quarantine(inode: number | undefined, error: unknown): void {
    let current: number | undefined;
    try {
      current = statSync(this.path).ino;
    } catch {
      current = undefined;
    }
    if (current === undefined || current !== inode) return; // someone else recovered it; just reopen
    let target = `${this.path}.corrupt-${timestamp()}`;
    for (let n = 1; existsSync(target); n++) target = `${this.path}.corrupt-${timestamp()}-${n}`;
    renameSync(this.path, target);
    for (const suffix of ["-wal", "-journal"]) {
      if (existsSync(this.path + suffix)) renameSync(this.path + suffix, target + suffix);
    }
    rmSync(`${this.path}-shm`, { force: true });
    rmSync(this.#checkMarker(), { force: true });
    this.#onWarning(
      `embedding cache ${this.path} was damaged (${(error as Error).message}); ` +
        `moved it to ${target} and started a new one`,
    );
  }
}
