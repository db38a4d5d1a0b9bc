import { describe, expect, it } from "vitest";
import { trainCodeModel } from "../../../src/index/embed/code-model.js";
import { syntheticCodeCorpus } from "./synthetic.js";

/**
 * Training time on synthetic chunks (default 100 000, about 137 MB of code-like text). Off by default:
 *   UMBRA_BENCH=1 [UMBRA_BENCH_CHUNKS=100000] [UMBRA_BENCH_IDENTIFIERS=100000] npx vitest run test/index/embed/code-model.bench.test.ts
 * UMBRA_BENCH_IDENTIFIERS=0 gives every identifier use a fresh name (millions of distinct tokens).
 */
describe.runIf(process.env.UMBRA_BENCH === "1")("code model training benchmark", () => {
  it("trains on synthetic chunks", () => {
    const chunks = Number(process.env.UMBRA_BENCH_CHUNKS ?? 100_000);
    const identifiers = Number(process.env.UMBRA_BENCH_IDENTIFIERS ?? 100_000);
    const corpus = syntheticCodeCorpus({ chunks, identifiers });
    const chars = corpus.reduce((n, text) => n + text.length, 0);
    const phases: string[] = [];
    const started = performance.now();
    const model = trainCodeModel(corpus, {
      onPhase: (phase, ms) => phases.push(`${phase} ${(ms / 1000).toFixed(1)} s`),
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${chunks} chunks, ${(chars / 1e6).toFixed(1)} MB: trained in ${seconds.toFixed(1)} s (${phases.join(", ")}); ` +
        `vocabulary ${model.vocabulary.length}, ${model.dimensions} dims, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(model.vocabulary.length).toBeGreaterThan(1000);
    expect(seconds).toBeLessThan(60);
  }, 600_000);
});
