import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type VectorRow, VectorStore } from "../../../src/index/store/vectors.js";
import { cleanup, tempDir } from "../../helpers/workspace.js";

const DIMENSIONS = 8;
let dir: string;

beforeEach(async () => {
  dir = await tempDir("vectors");
});
afterEach(async () => {
  await cleanup(dir);
});

function row(id: number, vector: Float32Array): VectorRow {
  return {
    id,
    mpath: `m${id}`,
    startLine: 1,
    endLine: 1,
    language: "json",
    symbol: "",
    hash: `h${id}`,
    vector,
  };
}

describe("VectorStore", () => {
  it("optimizes a table of 20,000 chunks with no usable vector (small data files) without training an index", async () => {
    const store = await VectorStore.open(join(dir, "vectors"), DIMENSIONS);
    try {
      const rows = Array.from({ length: 20_000 }, (_, i) => row(i, new Float32Array(DIMENSIONS)));
      const unit = new Float32Array(DIMENSIONS);
      unit[0] = 1;
      rows.push(row(20_000, unit));
      await store.replace([], rows);
      await store.optimize();
      const hits = await store.search(unit, 5);
      expect(hits.map((hit) => hit.id)).toEqual([20_000]);
    } finally {
      store.close();
    }
  });

  it("says a table was created, and reopens it as existing", async () => {
    const first = await VectorStore.open(join(dir, "vectors"), DIMENSIONS);
    expect(first.created).toBe(true);
    first.close();
    const again = await VectorStore.open(join(dir, "vectors"), DIMENSIONS);
    expect(again.created).toBe(false);
    expect(again.damage).toBeUndefined();
    again.close();
  });
});
