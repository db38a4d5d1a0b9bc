import { applyPatch, diffArrays, formatPatch, OMIT_HEADERS, structuredPatch } from "diff";
import { describe, expect, it } from "vitest";
import { diffLines, keptLines, linePatch } from "../../src/workspace/line-diff.js";

/** A seeded generator, so that a failure is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Texts of few distinct lines (many ties), some without a last newline, some empty. */
function texts(count: number): [string, string][] {
  const next = random(7);
  const text = () => {
    if (next() < 0.1) return "";
    const letters = 1 + Math.floor(next() * 5);
    const lines = Array.from({ length: Math.floor(next() * 14) }, () =>
      String.fromCharCode(97 + Math.floor(next() * letters)),
    );
    return lines.join("\n") + (next() < 0.7 ? "\n" : "");
  };
  return Array.from({ length: count }, () => [text(), text()]);
}

const sides = (changes: ReturnType<typeof diffLines>) => ({
  before: changes.filter((c) => c.kind !== "add").flatMap((c) => c.lines),
  after: changes.filter((c) => c.kind !== "del").flatMap((c) => c.lines),
  kept: changes.filter((c) => c.kind === "keep").reduce((sum, c) => sum + c.lines.length, 0),
});

describe("diffLines", () => {
  it("gives both sides back and keeps as many lines as a shortest diff (jsdiff's Myers)", () => {
    for (const [a, b] of texts(1500)) {
      const before = a.split("\n");
      const after = b.split("\n");
      const got = sides(diffLines(before, after));
      expect(got.before).toEqual(before);
      expect(got.after).toEqual(after);
      const shortest = diffArrays(before, after)
        .filter((part) => !part.added && !part.removed)
        .reduce((sum, part) => sum + part.value.length, 0);
      expect(got.kept).toBe(shortest);
    }
  });

  it("changes lines found on one side only without searching: 20,000 lines with none in common at once", () => {
    const before = Array.from({ length: 20_000 }, (_, i) => `a ${i}`);
    const after = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? `a ${i}` : `b ${i}`));
    const start = performance.now();
    expect(
      diffLines(
        before,
        after.map((line) => `c${line}`),
      ),
    ).toEqual([
      { kind: "del", lines: before },
      { kind: "add", lines: after.map((line) => `c${line}`) },
    ]);
    // every other line kept: still a shortest diff
    expect(sides(diffLines(before, after)).kept).toBe(10_000);
    // jsdiff took 76 s for the first and 38 s for the second (bench/speed/hostile-diff.mjs)
    expect(performance.now() - start).toBeLessThan(10_000);
  }, 20_000);

  it("bounds the search when every line is common but out of order, and stays exact and the same each time", () => {
    const before = Array.from({ length: 30_000 }, (_, i) => `line ${i}`);
    const after = [...before].reverse();
    const once = diffLines(before, after);
    const got = sides(once);
    expect(got.before).toEqual(before);
    expect(got.after).toEqual(after);
    expect(diffLines(before, after)).toEqual(once);
  }, 20_000);
});

describe("keptLines", () => {
  it("maps each kept line's index in the old lines to its index in the new", () => {
    expect([...keptLines(["a", "b", "x", "c"], ["b", "c", "d"])]).toEqual([
      [1, 0],
      [3, 1],
    ]);
    expect(keptLines([], ["a"]).size).toBe(0);
  });
});

describe("linePatch", () => {
  it("applies, and changes as many lines as jsdiff's patch", () => {
    for (const [a, b] of texts(1500)) {
      for (const context of [0, 1, 3]) {
        const patch = linePatch(a, b, context);
        expect(applyPatch(a, patch)).toBe(b);
        // a shortest diff either way: as many lines removed and added as jsdiff's (ties may place them
        // elsewhere, and then a context line or the no-newline marker with them)
        const changed = (text: string) => text.split("\n").filter((line) => /^[-+]/.test(line)).length;
        const ours = formatPatch(patch, OMIT_HEADERS);
        const theirs = formatPatch(
          structuredPatch("a", "b", a, b, undefined, undefined, { context }),
          OMIT_HEADERS,
        );
        expect(changed(ours)).toBe(changed(theirs));
      }
    }
  });

  it("writes hunks as git does for a change at each end of a file without a last newline", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n9\nten";
    const after = "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n";
    expect(formatPatch(linePatch(before, after, 3), OMIT_HEADERS)).toBe(
      [
        "@@ -1,4 +1,4 @@",
        "-1",
        "+one",
        " 2",
        " 3",
        " 4",
        "@@ -7,4 +7,4 @@",
        " 7",
        " 8",
        " 9",
        "-ten",
        "\\ No newline at end of file",
        "+ten",
        "",
      ].join("\n"),
    );
    expect(linePatch("same\n", "same\n", 3).hunks).toEqual([]);
    expect(formatPatch(linePatch("", "a\n", 3), OMIT_HEADERS)).toBe("@@ -0,0 +1,1 @@\n+a\n");
  });
});
