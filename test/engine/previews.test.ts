import { describe, expect, it } from "vitest";
import { FileLines, PreviewCache } from "../../src/engine/previews.js";

// Search previews: lines sliced from a file's text kept between searches (the line starts found once).

/** The previews as they were made before: the whole text split at every hit. */
function bySplit(text: string, from: number, to: number): string {
  return text
    .split("\n")
    .slice(from - 1, to)
    .join("\n");
}

describe("FileLines", () => {
  it("gives exactly the lines a split of the whole text gives", () => {
    const texts = ["", "one", "one\n", "a\nb\nc", "a\nb\nc\n", "\n\n\n", "x\r\ny\r\nz", "é\n😀\nend\n"];
    for (const text of texts) {
      const file = new FileLines(text);
      for (let from = 1; from <= 6; from++)
        for (let to = from; to <= 8; to++)
          expect(file.lines(from, to), `${JSON.stringify(text)} ${from}-${to}`).toBe(bySplit(text, from, to));
    }
  });

  it("slices a big file's lines without a split of it", () => {
    const text = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}`).join("\n");
    const file = new FileLines(text);
    expect(file.lines(49_999, 50_003)).toBe("line 49999\nline 50000");
    expect(file.lines(2, 3)).toBe("line 2\nline 3");
    expect(file.lines(50_001, 50_004)).toBe("");
  });
});

describe("PreviewCache", () => {
  it("keeps a text only under the identity it was read with, and not a text too big to keep", () => {
    const cache = new PreviewCache("/nonexistent");
    cache.set("a.py", "1:2:3", "alpha\nbeta\n");
    expect(cache.get("a.py", "1:2:3")?.lines(2, 2)).toBe("beta");
    expect(cache.get("a.py", "1:2:4")).toBeUndefined();
    expect(cache.get("a.py", undefined)).toBeUndefined();
    // not kept without an identity, nor past the size kept at most (but still given back to slice)
    expect(cache.set("b.py", undefined, "b\n").lines(1, 1)).toBe("b");
    expect(cache.get("b.py", undefined)).toBeUndefined();
    const huge = "x".repeat(5 * 2 ** 20);
    expect(cache.set("huge.txt", "9", huge).lines(1, 1).length).toBe(huge.length);
    expect(cache.get("huge.txt", "9")).toBeUndefined();
  });

  it("lets the oldest texts go once the characters kept pass the bound", () => {
    const cache = new PreviewCache("/nonexistent");
    const text = "y".repeat(3 * 2 ** 20);
    for (let i = 0; i < 12; i++) cache.set(`f${i}`, `k${i}`, text);
    // 32 Mi characters at most: the first ones are gone, the last ones kept
    expect(cache.get("f0", "k0")).toBeUndefined();
    expect(cache.get("f11", "k11")).toBeDefined();
    expect(cache.get("f2", "k2")).toBeDefined();
  });
});
