import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FileRow, LexicalStore, type NewChunk } from "../../../src/index/store/lexical.js";
import { cleanup, tempDir } from "../../helpers/workspace.js";

let dir: string;
let store: LexicalStore;

beforeEach(async () => {
  dir = await tempDir("lexical");
  store = LexicalStore.open(join(dir, "lexical.sqlite"));
});
afterEach(async () => {
  store.close();
  await cleanup(dir);
});

/** A file of one chunk per term list; chunk ids start at `firstId`. */
function file(path: string, firstId: number, chunkTerms: string[][]) {
  const row: FileRow = {
    path,
    mpath: `m-${path}`,
    hash: `h-${path}-${firstId}`,
    size: 1,
    mtimeMs: 1,
    language: "text",
  };
  const chunks = chunkTerms.map((terms, i): NewChunk & { id: number } => {
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    return {
      id: firstId + i,
      path,
      startLine: i * 10 + 1,
      endLine: i * 10 + 9,
      language: "text",
      symbol: `sym${firstId + i}`,
      defines: [],
      declares: [],
      hash: `c${firstId + i}`,
      terms: counts,
      length: terms.length,
    };
  });
  return { file: row, chunks };
}

const query = (...terms: string[]) => new Map(terms.map((term) => [term, 1]));

/** 60 files of their own noise and one word they all hold: no test term is "too common" for BM25. */
const filler = () =>
  Array.from({ length: 60 }, (_, i) => file(`filler${i}.txt`, 1000 + i * 10, [[`noise${i}`, "common"]]));

/** Two small files of invoices and refunds among the filler. */
function seed(): void {
  store.replaceFiles(
    [],
    [
      file("a.txt", 1, [
        ["invoice", "total", "tax"],
        ["invoice", "discount"],
      ]),
      file("b.txt", 10, [
        ["refund", "total"],
        ["invoice", "invoice", "refund"],
      ]),
      ...filler(),
    ],
  );
}

