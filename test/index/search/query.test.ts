import { describe, expect, it } from "vitest";
import { reciprocalRankFusion } from "../../../src/index/search/fusion.js";
import { looksLikeCode, parseQuery } from "../../../src/index/search/query.js";

describe("parseQuery", () => {
  it("weighs code identifiers above prose and drops stop words", () => {
    const query = parseQuery("The separability_matrix does not work for nested models");
    expect(query.terms.has("the")).toBe(false);
    expect(query.identifiers).toContain("separability_matrix");
    const identifier = query.terms.get("separability_matrix") ?? 0;
    const prose = query.terms.get("nested") ?? 0;
    expect(identifier).toBeGreaterThan(prose);
    expect(query.terms.get("separability")).toBeGreaterThan(0);
  });

  it("reads Python stack frames into paths, lines and symbols", () => {
    const query = parseQuery(
      'Traceback (most recent call last):\n  File "/usr/lib/python3/site-packages/sphinx/ext/autodoc/__init__.py", line 120, in format_signature\n    raise ValueError',
    );
    expect(query.frames).toEqual([
      { path: "sphinx/ext/autodoc/__init__.py", line: 120, symbol: "format_signature" },
    ]);
    expect(query.paths).toContain("sphinx/ext/autodoc/__init__.py");
    expect(query.identifiers).toContain("format_signature");
  });

  it("reads JavaScript frames and file paths", () => {
    const query = parseQuery(
      "TypeError: x is undefined\n    at Invoice.total (src/billing/invoice.ts:31:7)\nsee lib/util.js",
    );
    expect(query.frames[0]).toEqual({ path: "src/billing/invoice.ts", line: 31, symbol: "total" });
    expect(query.paths).toContain("lib/util.js");
  });

  it("reads links to a line of a repository file as frames, and only those", () => {
    const query = parseQuery(
      "The check at https://github.com/pydata/xarray/blob/1be777f/xarray/core/nanops.py#L35 is wrong " +
        "(see https://github.com/pydata/xarray/blob/main/CONTRIBUTING.md and " +
        "https://gitlab.com/group/proj/-/blob/main/src/app.ts#L7).",
    );
    expect(query.frames).toEqual([
      { path: "xarray/core/nanops.py", line: 35 },
      { path: "src/app.ts", line: 7 },
    ]);
  });

  it("turns dotted module names into paths", () => {
    const query = parseQuery("from astropy.modeling.separable import separability_matrix");
    expect(query.paths).toContain("astropy/modeling/separable");
  });

  it("treats attribute calls and bare names in code spans as code, even English words", () => {
    const query = parseQuery(
      "`xr.where(..., keep_attrs=True)` overwrites attributes; creating a `Quantity` from a float. Where is it?",
    );
    expect(query.identifiers).toEqual(expect.arrayContaining(["where", "Quantity", "keep_attrs"]));
    expect(query.terms.get("where")).toBe(3);
    expect(query.terms.get("quantity")).toBe(3);
    // file names and literals in code spans are not names of the code
    const spans = parseQuery("set `extensions` in `conf.py`, the result is `None` not `True`");
    expect(spans.identifiers).toEqual(["extensions"]);
    // the same words in prose stay prose
    const prose = parseQuery("Where is the quantity computed? It seems wrong here");
    expect(prose.identifiers).toEqual([]);
    expect(prose.terms.has("where")).toBe(false);
  });

  it("treats called names as code and weighs words in code spans above prose", () => {
    const query = parseQuery("calling `render` twice breaks the layout; also reset() fails");
    expect(query.identifiers).toContain("reset");
    expect(query.terms.get("render")).toBeGreaterThan(query.terms.get("layout") ?? 0);
    expect(query.identifiers).toContain("render"); // a bare name in a code span is a code reference
  });

  it("counts repetition only logarithmically and ignores URLs as paths", () => {
    const query = parseQuery(
      "widget widget widget widget widget gadget, see https://example.org/docs/page.html",
    );
    expect(query.terms.get("widget")).toBeLessThan(2 * (query.terms.get("gadget") ?? 0));
    expect(query.paths).toEqual([]);
  });

  it("drops environment dumps from bug reports", () => {
    const query = parseQuery(
      "merge fails on conflicts\n\npython: 3.8.5\nnumpy: 1.19\npandas: 1.1.0\nscipy: 1.5.2\nxarray: 0.16\n",
    );
    expect(query.terms.has("pandas")).toBe(false);
    expect(query.terms.has("conflicts")).toBe(true);
  });

  it("recognises code-shaped identifiers", () => {
    expect(looksLikeCode("parseHTTPResponse")).toBe(true);
    expect(looksLikeCode("snake_case")).toBe(true);
    expect(looksLikeCode("Pix2Sky")).toBe(true);
    expect(looksLikeCode("models")).toBe(false);
  });

  it("reads environment dumps and Go frames however they are indented", () => {
    const dump = parseQuery(
      "merge fails\n\n  - python version : 3.8\n* numpy= 1.19\n\tpandas:\t1.1.0\n   : 0.16\nsee also\n",
    );
    expect(dump.terms.has("numpy")).toBe(false);
    expect(dump.terms.has("pandas")).toBe(false);
    expect(dump.terms.has("merge")).toBe(true);
    const go = parseQuery(
      "panic: boom\n\n\n  \n\t/home/me/proj/main.go:8 +0x1d\nmain.main()\n  cmd/run.go:14\n",
    );
    expect(go.frames).toEqual([
      { path: "home/me/proj/main.go", line: 8 },
      { path: "cmd/run.go", line: 14 },
    ]);
    expect(looksLikeCode("HTTPServer")).toBe(true);
    expect(looksLikeCode("HTTP")).toBe(false);
  });

  it("reads a hostile query of the size the engine takes (100,000 characters) at once", () => {
    // Each once took seconds (backtracking): a bullet and blanks with no `key: value` after them
    // (stripNoise), blank lines with no Go frame after them, one long upper-case word (looksLikeCode).
    const size = 100_000;
    expect(parseQuery(`*${" \t".repeat(size / 2 - 1)}\u0000`).frames).toEqual([]);
    expect(parseQuery(`:${"\n".repeat(size - 1)}`).frames).toEqual([]);
    expect(parseQuery("A".repeat(size)).identifiers).toEqual([]);
    expect(looksLikeCode(`${"A".repeat(size)}b`)).toBe(true);
  }, 10_000);
});

describe("reciprocalRankFusion", () => {
  it("rewards agreement between legs and respects weights", () => {
    const fused = reciprocalRankFusion([
      { name: "a", weight: 1, ids: [1, 2, 3] },
      { name: "b", weight: 1, ids: [3, 1] },
    ]);
    expect(fused.map((x) => x.id)).toEqual([1, 3, 2]);
    const weighted = reciprocalRankFusion([
      { name: "a", weight: 1, ids: [1] },
      { name: "b", weight: 3, ids: [2] },
    ]);
    expect(weighted[0]?.id).toBe(2);
  });
});
