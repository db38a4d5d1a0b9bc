import { describe, expect, it } from "vitest";
import { diffFiles, isEmpty } from "../../src/workspace/index.js";

const h = (c: string): string => c.repeat(64);

describe("diffFiles", () => {
  it("finds added, modified and removed files", () => {
    const changes = diffFiles(
      { "a.ts": h("1"), "b.ts": h("2"), "c.ts": h("3") },
      { "a.ts": h("1"), "b.ts": h("9"), "d.ts": h("4") },
    );
    expect(changes).toEqual({ added: ["d.ts"], modified: ["b.ts"], removed: ["c.ts"], renamed: [] });
    expect(isEmpty(changes)).toBe(false);
  });

  it("is empty for identical inputs", () => {
    const files = { "a.ts": h("1"), "x/b.ts": h("2") };
    const changes = diffFiles(files, { ...files });
    expect(changes).toEqual({ added: [], modified: [], removed: [], renamed: [] });
    expect(isEmpty(changes)).toBe(true);
  });

  it("turns a removed and an added path with the same content into a rename", () => {
    const changes = diffFiles(
      { "old/a.ts": h("1"), "keep.ts": h("2") },
      { "new/a.ts": h("1"), "keep.ts": h("2") },
    );
    expect(changes).toEqual({
      added: [],
      modified: [],
      removed: [],
      renamed: [{ from: "old/a.ts", to: "new/a.ts" }],
    });
  });

  it("uses each file once and pairs deterministically, preferring the same file name", () => {
    const previous = { "a/x.ts": h("1"), "a/y.ts": h("1"), "a/z.ts": h("1") };
    const next = { "b/y.ts": h("1"), "b/x.ts": h("1") };
    const changes = diffFiles(previous, next);
    expect(changes.renamed).toEqual([
      { from: "a/x.ts", to: "b/x.ts" },
      { from: "a/y.ts", to: "b/y.ts" },
    ]);
    expect(changes.removed).toEqual(["a/z.ts"]);
    expect(changes.added).toEqual([]);
    // same answer whatever the key order of the inputs
    const reversed = diffFiles(
      Object.fromEntries(Object.entries(previous).reverse()),
      Object.fromEntries(Object.entries(next).reverse()),
    );
    expect(reversed).toEqual(changes);
  });

  it("pairs the remaining same-content files in path order", () => {
    const changes = diffFiles(
      { "p.ts": h("1"), "q.ts": h("1") },
      { "r.ts": h("1"), "s.ts": h("1"), "t.ts": h("1") },
    );
    expect(changes.renamed).toEqual([
      { from: "p.ts", to: "r.ts" },
      { from: "q.ts", to: "s.ts" },
    ]);
    expect(changes.added).toEqual(["t.ts"]);
    expect(changes.removed).toEqual([]);
  });

  it("does not treat a modified file's old content as a rename source", () => {
    const changes = diffFiles({ "a.ts": h("1") }, { "a.ts": h("2"), "b.ts": h("1") });
    expect(changes).toEqual({ added: ["b.ts"], modified: ["a.ts"], removed: [], renamed: [] });
  });

  it("handles paths that look like Object.prototype members", () => {
    const next = JSON.parse(`{"__proto__": "${h("2")}", "constructor": "${h("3")}"}`) as Record<
      string,
      string
    >;
    const changes = diffFiles({ toString: h("1") }, next);
    expect(changes).toEqual({
      added: ["__proto__", "constructor"],
      modified: [],
      removed: ["toString"],
      renamed: [],
    });
  });
});
