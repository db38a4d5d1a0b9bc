import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createRequire, Module } from "node:module";
import { dirname, join } from "node:path";
import "./lance-env.js";
import type * as lancedb from "@lancedb/lancedb";
import type { FixedSizeList, Schema } from "apache-arrow";
import { privateDir, privateTree } from "../../config/private.js";

const TABLE = "chunks";
/** Below this many rows an exact scan is fast enough and no ANN index is built. */
const ANN_MIN_ROWS = 20_000;
/**
 * IVF partitions probed per query, and how many candidates per hit are re-ranked with exact vectors.
 * Reading the exact vectors is most of a query's time. bench/speed/refine.mjs, through search(), against
 * 24 partitions and four candidates per hit: 16 and two give the same first hit for all 143 queries and
 * 99.7% of the top 10 in about a third less time; without re-ranking the product-quantized order is too
 * coarse (4% of the top 10 and 6% of the first hits change).
 */
const ANN_PROBES = 16;
const ANN_REFINE = 2;

/** A row of the vector table: location, metadata and vector, never code; the path is masked. */
export interface VectorRow {
  id: number;
  mpath: string;
  startLine: number;
  endLine: number;
  language: string;
  symbol: string;
  hash: string;
  vector: Float32Array;
}

/** A nearest chunk: its id is the lexical store's (ids are never reused, so it names one chunk ever). */
export interface VectorHit {
  id: number;
  distance: number;
}

/** `require` as seen from LanceDB's own module: the apache-arrow it requires is the one it resolves. */
const lanceRequire = createRequire(createRequire(import.meta.url).resolve("@lancedb/lancedb"));

/**
 * apache-arrow as one file. LanceDB requires the package's CommonJS build, about 475 modules to resolve,
 * read and compile (~80 ms of every start that searches); the same package also publishes the same
 * library, with the same exports, as one minified file (Arrow.esnext.min.js: ~10 ms). That file's exports
 * are put in the module cache under the CommonJS build's name before LanceDB is loaded, so LanceDB and
 * this module share that one copy. (What the CommonJS build adds, Node stream adapters, LanceDB never
 * uses.)
 */
function preloadArrow(): void {
  const main = lanceRequire.resolve("apache-arrow");
  const oneFile = join(dirname(main), "Arrow.esnext.min.js");
  // another version of the package without that file: LanceDB loads the CommonJS build, only slower
  if (lanceRequire.cache[main] || !existsSync(oneFile)) return;
  const bundle = new Module(main);
  bundle.filename = main;
  bundle.exports = lanceRequire(oneFile);
  bundle.loaded = true;
  lanceRequire.cache[main] = bundle;
}

/**
 * The table's schema, built with the copy of apache-arrow that LanceDB itself requires: importing the ES
 * module build as well would load and evaluate a second copy, ~0.3 s per start.
 */
function schema(dimensions: number): Schema {
  const { Field, FixedSizeList, Float32, Int32, Schema, Utf8 } = lanceRequire(
    "apache-arrow",
  ) as typeof import("apache-arrow");
  return new Schema([
    new Field("id", new Int32(), false),
    new Field("mpath", new Utf8(), false),
    new Field("startLine", new Int32(), false),
    new Field("endLine", new Int32(), false),
    new Field("language", new Utf8(), false),
    new Field("symbol", new Utf8(), false),
    new Field("hash", new Utf8(), false),
    new Field("vector", new FixedSizeList(dimensions, new Field("item", new Float32(), true)), false),
  ]);
}

/** The vector table cannot be read (damaged or truncated files): `umbra index` rebuilds it. */
export class CorruptVectorsError extends Error {
  override name = "CorruptVectorsError";
}

/** A one-line reason from a LanceDB error (its messages carry Rust source paths and `Caused by` chains). */
function lanceReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split(/\s+Caused by:|, \/|\n/)[0] ?? message;
  return first.replace(/^(lance error: )+/i, "").trim();
}

function unreadable(dir: string, error: unknown): CorruptVectorsError {
  return new CorruptVectorsError(
    `the vector index in ${dir} is unreadable (${lanceReason(error)}); run \`umbra index\` to rebuild it`,
    { cause: error },
  );
}

/** True for a vector that cosine distance cannot use (all zeros: a text with no known token). */
function isZero(vector: Float32Array): boolean {
  for (let i = 0; i < vector.length; i++) if (vector[i] !== 0) return false;
  return true;
}

let loading: Promise<typeof lancedb> | undefined;

/** LanceDB (a native library and apache-arrow: the heaviest load of a start) is imported on first use. */
function lance(): Promise<typeof lancedb> {
  if (!loading) {
    preloadArrow();
    loading = import("@lancedb/lancedb");
  }
  return loading;
}