describe("lexical store: packed postings segment + delta", () => {
  it("ranks the same before and after compaction", () => {
    seed();
    const before = store.bm25(query("invoice", "refund", "tax"), { limit: 10 });
    const filesBefore = store.bm25Files(query("invoice", "refund", "tax"), { limit: 10 });
    expect(before.map((hit) => hit.id)).toEqual([11, 1, 10, 2]);
    expect(store.compact({ force: true })).toBe(true);
    expect(store.bm25(query("invoice", "refund", "tax"), { limit: 10 })).toEqual(before);
    expect(store.bm25Files(query("invoice", "refund", "tax"), { limit: 10 })).toEqual(filesBefore);
    expect(store.chunksWithTerms(["discount"], 10)).toEqual([2]);
  });

  it("hides a replaced file's old chunks that still sit in the segment, and finds its new ones", () => {
    seed();
    store.compact({ force: true });
    // b.txt is rewritten: its old chunks (10, 11) stay in the segment until the next compaction.
    store.replaceFiles([], [file("b.txt", 2000, [["chargeback"], ["invoice"]])]);
    const hits = store.bm25(query("invoice", "refund", "chargeback"), { limit: 10 }).map((hit) => hit.id);
    expect(hits).not.toContain(10);
    expect(hits).not.toContain(11);
    expect(hits).toEqual(expect.arrayContaining([2000, 2001, 1, 2]));
    expect(store.chunksWithTerms(["refund"], 10)).toEqual([]);
    expect(store.bm25Files(query("refund"), { limit: 10 })).toEqual([]);
    expect(store.bm25Files(query("chargeback"), { limit: 10 }).map((hit) => hit.path)).toEqual(["b.txt"]);
    // Until compaction, document frequencies still count the dead chunks, so scores may shift slightly.
    const afterEdit = store.bm25(query("invoice", "chargeback"), { limit: 10 }).map((hit) => hit.id);
    store.compact({ force: true });
    const compacted = store.bm25(query("invoice", "chargeback"), { limit: 10 }).map((hit) => hit.id);
    expect([...compacted].sort()).toEqual([...afterEdit].sort());
  });

  it("forgets removed files in the segment and in the delta", () => {
    seed();
    store.compact({ force: true });
    store.replaceFiles([], [file("c.txt", 3000, [["ledger"]])]);
    store.replaceFiles(["a.txt", "c.txt"], []);
    expect(store.bm25(query("tax", "ledger"), { limit: 10 })).toEqual([]);
    expect(store.files().map((row) => row.path)).not.toContain("a.txt");
    store.compact({ force: true });
    expect(store.bm25(query("tax", "ledger", "discount"), { limit: 10 })).toEqual([]);
    expect(store.bm25(query("refund"), { limit: 10 }).map((hit) => hit.id)).toEqual([10, 11]);
  });

  it("keeps only the best `limit` hits, best first, ties by id", () => {
    seed();
    const all = store.bm25(query("invoice", "refund", "total"), { limit: 100 });
    const top2 = store.bm25(query("invoice", "refund", "total"), { limit: 2 });
    expect(top2).toEqual(all.slice(0, 2));
    for (let i = 1; i < all.length; i++) expect(all[i - 1]?.score).toBeGreaterThanOrEqual(all[i]?.score ?? 0);
  });

  it("sees another connection's writes (the read cache follows the database)", () => {
    seed();
    const reader = LexicalStore.open(join(dir, "lexical.sqlite"));
    try {
      expect(reader.bm25(query("ledger"), { limit: 5 })).toEqual([]);
      expect(reader.files()).toHaveLength(62);
      store.replaceFiles([], [file("c.txt", 3000, [["ledger"]])]);
      expect(reader.bm25(query("ledger"), { limit: 5 }).map((hit) => hit.id)).toEqual([3000]);
      expect(reader.files()).toHaveLength(63);
    } finally {
      reader.close();
    }
  });

  it("serves chunk rows and first chunks read before only while the database is unchanged", () => {
    seed();
    const reader = LexicalStore.open(join(dir, "lexical.sqlite"));
    try {
      expect([...reader.chunks([10, 11, 999]).keys()]).toEqual([10, 11]);
      expect(reader.firstChunks(["b.txt", "gone.txt"]).map((row) => row.id)).toEqual([10]);
      // another connection replaces b.txt: its old rows and its old first chunk are gone for the reader
      store.replaceFiles([], [file("b.txt", 5000, [["refund"]]), file("gone.txt", 6000, [["x"]])]);
      expect([...reader.chunks([10, 11, 5000]).keys()]).toEqual([5000]);
      expect(reader.firstChunks(["b.txt", "gone.txt"]).map((row) => row.id)).toEqual([5000, 6000]);
      // and this connection's own writes too
      reader.replaceFiles(["b.txt"], []);
      expect([...reader.chunks([5000, 6000]).keys()]).toEqual([6000]);
      expect(reader.firstChunks(["b.txt"])).toEqual([]);
    } finally {
      reader.close();
    }
  });

  it("keeps what it read across another connection's bookkeeping commits, not across its content changes", () => {
    seed();
    const reader = LexicalStore.open(join(dir, "lexical.sqlite"));
    try {
      const files = reader.files();
      // a sync that found nothing to do records when it ran: the reader's files stay the same array
      store.setMeta("lastSync", "2026-12-02T01:00:00.000Z");
      expect(reader.getMeta("lastSync")).toBe("2026-12-02T01:00:00.000Z");
      expect(reader.files()).toBe(files);
      // a compaction moves the postings (and forgets the removed documents): the reader sees it
      store.replaceFiles(["a.txt"], []);
      expect(reader.files()).not.toBe(files);
      expect(reader.bm25(query("tax"), { limit: 5 })).toEqual([]);
      const afterRemoval = reader.files();
      expect(store.compact({ force: true })).toBe(true);
      expect(reader.files()).not.toBe(afterRemoval);
      expect(reader.bm25(query("tax"), { limit: 5 })).toEqual([]);
      expect(reader.bm25(query("refund"), { limit: 5 }).map((hit) => hit.id)).toEqual(
        store.bm25(query("refund"), { limit: 5 }).map((hit) => hit.id),
      );
    } finally {
      reader.close();
    }
  });

  it("never gives an id reserved before a write to another chunk", () => {
    seed();
    const next = store.nextChunkId();
    store.reserveChunkIds(next + 100);
    expect(store.nextChunkId()).toBe(next + 100);
    store.reserveChunkIds(next); // never backwards
    expect(store.nextChunkId()).toBe(next + 100);
  });

  it("counts a term's forms as the term: a chunk holding only a form matches, occurrences add up", () => {
    store.replaceFiles(
      [],
      [
        file("suggest.txt", 1, [
          ["suggestions", "suggest", "name"],
          ["suggested", "name"],
          ["name", "list"],
        ]),
        ...filler(),
      ],
    );
    const forms = new Map([["suggested", ["suggestions", "suggest"]]]);
    // alone, the word finds the one chunk that writes it
    expect(store.bm25(query("suggested"), { limit: 10 }).map((hit) => hit.id)).toEqual([2]);
    // with its forms: the chunk writing two of them (twice the occurrences) first, then the word's own
    const withForms = store.bm25(query("suggested"), { limit: 10, forms });
    expect(withForms.map((hit) => hit.id)).toEqual([1, 2]);
    // one term held by two chunks (not three terms of their own rarity): the word's own chunk scores less
    expect(withForms[1]?.score).toBeLessThan(store.bm25(query("suggested"), { limit: 10 })[0]?.score ?? 0);
    // a word no chunk writes is found by its one form that some chunk does
    expect(
      store.bm25(query("lists"), { limit: 10, forms: new Map([["lists", ["list"]]]) }).map((hit) => hit.id),
    ).toEqual([3]);
    // a form too common to tell anything makes the term too common too
    const common = new Map([["suggested", ["common"]]]);
    expect(store.bm25(query("suggested"), { limit: 10, forms: common, maxDocumentRatio: 0.1 })).toEqual([]);
  });
});
