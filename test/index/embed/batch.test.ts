import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EmbedItem, embedCached, planBatches } from "../../../src/index/embed/batch.js";
import { EmbeddingCache } from "../../../src/index/embed/cache.js";
import { type Embedder, EmbeddingError } from "../../../src/index/embed/embedder.js";

const DIMS = 4;

/** A deterministic vector for a text. */
function vectorOf(text: string): Float32Array {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < text.length; i++) v[i % DIMS] = (v[i % DIMS] as number) + text.charCodeAt(i);
  return v;
}

/** Records every call; `behave` may throw, hang or return something else. */
class FakeEmbedder implements Embedder {
  readonly dimensions = DIMS;
  readonly calls: string[][] = [];
  constructor(
    readonly id = "fake",
    private readonly behave?: (texts: string[], call: number) => Promise<Float32Array[]> | undefined,
  ) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    const special = this.behave?.(texts, this.calls.length);
    if (special) return special;
    return texts.map(vectorOf);
  }
  get embeddedTexts(): string[] {
    return this.calls.flat();
  }
}

function items(n: number, prefix = "t"): EmbedItem[] {
  return Array.from({ length: n }, (_, i) => ({ hash: `${prefix}${i}`, text: `${prefix} text number ${i}` }));
}

let dir: string;
let cache: EmbeddingCache;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "umbra-batch-"));
  cache = new EmbeddingCache({ dir });
});