function quote(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Embedded LanceDB table of chunk vectors for one workspace; after each write its files are made private (LanceDB writes with the umask). */
export class VectorStore {
  private constructor(
    private readonly connection: lancedb.Connection,
    private readonly table: lancedb.Table,
    readonly dimensions: number,
    private readonly dir: string,
    /** True when this open created the table: whatever was indexed before has no vectors now. */
    readonly created = false,
    /** Why an existing table was thrown away and recreated (unreadable files), if it was. */
    readonly damage?: string,
  ) {}

  /**
   * Opens the table for writing, (re)creating it when missing, unreadable (damaged or truncated files, or
   * a run that died on a full disk while creating it) or of another vector size. Every data file is opened
   * and its ids read, so damage is found here rather than in the middle of a run or a later search. A
   * recreated table is empty, which makes the indexer re-write every file.
   */
  static async open(dir: string, dimensions: number): Promise<VectorStore> {
    await privateDir(dir);
    const { connect } = await lance();
    let connection = await connect(dir);
    let damage: string | undefined;
    try {
      const existing = await VectorStore.existing(connection, dir, dimensions);
      if (existing) {
        await existing.verify();
        await privateTree(dir);
        return existing;
      }
    } catch (error) {
      damage = `the vector index was unreadable (${lanceReason(error)}); rebuilding it`;
      connection.close();
      await rm(join(dir, `${TABLE}.lance`), { recursive: true, force: true });
      connection = await connect(dir);
    }
    if ((await connection.tableNames()).includes(TABLE)) {
      await connection.dropTable(TABLE);
      // A fresh connection: the old one caches the dropped table's manifest and index files.
      connection.close();
      connection = await connect(dir);
    }
    const table = await connection.createEmptyTable(TABLE, schema(dimensions));
    await privateTree(dir);
    return new VectorStore(connection, table, dimensions, dir, true, damage);
  }

  /**
   * Opens the table for reading only if it exists with this vector size; never creates or drops. A table
   * that cannot be opened is a CorruptVectorsError.
   */
  static async openExisting(dir: string, dimensions: number): Promise<VectorStore | undefined> {
    // A long-lived reader (watch, an agent) must see what later index runs wrote: check on every read.
    const connection = await (await lance()).connect(dir, { readConsistencyInterval: 0 });
    try {
      const store = await VectorStore.existing(connection, dir, dimensions);
      if (!store) connection.close();
      return store;
    } catch (error) {
      connection.close();
      throw unreadable(dir, error);
    }
  }

  private static async existing(
    connection: lancedb.Connection,
    dir: string,
    dimensions: number,
  ): Promise<VectorStore | undefined> {
    if (!(await connection.tableNames()).includes(TABLE)) return undefined;
    const table = await connection.openTable(TABLE);
    const field = (await table.schema()).fields.find((f) => f.name === "vector");
    const type = field?.type as FixedSizeList | undefined;
    if (type?.listSize === dimensions) return new VectorStore(connection, table, dimensions, dir);
    table.close();
    return undefined;
  }

  /** Reads every row's id, which opens every data file: throws when one is missing, truncated or garbled. */
  private async verify(): Promise<void> {
    for await (const _batch of this.table.query().select(["id"])) {
      // reading is the check
    }
  }

  /** Removes every row of the given masked paths, then adds the new rows. Idempotent per path. */
  async replace(removedMaskedPaths: readonly string[], rows: readonly VectorRow[]): Promise<void> {
    const paths = [...new Set([...removedMaskedPaths, ...rows.map((row) => row.mpath)])];
    for (let i = 0; i < paths.length; i += 500) {
      const slice = paths.slice(i, i + 500);
      await this.table.delete(`mpath IN (${slice.map(quote).join(", ")})`);
    }
    // A zero vector has no cosine distance to anything: it could never be found, and IVF training skips
    // it (a table of only such rows cannot be trained at all), so it is not stored.
    const usable = rows.filter((row) => !isZero(row.vector));
    if (usable.length > 0) {
      await this.table.add(usable.map((row) => ({ ...row, vector: Array.from(row.vector) })));
    }
    await privateTree(this.dir);
  }

  /** Nearest chunks by cosine distance; a table whose files cannot be read is a CorruptVectorsError. */
  async search(vector: Float32Array, limit: number): Promise<VectorHit[]> {
    let result: Awaited<ReturnType<lancedb.VectorQuery["toArrow"]>>;
    try {
      result = await this.table
        .vectorSearch(vector)
        .distanceType("cosine")
        .nprobes(ANN_PROBES)
        .refineFactor(ANN_REFINE)
        // ids only: reading each hit's path costs a fifth of the query; the caller knows the chunk by id
        .select(["id", "_distance"])
        .limit(limit)
        .toArrow();
    } catch (error) {
      throw unreadable(this.dir, error);
    }
    // read by column: Arrow's row objects cost more than the search itself at this size
    const ids = result.getChild("id")?.toArray() as ArrayLike<number> | undefined;
    const distances = result.getChild("_distance")?.toArray() as ArrayLike<number> | undefined;
    if (!ids || !distances) return [];
    return Array.from({ length: result.numRows }, (_, i) => ({
      id: ids[i] as number,
      distance: distances[i] as number,
    }));
  }

  /**
   * Compacts fragments, drops old versions and brings the vector index up to date. A table that has grown
   * past ANN_MIN_ROWS (every row has a usable vector: zero vectors are never stored) gets an IVF-PQ index, so search stays fast at any size (rows added later are
   * searched exactly until the next optimize folds them in).
   */
  async optimize(): Promise<void> {
    await this.table.optimize({ cleanupOlderThan: new Date() });
    const rows = await this.table.countRows();
    const indexed = (await this.table.listIndices()).some((index) => index.columns.includes("vector"));
    if (!indexed && rows >= ANN_MIN_ROWS) {
      await this.table.createIndex("vector", {
        config: (await lance()).Index.ivfPq({
          numPartitions: Math.max(16, Math.round(Math.sqrt(rows))),
          numSubVectors: Math.max(1, Math.floor(this.dimensions / 8)),
          distanceType: "cosine",
        }),
      });
    }
    await privateTree(this.dir);
  }

  /** Removes all rows (used when the index is rebuilt from scratch); the table and its ANN index stay. */
  async clear(): Promise<void> {
    await this.table.delete("true");
    await privateTree(this.dir);
  }

  close(): void {
    this.table.close();
    this.connection.close();
  }
}
