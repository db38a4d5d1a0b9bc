import type Database from "better-sqlite3";

/**
 * One inverted index (term → documents with term frequency and document length) kept the way search
 * engines keep theirs: a compacted **segment** holding each term's postings as one packed blob, which a
 * query reads in a single row, plus a **delta** of rows added since the last compaction and a set of
 * **dead** documents removed since then. Writes touch only the delta and the dead set, so an edit costs
 * what it changed; `compact()` folds both into a new segment once they have grown.
 *
 * Blob layout: little-endian uint32 triples `[doc, tf, dl]`, ordered by doc.
 */
export class PostingsTable {
  private readonly sql: {
    insert: Database.Statement;
    deleteDelta: Database.Statement;
    markDead: Database.Statement;
    segmentDf: Database.Statement;
    deltaDf: Database.Statement;
    segmentData: Database.Statement;
    deltaRows: Database.Statement;
  };

  constructor(
    private readonly db: Database.Database,
    readonly name: "chunk" | "file",
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS ${name}_segment(term TEXT PRIMARY KEY, df INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS ${name}_delta(
        term TEXT NOT NULL, doc INTEGER NOT NULL, tf INTEGER NOT NULL, dl INTEGER NOT NULL,
        PRIMARY KEY(term, doc)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS ${name}_delta_doc ON ${name}_delta(doc);
      CREATE TABLE IF NOT EXISTS ${name}_dead(doc INTEGER PRIMARY KEY);
    `);
    this.sql = {
      insert: db.prepare(`INSERT INTO ${name}_delta(term, doc, tf, dl) VALUES(?, ?, ?, ?)`),
      deleteDelta: db.prepare(`DELETE FROM ${name}_delta WHERE doc = ?`),
      markDead: db.prepare(`INSERT OR IGNORE INTO ${name}_dead(doc) VALUES(?)`),
      // one statement for all the terms of a query (a bug report has hundreds): a JSON array of them
      segmentDf: db
        .prepare(`SELECT term, df FROM ${name}_segment WHERE term IN (SELECT value FROM json_each(?))`)
        .raw(),
      deltaDf: db
        .prepare(
          `SELECT term, count(*) FROM ${name}_delta WHERE term IN (SELECT value FROM json_each(?)) GROUP BY term`,
        )
        .raw(),
      segmentData: db.prepare(`SELECT data FROM ${name}_segment WHERE term = ?`).pluck(),
      deltaRows: db.prepare(`SELECT doc, tf, dl FROM ${name}_delta WHERE term = ? ORDER BY doc`).raw(),
    };
  }

  /** Adds one document's terms (document ids only grow: a changed document gets a new id). */
  add(doc: number, terms: ReadonlyMap<string, number>, length: number): void {
    for (const [term, tf] of terms) this.sql.insert.run(term, doc, tf, length);
  }

  /** Removes documents: their delta rows go, and any segment postings of theirs are masked as dead. */
  remove(docs: Iterable<number>): void {
    const segmentMax = this.segmentMaxDoc();
    for (const doc of docs) {
      this.sql.deleteDelta.run(doc);
      if (doc <= segmentMax) this.sql.markDead.run(doc);
    }
  }

  /**
   * How many documents hold each term (documents removed since the last compaction still count); terms
   * no document holds are absent.
   */
  documentFrequencies(terms: Iterable<string>): Map<string, number> {
    const list = JSON.stringify([...terms]);
    const df = new Map(this.sql.segmentDf.all(list) as [string, number][]);
    for (const [term, n] of this.sql.deltaDf.all(list) as [string, number][])
      df.set(term, (df.get(term) ?? 0) + n);
    return df;
  }

  /** Calls `visit` for every live posting of the term. */
  forEach(
    term: string,
    dead: ReadonlySet<number>,
    visit: (doc: number, tf: number, dl: number) => void,
  ): void {
    const blob = this.sql.segmentData.get(term) as Buffer | undefined;
    if (blob) {
      const triples = asUint32(blob);
      for (let i = 0; i < triples.length; i += 3) {
        const doc = triples[i] as number;
        if (!dead.has(doc)) visit(doc, triples[i + 1] as number, triples[i + 2] as number);
      }
    }
    for (const [doc, tf, dl] of this.sql.deltaRows.all(term) as [number, number, number][])
      visit(doc, tf, dl);
  }

  /** Documents removed since the last compaction whose postings are still in the segment. */
  deadDocs(): Set<number> {
    return new Set(this.db.prepare(`SELECT doc FROM ${this.name}_dead`).pluck().all() as number[]);
  }

  /** Whether the delta or the dead set has grown enough that a compaction pays off. */
  needsCompaction(): boolean {
    const segmentPostings = Number(this.meta("postings") ?? "0");
    const delta = this.db.prepare(`SELECT count(*) FROM ${this.name}_delta`).pluck().get() as number;
    const dead = this.db.prepare(`SELECT count(*) FROM ${this.name}_dead`).pluck().get() as number;
    return delta > Math.max(20_000, segmentPostings / 10) || dead > 2_000;
  }

  /**
   * Folds the delta into a new segment and drops dead documents, in one transaction: a reader keeps
   * seeing the previous state until it commits. Both sides are read in term order, page by page, and
   * merged; a term's segment postings precede its delta postings in doc order because ids only grow.
   */
  compact(): void {
    const next = `${this.name}_segment_next`;
    const dead = this.deadDocs();
    this.db.transaction(() => {
      this.db.exec(`DROP TABLE IF EXISTS ${next};
        CREATE TABLE ${next}(term TEXT PRIMARY KEY, df INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;`);
      const insert = this.db.prepare(`INSERT INTO ${next}(term, df, data) VALUES(?, ?, ?)`);
      let postings = 0;
      let maxDoc = this.segmentMaxDoc();
      const out = new GrowableUint32();
      const segment = this.segmentTerms();
      const delta = this.deltaTerms();
      let s = segment.next();
      let d = delta.next();
      while (!s.done || !d.done) {
        const order = s.done ? 1 : d.done ? -1 : compareUtf8(s.value.term, d.value.term);
        const term = order <= 0 ? (s.value as SegmentTerm).term : (d.value as DeltaTerm).term;
        out.clear();
        if (order <= 0) {
          const triples = asUint32((s.value as SegmentTerm).data);
          for (let i = 0; i < triples.length; i += 3)
            if (!dead.has(triples[i] as number)) out.push3(triples[i], triples[i + 1], triples[i + 2]);
          s = segment.next();
        }
        if (order >= 0) {
          for (const value of (d.value as DeltaTerm).triples) out.push(value);
          d = delta.next();
        }
        if (out.length === 0) continue;
        const df = out.length / 3;
        maxDoc = Math.max(maxDoc, out.at(out.length - 3));
        insert.run(term, df, out.bytes());
        postings += df;
      }
      this.db.exec(`DROP TABLE ${this.name}_segment; ALTER TABLE ${next} RENAME TO ${this.name}_segment;
        DELETE FROM ${this.name}_delta; DELETE FROM ${this.name}_dead;`);
      this.setMeta("postings", String(postings));
      this.setMeta("maxDoc", String(maxDoc));
    })();
  }

  /** The segment's terms with their blobs, in SQLite's term order, read a page at a time. */
  private *segmentTerms(): Generator<SegmentTerm> {
    const page = this.db
      .prepare(`SELECT term, data FROM ${this.name}_segment WHERE term > ? ORDER BY term LIMIT 2000`)
      .raw();
    let after = "";
    for (;;) {
      const rows = page.all(after) as [string, Buffer][];
      for (const [term, data] of rows) yield { term, data };
      const last = rows.at(-1);
      if (!last) return;
      after = last[0];
    }
  }

  /** The delta's terms with their `[doc, tf, dl]` triples in doc order, read a page at a time. */
  private *deltaTerms(): Generator<DeltaTerm> {
    const page = this.db
      .prepare(
        `SELECT term, doc, tf, dl FROM ${this.name}_delta WHERE (term, doc) > (?, ?) ORDER BY term, doc LIMIT 50000`,
      )
      .raw();
    let after: [string, number] = ["", -1];
    let current: DeltaTerm | undefined;
    for (;;) {
      const rows = page.all(...after) as [string, number, number, number][];
      for (const [term, doc, tf, dl] of rows) {
        if (current && current.term !== term) {
          yield current;
          current = undefined;
        }
        current ??= { term, triples: [] };
        current.triples.push(doc, tf, dl);
      }
      const last = rows.at(-1);
      if (!last) break;
      after = [last[0], last[1]];
    }
    if (current) yield current;
  }

  private segmentMaxDoc(): number {
    return Number(this.meta("maxDoc") ?? "0");
  }

  private meta(key: string): string | undefined {
    return this.db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(`${this.name}_${key}`) as
      | string
      | undefined;
  }

  private setMeta(key: string, value: string): void {
    this.db
      .prepare(
        "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      )
      .run(`${this.name}_${key}`, value);
  }
}

/** A blob's bytes as uint32s, copied only when SQLite handed them over unaligned. */
function asUint32(blob: Buffer): Uint32Array {
  if (blob.byteOffset % 4 === 0) return new Uint32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Uint32Array(Uint8Array.from(blob).buffer);
}

interface SegmentTerm {
  term: string;
  data: Buffer;
}

interface DeltaTerm {
  term: string;
  triples: number[];
}

/** SQLite's BINARY collation: byte order of the UTF-8 encodings. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** A uint32 buffer that grows as needed and is reused from one term to the next. */
class GrowableUint32 {
  private data = new Uint32Array(1024);
  length = 0;

  clear(): void {
    this.length = 0;
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  push3(a: number | undefined, b: number | undefined, c: number | undefined): void {
    this.push(a as number);
    this.push(b as number);
    this.push(c as number);
  }

  at(index: number): number {
    return this.data[index] as number;
  }

  /** A copy of the filled part as bytes, for a BLOB. */
  bytes(): Buffer {
    return Buffer.from(this.data.buffer.slice(0, this.length * 4));
  }
}
