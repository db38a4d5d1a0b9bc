import { mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import "./lance-env.js";
import type * as lancedb from "@lancedb/lancedb";
import type { FixedSizeList, Schema } from "apache-arrow";

const TABLE = "chunks";
/** Below this many rows an exact scan is fast enough and no ANN index is built. */
const ANN_MIN_ROWS = 20_000;
/** IVF partitions probed per query, and how many candidates per hit are re-ranked with exact vectors. */
const ANN_PROBES = 24;
const ANN_REFINE = 4;

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

export interface VectorHit {
  id: number;
  mpath: string;
  distance: number;
}

/**
 * The table's schema, built with the copy of apache-arrow that LanceDB itself requires (its CommonJS
 * build): importing the ES module build as well would load and evaluate a second copy, ~0.3 s per start.
 */
function schema(dimensions: number): Schema {
  const { Field, FixedSizeList, Float32, Int32, Schema, Utf8 } = createRequire(import.meta.url)(
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

let loading: Promise<typeof lancedb> | undefined;

/** LanceDB (a native library and apache-arrow: the heaviest load of a start) is imported on first use. */
function lance(): Promise<typeof lancedb> {
  loading ??= import("@lancedb/lancedb");
  return loading;
}

function quote(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Embedded LanceDB table of chunk vectors for one workspace. */
export class VectorStore {
  private constructor(
    private readonly connection: lancedb.Connection,
    private readonly table: lancedb.Table,
    readonly dimensions: number,
  ) {}

  /**
   * Opens the table, (re)creating it when missing, unreadable (e.g. a run that died on a full disk while
   * creating it) or of another vector size. A recreated table is empty, which makes the indexer re-write
   * every file.
   */
  static async open(dir: string, dimensions: number): Promise<VectorStore> {
    await mkdir(dir, { recursive: true });
    const { connect } = await lance();
    let connection = await connect(dir);
    let existing: VectorStore | undefined;
    try {
      existing = await VectorStore.existing(connection, dimensions);
    } catch {
      connection.close();
      await rm(join(dir, `${TABLE}.lance`), { recursive: true, force: true });
      connection = await connect(dir);
    }
    if (existing) return existing;
    if ((await connection.tableNames()).includes(TABLE)) {
      await connection.dropTable(TABLE);
      // A fresh connection: the old one caches the dropped table's manifest and index files.
      connection.close();
      connection = await connect(dir);
    }
    const table = await connection.createEmptyTable(TABLE, schema(dimensions));
    return new VectorStore(connection, table, dimensions);
  }

  /** Opens the table for reading only if it exists with this vector size; never creates or drops. */
  static async openExisting(dir: string, dimensions: number): Promise<VectorStore | undefined> {
    // A long-lived reader (watch, an agent) must see what later index runs wrote: check on every read.
    const connection = await (await lance()).connect(dir, { readConsistencyInterval: 0 });
    const store = await VectorStore.existing(connection, dimensions);
    if (!store) connection.close();
    return store;
  }

  private static async existing(
    connection: lancedb.Connection,
    dimensions: number,
  ): Promise<VectorStore | undefined> {
    if (!(await connection.tableNames()).includes(TABLE)) return undefined;
    const table = await connection.openTable(TABLE);
    const field = (await table.schema()).fields.find((f) => f.name === "vector");
    const type = field?.type as FixedSizeList | undefined;
    if (type?.listSize === dimensions) return new VectorStore(connection, table, dimensions);
    table.close();
    return undefined;
  }

  /** Removes every row of the given masked paths, then adds the new rows. Idempotent per path. */
  async replace(removedMaskedPaths: readonly string[], rows: readonly VectorRow[]): Promise<void> {
    const paths = [...new Set([...removedMaskedPaths, ...rows.map((row) => row.mpath)])];
    for (let i = 0; i < paths.length; i += 500) {
      const slice = paths.slice(i, i + 500);
      await this.table.delete(`mpath IN (${slice.map(quote).join(", ")})`);
    }
    if (rows.length > 0) {
      await this.table.add(rows.map((row) => ({ ...row, vector: Array.from(row.vector) })));
    }
  }

  async count(): Promise<number> {
    return this.table.countRows();
  }

  /** Nearest chunks by cosine distance. */
  async search(vector: Float32Array, limit: number): Promise<VectorHit[]> {
    const rows = (await this.table
      .vectorSearch(Array.from(vector))
      .distanceType("cosine")
      .nprobes(ANN_PROBES)
      .refineFactor(ANN_REFINE)
      .select(["id", "mpath", "_distance"])
      .limit(limit)
      .toArray()) as { id: number; mpath: string; _distance: number }[];
    return rows.map((row) => ({ id: row.id, mpath: row.mpath, distance: row._distance }));
  }

  /**
   * Compacts fragments, drops old versions and brings the vector index up to date. A table that has grown
   * past ANN_MIN_ROWS gets an IVF-PQ index, so search stays fast at any size (rows added later are
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
  }

  /** Removes all rows (used when the index is rebuilt from scratch); the table and its ANN index stay. */
  async clear(): Promise<void> {
    await this.table.delete("true");
  }

  close(): void {
    this.table.close();
    this.connection.close();
  }
}
