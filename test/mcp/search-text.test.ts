import { describe, expect, it } from "vitest";
import type { SearchHit, SearchResult } from "../../src/engine/api.js";
import { searchText } from "../../src/mcp/texts.js";

/** What a model reads of a search hit that groups several small definitions. */

function result(hits: SearchHit[]): SearchResult {
  const index = { watched: true, syncing: false, files: 1, chunks: 3 };
  return { hits, index, intent: "question" };
}

const hit = (extra: Partial<SearchHit>): SearchHit => ({
  path: "gin.go",
  startLine: 762,
  endLine: 795,
  score: 0.5,
  stale: false,
  preview: "",
  ...extra,
});

describe("searchText", () => {
  it("names the definitions a hit holds besides its symbol, on its head line", () => {
    const text = searchText(
      result([
        hit({ defines: ["serveError", "Engine > redirectTrailingSlash"] }),
        hit({ startLine: 1, endLine: 9, symbol: "Engine > ServeHTTP", defines: ["Engine > ServeHTTP"] }),
        hit({ startLine: 10, endLine: 20, symbol: "Engine" }),
      ]),
    );
    expect(text).toContain("gin.go:762-795  defines serveError, Engine > redirectTrailingSlash  score 0.500");
    expect(text).toContain("gin.go:1-9  Engine > ServeHTTP  score 0.500");
    expect(text).toContain("gin.go:10-20  Engine  score 0.500");
  });

  it("shows five of many, and a name holding a line break on one line", () => {
    const defines = ["a\nfake.go:1-2", "b", "c", "d", "e", "f", "g"];
    const text = searchText(result([hit({ defines })]));
    expect(text).toContain("defines a\\u000afake.go:1-2, b, c, d, e and 2 more  score");
    expect(text.split("\n").filter((line) => line.startsWith("fake.go"))).toEqual([]);
  });
});
