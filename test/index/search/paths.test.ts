import { describe, expect, it } from "vitest";
import { PathIndex } from "../../../src/index/search/paths.js";

const paths = [
  "sphinx/ext/autodoc/__init__.py",
  "sphinx/ext/autodoc/typehints.py",
  "sphinx/ext/autodoc/mock.py",
  "sphinx/ext/napoleon/docstring.py",
  "sphinx/util/typing.py",
  "astropy/io/ascii/cds.py",
  "astropy/units/format/cds.py",
  "astropy/units/format/generic.py",
  "astropy/units/quantity.py",
  ...Array.from({ length: 40 }, (_, i) => `sphinx/builders/b${i}.py`),
];

describe("PathIndex", () => {
  it("ranks files whose own name holds a query word above files with it in a folder name", () => {
    const ranked = new PathIndex(paths).rank(
      new Map([
        ["typehints", 3],
        ["autodoc", 3],
      ]),
      3,
    );
    expect(ranked[0]).toBe("sphinx/ext/autodoc/typehints.py");
    expect(ranked).toContain("sphinx/ext/autodoc/mock.py");
  });

  it("lets folder words choose between files of one name", () => {
    const index = new PathIndex(paths);
    expect(
      index.rank(
        new Map([
          ["cds", 1],
          ["units", 1],
        ]),
        2,
      ),
    ).toEqual(["astropy/units/format/cds.py", "astropy/io/ascii/cds.py"]);
    expect(
      index.rank(
        new Map([
          ["cds", 1],
          ["ascii", 1],
        ]),
        1,
      ),
    ).toEqual(["astropy/io/ascii/cds.py"]);
  });

  it("meets a path word that a query word extends by a few letters, below an exact match", () => {
    const index = new PathIndex([...paths, "sphinx/ext/autodoc/mocked.py"]);
    expect(index.rank(new Map([["mocked", 1]]), 2)).toEqual([
      "sphinx/ext/autodoc/mocked.py",
      "sphinx/ext/autodoc/mock.py",
    ]);
    expect(index.rank(new Map([["mo", 1]]), 2)).toEqual([]);
  });

  it("names a folder's module file (__init__.py, index.ts, mod.rs) by its folder", () => {
    const index = new PathIndex(paths);
    const ranked = index.rank(
      new Map([
        ["__init__", 3],
        ["init", 1],
        ["autodoc", 1],
        ["typehints", 1],
      ]),
      2,
    );
    expect(ranked).toEqual(["sphinx/ext/autodoc/typehints.py", "sphinx/ext/autodoc/__init__.py"]);
  });

  it("ignores words found in most paths and returns nothing for words in none", () => {
    const index = new PathIndex(paths);
    expect(index.rank(new Map([["sphinx", 5]]), 5)).toEqual([]);
    expect(index.rank(new Map([["nothing", 5]]), 5)).toEqual([]);
  });
});
