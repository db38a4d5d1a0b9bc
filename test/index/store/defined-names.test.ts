/**
 * The lexical store keeps what each chunk defines and declares, and finds a chunk by any of those names
 * (not only its symbol's); an index of schema 4 is upgraded in place and still found by its symbols.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LexicalStore, type NewChunk } from "../../../src/index/store/lexical.js";
import { cleanup, tempDir } from "../../helpers/workspace.js";

let dir: string;

beforeEach(async () => {
  dir = await tempDir("names");
});
afterEach(async () => {
  await cleanup(dir);
});

function chunk(
  id: number,
  symbol: string,
  defines: string[],
  declares: string[] = [],
): NewChunk & { id: number } {
  return {
    id,
    path: "gin.go",
    startLine: id * 10,
    endLine: id * 10 + 9,
    language: "go",
    symbol,
    defines,
    declares,
    hash: `h${id}`,
    terms: new Map([[`t${id}`, 1]]),
    length: 1,
  };
}

const GIN = { path: "gin.go", mpath: "m", hash: "f", size: 1, mtimeMs: 1, language: "go" };

describe("names a chunk defines", () => {
  it("are stored with it and find it, the names of its symbol too", () => {
    const store = LexicalStore.open(join(dir, "lexical.sqlite"));
    try {
      store.replaceFiles(
        [],
        [
          {
            file: GIN,
            chunks: [
              chunk(1, "", ["serveError", "Engine > redirectTrailingSlash"], ["Options"]),
              chunk(2, "Engine > handleHTTPRequest", ["Engine > handleHTTPRequest"]),
              chunk(3, "Engine > handleHTTPRequest", []),
            ],
          },
        ],
      );
      expect(store.chunks([1]).get(1)).toMatchObject({
        symbol: "",
        defines: ["serveError", "Engine > redirectTrailingSlash"],
        declares: ["Options"],
      });
      const ids = (name: string) => store.chunksBySymbolName([name], 10).map((row) => row.id);
      expect(ids("redirectTrailingSlash")).toEqual([1]);
      expect(ids("serveError")).toEqual([1]);
      expect(ids("Options")).toEqual([1]);
      // every piece of a split definition is found by its symbol, in file order
      expect(ids("handleHTTPRequest")).toEqual([2, 3]);
      expect(ids("Engine")).toEqual([]);
      expect(store.chunksBySymbolName(["handleHTTPRequest"], 1).map((row) => row.id)).toEqual([2]);
      // without what chunks hold (a report's identifiers): a chunk's own symbol only
      const own = (name: string) =>
        store.chunksBySymbolName([name], 10, { held: false }).map((row) => row.id);
      expect(own("serveError")).toEqual([]);
      expect(own("handleHTTPRequest")).toEqual([2, 3]);

      // a file's names go with its chunks
      store.replaceFiles([], [{ file: GIN, chunks: [chunk(4, "", ["serveError"])] }]);
      expect(ids("redirectTrailingSlash")).toEqual([]);
      expect(ids("serveError")).toEqual([4]);
      store.replaceFiles(["gin.go"], []);
      expect(ids("serveError")).toEqual([]);
    } finally {
      store.close();
    }
  });

  it("an index of schema 4 is upgraded in place: its chunks define nothing yet and are found by their symbols", () => {
    const file = join(dir, "old.sqlite");
    const old = new Database(file);
    old.exec(`
      CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema', '4');
      CREATE TABLE chunks(
        id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        language TEXT NOT NULL, symbol TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL,
        length INTEGER NOT NULL);
      INSERT INTO chunks VALUES (7, 'gin.go', 1, 9, 'go', 'Engine > ServeHTTP', 'ServeHTTP', 'h', 3);
      INSERT INTO chunks VALUES (8, 'gin.go', 10, 19, 'go', '', '', 'i', 3);
    `);
    old.close();
    const store = LexicalStore.open(file);
    try {
      expect(store.getMeta("schema")).toBe("5");
      expect(store.chunksBySymbolName(["ServeHTTP"], 10).map((row) => row.id)).toEqual([7]);
      expect(store.chunks([7, 8]).get(8)).toMatchObject({ symbol: "", defines: [], declares: [] });
    } finally {
      store.close();
    }
    // a second opening finds the work done
    const again = LexicalStore.open(file);
    expect(again.chunksBySymbolName(["ServeHTTP"], 10).map((row) => row.id)).toEqual([7]);
    again.close();
  });
});
