import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { PostingsTable } from "../../../src/index/store/postings.js";

function table(): { db: Database.Database; postings: PostingsTable } {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  return { db, postings: new PostingsTable(db, "chunk") };
}

function read(postings: PostingsTable, term: string, dead = postings.deadDocs()): number[][] {
  const out: number[][] = [];
  postings.forEach(term, dead, (doc, tf, dl) => out.push([doc, tf, dl]));
  return out;
}

describe("postings table", () => {
  it("compacts page by page without losing or reordering postings (terms and rows past one page)", () => {
    const { db, postings } = table();
    // 3,000 terms (segment pages hold 2,000) and 70,000 delta rows (delta pages hold 50,000); a few
    // non-ASCII terms check that the merge follows SQLite's byte order.
    const terms = Array.from({ length: 3000 }, (_, i) => (i % 500 === 0 ? `ü${i}` : `t${i}`));
    const insert = db.transaction((from: number, to: number) => {
      for (let doc = from; doc < to; doc++) {
        const own = new Map<string, number>();
        for (let k = 0; k < 14; k++) own.set(terms[(doc * 7 + k * 31) % terms.length] as string, 1 + (k % 3));
        postings.add(doc, own, 20 + (doc % 9));
      }
    });
    insert(1, 5001);
    const before = new Map(terms.map((term) => [term, read(postings, term)]));
    postings.compact();
    for (const term of terms) expect(read(postings, term)).toEqual(before.get(term));
    // New documents land in the delta; removed ones are masked, then dropped by the next compaction.
    insert(5001, 5201);
    postings.remove([3, 4, 5002]);
    const expected = new Map(terms.map((term) => [term, read(postings, term)]));
    expect([...expected.values()].flat().some(([doc]) => doc === 3 || doc === 5002)).toBe(false);
    // document frequencies of many terms at once: segment and delta rows (removed documents still
    // counted until the compaction), unknown terms absent
    const df = postings.documentFrequencies(["t7", "ü500", "nowhere", "t7"]);
    expect(df.has("nowhere")).toBe(false);
    for (const term of ["t7", "ü500"]) expect(df.get(term)).toBe(read(postings, term, new Set()).length);
    postings.compact();
    for (const term of terms) expect(read(postings, term)).toEqual(expected.get(term));
    expect(postings.documentFrequencies(["t7"]).get("t7")).toBe(expected.get("t7")?.length);
    expect(postings.deadDocs().size).toBe(0);
    db.close();
  });

  it("asks for compaction only once the delta or the dead set has grown", () => {
    const { db, postings } = table();
    for (let doc = 1; doc <= 2500; doc++) postings.add(doc, new Map([["a", 1]]), 1);
    expect(postings.needsCompaction()).toBe(false);
    postings.compact();
    postings.remove(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(postings.needsCompaction()).toBe(false);
    postings.remove([2001]);
    expect(postings.needsCompaction()).toBe(true);
    db.close();
  });
});