afterEach(() => {
  cache.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("planBatches", () => {
  it("bounds batches by count and by characters, keeping order", () => {
    const list: EmbedItem[] = [
      { hash: "a", text: "x".repeat(40) },
      { hash: "b", text: "x".repeat(40) },
      { hash: "c", text: "x".repeat(40) },
      { hash: "d", text: "x".repeat(500) },
      { hash: "e", text: "x" },
      { hash: "f", text: "x" },
      { hash: "g", text: "x" },
    ];
    const batches = planBatches(list, 2, 100).map((batch) => batch.map((item) => item.hash).join(""));
    expect(batches).toEqual(["ab", "c", "d", "ef", "g"]);
  });
});

describe("embedCached", () => {
  it("embeds misses only: a second run makes no embed call", async () => {
    const first = new FakeEmbedder();
    const input = items(10);
    const result = await embedCached(first, cache, input, { batchSize: 4 });
    expect(result).toMatchObject({ embedded: 10, cached: 0 });
    expect(first.calls.map((c) => c.length)).toEqual([4, 4, 2]);
    expect(result.vectors.get("t3")).toEqual(vectorOf("t text number 3"));

    const second = new FakeEmbedder();
    const again = await embedCached(second, cache, input, { batchSize: 4 });
    expect(second.calls).toHaveLength(0);
    expect(again).toMatchObject({ embedded: 0, cached: 10 });
    expect(again.vectors.size).toBe(10);
    expect(again.vectors.get("t7")).toEqual(vectorOf("t text number 7"));
  });

  it("with half of the items new, embeds only the new half", async () => {
    await embedCached(new FakeEmbedder(), cache, items(10), {});
    const counting = new FakeEmbedder();
    const mixed = [...items(10), ...items(10, "new")];
    const result = await embedCached(counting, cache, mixed, {});
    expect(result).toMatchObject({ embedded: 10, cached: 10 });
    expect(counting.embeddedTexts.sort()).toEqual(
      items(10, "new")
        .map((item) => item.text)
        .sort(),
    );
    expect(result.vectors.size).toBe(20);
  });

  it("embeds again a cached vector whose length does not match the embedder", async () => {
    cache.putMany("fake", [{ hash: "t0", vector: new Float32Array(DIMS + 1) }]);
    const counting = new FakeEmbedder();
    const result = await embedCached(counting, cache, items(2), {});
    expect(result).toMatchObject({ embedded: 2, cached: 0 });
    expect(cache.getMany("fake", ["t0"]).get("t0")).toEqual(vectorOf("t text number 0"));
  });

  it("keeps embedders apart: another embedder id misses the cache", async () => {
    await embedCached(new FakeEmbedder("one"), cache, items(5), {});
    const other = new FakeEmbedder("two");
    const result = await embedCached(other, cache, items(5), {});
    expect(result.embedded).toBe(5);
    expect(other.embeddedTexts).toHaveLength(5);
  });

  it("embeds a hash that occurs several times once", async () => {
    const counting = new FakeEmbedder();
    const input = [...items(3), ...items(3), { hash: "t1", text: "t text number 1" }];
    const result = await embedCached(counting, cache, input, {});
    expect(counting.embeddedTexts).toHaveLength(3);
    expect(result).toMatchObject({ embedded: 3, cached: 0 });
    expect([...result.vectors.keys()].sort()).toEqual(["t0", "t1", "t2"]);
  });

  it("respects the character bound and reports progress up to the total", async () => {
    const counting = new FakeEmbedder();
    const input = items(12).map((item) => ({ ...item, text: item.text.padEnd(100, ".") }));
    await embedCached(counting, cache, input.slice(0, 2), {});
    const progress: [number, number][] = [];
    await embedCached(new FakeEmbedder(), cache, input, {
      batchSize: 64,
      maxBatchChars: 350,
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(progress[0]).toEqual([2, 12]);
    expect(progress.at(-1)).toEqual([12, 12]);
    for (let i = 1; i < progress.length; i++) {
      expect((progress[i] as [number, number])[0]).toBeGreaterThan((progress[i - 1] as [number, number])[0]);
    }
    // 10 misses of 100 characters, at most 3 per call.
    expect(progress.length).toBe(1 + 4);
  });

  it("isolates a poisoned text by splitting, caches what came before it, then names it", async () => {
    const poisoned = (texts: string[]) =>
      texts.some((t) => t.includes("number 5")) ? Promise.reject(new Error("model crashed")) : undefined;
    const embedder = new FakeEmbedder("fake", poisoned);
    const input = items(8);
    const error = await embedCached(embedder, cache, input, {
      batchSize: 8,
      retries: 2,
      retryDelayMs: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toContain("t5");
    expect((error as Error).message).toContain("model crashed");
    expect((error as Error).message).toContain("3 attempts");
    // The single poisoned text was tried 1 + retries times on its own.
    expect(embedder.calls.filter((c) => c.length === 1 && c[0]?.includes("number 5"))).toHaveLength(3);
    expect((error as EmbeddingError).hash).toBe("t5");
    // The halves finished before the failure are cached; the run stops at the failing text.
    const stored = cache.getMany(
      "fake",
      input.map((item) => item.hash),
    );
    expect([...stored.keys()].sort()).toEqual(["t0", "t1", "t2", "t3", "t4"]);
    expect(embedder.calls.map((c) => c.length)).toEqual([8, 4, 4, 2, 1, 1, 1, 1]);
  });

  it("recovers from a batch that fails once by splitting it", async () => {
    const flaky = new FakeEmbedder("fake", (_texts, call) =>
      call === 1 ? Promise.reject(new Error("transient")) : undefined,
    );
    const result = await embedCached(flaky, cache, items(8), { batchSize: 8, retryDelayMs: 1 });
    expect(result.embedded).toBe(8);
    expect(flaky.calls.map((c) => c.length)).toEqual([8, 4, 4]);
    expect(cache.count("fake")).toBe(8);
  });

  it("retries a whole batch on a retryable error before splitting it", async () => {
    const limited = new FakeEmbedder("fake", (_texts, call) =>
      call === 1
        ? Promise.reject(new EmbeddingError("HTTP 429", { retryable: true, status: 429 }))
        : undefined,
    );
    const result = await embedCached(limited, cache, items(6), { batchSize: 6, retryDelayMs: 1 });
    expect(result.embedded).toBe(6);
    expect(limited.calls.map((c) => c.length)).toEqual([6, 6]);
  });

  it("treats a wrong number of vectors as a failure", async () => {
    const short = new FakeEmbedder("fake", (texts) => Promise.resolve(texts.slice(1).map(vectorOf)));
    const error = await embedCached(short, cache, items(2), { retries: 0, retryDelayMs: 1 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(cache.count()).toBe(0);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const embedder = new FakeEmbedder();
    const controller = new AbortController();
    controller.abort();
    await expect(embedCached(embedder, cache, items(3), { signal: controller.signal })).rejects.toMatchObject(
      {
        name: "AbortError",
      },
    );
    expect(embedder.calls).toHaveLength(0);
  });

  it("stops on abort even when the embedder never answers, and a new run resumes after the finished batches", async () => {
    const input = items(20);
    const controller = new AbortController();
    let hung = false;
    // The third batch never resolves: like a process killed while it waits for the model.
    const hanging = new FakeEmbedder("fake", (_texts, call) => {
      if (call !== 3) return undefined;
      hung = true;
      setTimeout(() => controller.abort(), 20);
      return new Promise<Float32Array[]>(() => {});
    });
    await expect(
      embedCached(hanging, cache, input, { batchSize: 4, signal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(hung).toBe(true);
    expect(cache.count("fake")).toBe(8);

    // A fresh process (new cache instance on the same file) only embeds the unfinished batches.
    cache.close();
    cache = new EmbeddingCache({ dir });
    const counting = new FakeEmbedder();
    const result = await embedCached(counting, cache, input, { batchSize: 4 });
    expect(result).toMatchObject({ embedded: 12, cached: 8 });
    expect(counting.embeddedTexts.sort()).toEqual(
      input
        .slice(8)
        .map((item) => item.text)
        .sort(),
    );
  });

  it("does not retry after an abort during backoff", async () => {
    const controller = new AbortController();
    const failing = new FakeEmbedder("fake", () => {
      setTimeout(() => controller.abort(), 10);
      return Promise.reject(new Error("down"));
    });
    await expect(
      embedCached(failing, cache, items(1), { retries: 5, retryDelayMs: 10_000, signal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(failing.calls).toHaveLength(1);
  });
});
