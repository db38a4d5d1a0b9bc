import { describe, expect, it } from "vitest";
import { isLoadFailure, LoadProblems, messageLine } from "../../src/lsp/load-problems.js";
import { editedSymbols, mentions, rankByRelevance } from "../../src/lsp/relevance.js";

describe("editedSymbols", () => {
  it("names the declarations whose signature or body an edit changed", () => {
    const base = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
    expect(editedSymbols(base, base.replace("return a + b", "return a + b + 1"))).toEqual(["add"]);
    expect(editedSymbols(base, base.replace("def sub(a, b)", "def sub(a)"))).toEqual(["sub"]);
    const go =
      "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a * b }\n";
    expect(editedSymbols(go, go.replace("func Mul(a, b int)", "func Mul(a int)"))).toEqual(["Mul"]);
    const ts = "export function add(a: number, b: number) {\n  return a + b;\n}\nexport const one = 1;\n";
    expect(editedSymbols(ts, ts.replace("export const one = 1;", "export const one = 2;"))).toEqual(["one"]);
  });

  it("takes every declaration of a new file", () => {
    expect(editedSymbols(undefined, "int answer(void) { return 42; }\nint other(void);\n").sort()).toEqual([
      "answer",
      "other",
    ]);
  });

  it("reads a hostile file at once", () => {
    // Lines ended by a lone \r with an unclosed `(` or an annotation and no `=`: each was read again up
    // to the next \n, from every such line (seconds for a few hundred kilobytes).
    expect(editedSymbols(undefined, "a\rlet\t(\r".repeat(45_000))).toEqual([]);
    expect(editedSymbols(undefined, "A:\r".repeat(100_000))).toEqual([]);
    expect(
      editedSymbols(undefined, "func (s *Server) Start() {}\nx: int = 5\nY: Dict[str, int]= {}\n"),
    ).toEqual(["Start", "x", "Y"]);
  }, 10_000);
});

describe("rankByRelevance", () => {
  it("puts files that use the edited symbols first, then the rest by name", () => {
    const texts: Record<string, string> = {
      "a.py": "from pkg import mathx\nmathx.sub(1, 2)\n",
      "b.py": "from pkg import mathx\nmathx.add(1, 2)\n",
      "c.py": "from pkg import mathx\nmathx.add(1, mathx.add(2, 3))\n",
      "d.py": "from pkg import mathx\nadded = 1\n",
    };
    expect(rankByRelevance(Object.keys(texts), ["add"], (path) => texts[path])).toEqual([
      "c.py",
      "b.py",
      "a.py",
      "d.py",
    ]);
    expect(mentions("added add $add add_x", ["add"])).toBe(1);
  });

  it("ranks many importers against every name of a big new file at once", () => {
    // The pattern of the 70,000 names a 1 MiB file declares was built again for every importer (25 ms
    // each): a minute for 2,000 importers.
    let file = "";
    for (let i = 0; file.length < 1 << 20; i++) file += `let v${i} = 1\n`;
    const symbols = editedSymbols(undefined, file);
    expect(symbols.length).toBeGreaterThan(70_000);
    const paths = Array.from({ length: 2_000 }, (_, i) => `f${String(i).padStart(4, "0")}.ts`);
    const texts = new Map(paths.map((path, i) => [path, i % 2 === 0 ? "v1 + v2 + v2x" : "x + v1x"]));
    const ranked = rankByRelevance(paths, symbols, (path) => texts.get(path));
    expect(ranked.slice(0, 2)).toEqual(["f0000.ts", "f0002.ts"]);
    expect(ranked.slice(1_000, 1_002)).toEqual(["f0001.ts", "f0003.ts"]);
    expect(mentions("v1 + v2 + v2x", symbols)).toBe(2);
  }, 10_000);
});

describe("load problems", () => {
  const gopls = /errors? loading (workspace|packages)|could not load packages/i;

  it("keeps what a server says about failing to load the project, once, in one line", () => {
    const problems = new LoadProblems(gopls);
    const logged = (snapshot: number) => ({
      type: 1,
      text: `2026/12/01 07:47:46 errors loading workspace: 1 modules have errors:\n\tgo mod download x\n\n\tsnapshot=${snapshot}\n\tdirectory=file:///w\n`,
    });
    problems.record(logged(1), false);
    problems.record(logged(2), false);
    problems.record({ type: 3, text: "Finished loading packages." }, true);
    problems.record({ type: 1, text: "unrelated error in a log" }, false);
    expect(problems.take()).toEqual(["errors loading workspace: 1 modules have errors: go mod download x"]);
    expect(problems.take()).toEqual([]);
  });

  it("counts every error a server shows to the user, and long messages are cut", () => {
    expect(isLoadFailure({ type: 1, text: "Error loading workspace folders" }, undefined, true)).toBe(true);
    expect(isLoadFailure({ type: 2, text: "a warning" }, undefined, true)).toBe(false);
    expect(isLoadFailure({ type: 4, text: "errors loading workspace" }, gopls, false)).toBe(false);
    expect(messageLine("x".repeat(1000))).toHaveLength(300);
  });
});
