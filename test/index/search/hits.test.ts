import { describe, expect, it } from "vitest";
import { HitAssembler, type HitRow } from "../../../src/index/search/hits.js";

function row(
  id: number,
  path: string,
  symbol: string,
  startLine: number,
  endLine: number,
  defines: string[] = [],
): HitRow {
  return { id, path, symbol, startLine, endLine, language: "python", defines };
}

describe("HitAssembler", () => {
  it("joins a chunk that bridges two hits of one symbol, keeping the best score and place", () => {
    const assembler = new HitAssembler(10);
    assembler.add(row(4, "a.py", "run", 1, 20, ["run"]), 0.9);
    assembler.add(row(9, "b.py", "other", 1, 5, ["other", "other > inner"]), 0.8);
    assembler.add(row(6, "a.py", "run", 41, 60, ["run > last"]), 0.7);
    assembler.add(row(5, "a.py", "run", 21, 40, ["run > helper"]), 0.6);
    expect(assembler.hits()).toEqual([
      {
        path: "a.py",
        symbol: "run",
        startLine: 1,
        endLine: 60,
        score: 0.9,
        language: "python",
        // what the pieces define, in file order
        defines: ["run", "run > helper", "run > last"],
      },
      {
        path: "b.py",
        symbol: "other",
        startLine: 1,
        endLine: 5,
        score: 0.8,
        language: "python",
        defines: ["other", "other > inner"],
      },
    ]);
  });

  it("keeps apart chunks of one symbol that are not neighbours, and chunks without a symbol", () => {
    const assembler = new HitAssembler(10);
    assembler.add(row(1, "a.py", "Store", 1, 10), 0.9);
    assembler.add(row(3, "a.py", "Store", 30, 40), 0.8);
    assembler.add(row(7, "c.py", "", 1, 10), 0.7);
    assembler.add(row(8, "c.py", "", 11, 20), 0.6);
    expect(assembler.hits().map((hit) => hit.startLine)).toEqual([1, 30, 1, 11]);
  });

  it("is full once it holds the limit and the first five are settled", () => {
    const assembler = new HitAssembler(3);
    assembler.add(row(1, "a.py", "f1", 1, 1), 0.9);
    assembler.add(row(3, "a.py", "f2", 3, 3), 0.8);
    assembler.add(row(5, "a.py", "f3", 5, 5), 0.7);
    expect(assembler.full()).toBe(false); // a third file-a hit may yet give its slot to another file
    assembler.add(row(10, "b.py", "g", 1, 1), 0.6);
    expect(assembler.full()).toBe(true);
    expect(assembler.hits().map((hit) => hit.symbol)).toEqual(["f1", "f2", "g"]);
  });

  it("lets one file hold as many of the first five as the caller allows", () => {
    const add = (assembler: HitAssembler) => {
      for (const [i, symbol] of ["f1", "f2", "f3", "f4"].entries())
        assembler.add(row(i * 2, "a.py", symbol, i, i), 1 - i / 10);
      assembler.add(row(20, "b.py", "g", 1, 1), 0.5);
      assembler.add(row(30, "c.py", "h", 1, 1), 0.4);
      return assembler.hits().map((hit) => hit.symbol);
    };
    expect(add(new HitAssembler(10))).toEqual(["f1", "f2", "g", "h", "f3", "f4"]);
    expect(add(new HitAssembler(10, 3))).toEqual(["f1", "f2", "f3", "g", "h", "f4"]);
  });
});
