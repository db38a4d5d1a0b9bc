import { describe, expect, it } from "vitest";
import { trainCodeModel } from "../../../src/index/embed/code-model.js";
import { syntheticCodeCorpus } from "./synthetic.js";

/** Training time on 100k synthetic chunks; run with UMBRA_BENCH=1 (takes tens of seconds). */
describe.runIf(process.env.UMBRA_BENCH === "1")("code model training benchmark", () => {
  it("trains on 100k chunks", () => {
    const chunks = Number(process.env.UMBRA_BENCH_CHUNKS ?? 100_000);
    let started = performance.now();
    const corpus = syntheticCodeCorpus({ chunks });
    const generated = performance.now() - started;
    const chars = corpus.reduce((n, text) => n + text.length, 0);
    started = performance.now();
    const model = trainCodeModel(corpus);
    const trained = performance.now() - started;
    console.log(
      `corpus: ${chunks} chunks, ${(chars / 1e6).toFixed(1)} MB (generated in ${(generated / 1000).toFixed(1)} s); ` +
        `trained in ${(trained / 1000).toFixed(1)} s; vocabulary ${model.vocabulary.length}, ` +
        `${model.dimensions} dims, heap ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB rss`,
    );
    expect(model.vocabulary.length).toBeGreaterThan(1000);
  }, 600_000);
});
