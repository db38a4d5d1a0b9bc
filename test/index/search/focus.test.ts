import { describe, expect, it } from "vitest";
import { keepFileScores, liftByFile, supportByFile } from "../../../src/index/search/focus.js";
import type { Scored } from "../../../src/index/search/fusion.js";

/** Chunk ids 1x are in a.py, 2x in b.py, 3x in c.py. */
const pathOf = (id: number) => ({ 1: "a.py", 2: "b.py", 3: "c.py" })[Math.floor(id / 10)];
const firstFiles = (ranked: readonly Scored[]) => [...new Set(ranked.map((hit) => pathOf(hit.id)))];

describe("keepFileScores", () => {
  it("ranks files as one ranking has them and their chunks as the other has them", () => {
    const files = [
      { id: 10, score: 0.9 },
      { id: 20, score: 0.6 },
      { id: 11, score: 0.3 },
      { id: 30, score: 0.2 },
    ];
    // the same legs with a.py's file-level vote given to chunk 11: it leads its file, and c.py leads b.py
    const chunks = [
      { id: 11, score: 0.5 },
      { id: 30, score: 0.45 },
      { id: 10, score: 0.4 },
      { id: 20, score: 0.3 },
    ];
    const kept = keepFileScores(files, chunks, pathOf);
    expect(kept.map((hit) => hit.id)).toEqual([11, 10, 20, 30]);
    expect(kept[0]?.score).toBeCloseTo(0.9);
    expect(kept[1]?.score).toBeCloseTo(0.72); // 0.4 × 0.9 / 0.5: it trails its file's best as it did
    expect(firstFiles(kept)).toEqual(firstFiles(files));
  });

  it("leaves the score of a chunk whose file the first ranking lacks", () => {
    expect(keepFileScores([{ id: 10, score: 1 }], [{ id: 20, score: 0.25 }], pathOf)).toEqual([
      { id: 20, score: 0.25 },
    ]);
  });
});

describe("liftByFile", () => {
  it("puts a strong file's second chunk before a weak file's only one, files in the same order", () => {
    const ranked = [
      { id: 10, score: 1 },
      { id: 20, score: 0.5 },
      { id: 30, score: 0.45 },
      { id: 11, score: 0.4 },
    ];
    const lifted = liftByFile(ranked, pathOf, 1);
    expect(lifted.map((hit) => hit.id)).toEqual([10, 11, 20, 30]);
    expect(firstFiles(lifted)).toEqual(firstFiles(ranked));
    expect(liftByFile(ranked, pathOf, 0)).toEqual(ranked);
  });
});

describe("supportByFile", () => {
  const ranked = [
    { id: 20, score: 1 },
    { id: 10, score: 0.9 },
    { id: 11, score: 0.5 },
    { id: 12, score: 0.4 },
    { id: 13, score: 0.3 },
    { id: 30, score: 0.2 },
  ];

  it("puts a file with several matching chunks before one with a single stronger match", () => {
    const supported = supportByFile(ranked, pathOf, 0.5, 2);
    expect(firstFiles(supported)).toEqual(["a.py", "b.py", "c.py"]);
    // a.py's first chunk gains half of its next two (0.5 + 0.4); its fourth chunk does not count
    expect(supported[0]).toEqual({ id: 10, score: 0.9 + 0.5 * 0.9 });
    // within a file the order stays, and only a file's first chunk moves
    expect(supported.filter((hit) => pathOf(hit.id) === "a.py").map((hit) => hit.id)).toEqual([
      10, 11, 12, 13,
    ]);
    expect(supported.find((hit) => hit.id === 11)?.score).toBe(0.5);
  });

  it("moves nothing with a share of 0, no following chunks counted, or one chunk a file", () => {
    expect(supportByFile(ranked, pathOf, 0, 2)).toEqual(ranked);
    expect(supportByFile(ranked, pathOf, 0.5, 0)).toEqual(ranked);
    const single = [
      { id: 10, score: 1 },
      { id: 20, score: 0.5 },
      { id: 30, score: 0.25 },
    ];
    expect(supportByFile(single, pathOf, 1, 2)).toEqual(single);
  });
});
