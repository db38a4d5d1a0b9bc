#!/usr/bin/env node
// @ts-check
/**
 * How many candidates the vector leg re-ranks with exact vectors (LanceDB's refine factor), measured
 * through search(): for each factor, the vector query's time and how much of search()'s result stays as
 * with a factor of 4 (the top 10 hits, the first hit, the top 5 files), over the 32 agent-style queries
 * and the first 107 issue texts of bench/mcp/queries.mjs. The product's own query (ANN_REFINE in
 * src/index/store/vectors.ts) is replaced by one with the factor under test on the opened store; each
 * query runs every factor in turn, so a loaded machine slows them alike.
 * Usage: node bench/speed/refine.mjs [--big DIR] [--home DIR] [--rounds N]
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { percentile } from "../lint/projects.mjs";
import { AGENT_QUERIES, issueQueries } from "../mcp/queries.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    big: { type: "string", default: join(ROOT, "bench", ".work", "big") },
    home: { type: "string", default: join(ROOT, "bench", ".work", "speed", "home-big") },
    rounds: { type: "string", default: "3" },
  },
});
const env = { ...process.env, UMBRA_HOME: resolve(values.home) };
const { openIndex } = await import(join(ROOT, "dist", "index", "open.js"));
const { search } = await import(join(ROOT, "dist", "index", "search", "searcher.js"));
const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
const index = await openIndex(resolve(values.big), loadConfig({ env: {} }), env);
const store = index.vectors;
if (!store) throw new Error("the index has no vector store");
/** @type {{ vectorSearch(v: Float32Array): any }} */
const table = /** @type {any} */ (store).table;

const FACTORS = [4, 2, 1, 0];
/** @type {Record<number, number[]>} */
const vectorMs = Object.fromEntries(FACTORS.map((f) => [f, []]));
/** The store's query with refine factor `factor` (0: none), timed. @param {number} factor */
const queryWith = (factor) => async (/** @type {Float32Array} */ vector, /** @type {number} */ limit) => {
  const started = performance.now();
  let query = table.vectorSearch(vector).distanceType("cosine").nprobes(24);
  if (factor > 0) query = query.refineFactor(factor);
  const result = await query.select(["id", "_distance"]).limit(limit).toArrow();
  vectorMs[factor]?.push(performance.now() - started);
  const ids = /** @type {ArrayLike<number>} */ (result.getChild("id").toArray());
  return Array.from(ids, (id) => ({ id, distance: 0 }));
};

const queries = [...AGENT_QUERIES, ...issueQueries(107)];
/** @param {{ path: string, startLine: number }[]} hits */
const keys = (hits) => hits.map((hit) => `${hit.path}:${hit.startLine}`);
/** @type {Record<number, { top10: number, first: number, files5: number }>} */
const agree = Object.fromEntries(FACTORS.map((f) => [f, { top10: 0, first: 0, files5: 0 }]));
for (let round = 0; round <= Number(values.rounds); round++) {
  for (const query of queries) {
    /** @type {Record<number, string[]>} */
    const got = {};
    for (const factor of round % 2 ? FACTORS : [...FACTORS].reverse()) {
      store.search = queryWith(factor);
      got[factor] = keys(await search(index, query, { limit: 10 }));
    }
    if (round !== 0) continue;
    const base = got[4] ?? [];
    const files = (/** @type {string[]} */ list) =>
      new Set(list.slice(0, 5).map((key) => key.slice(0, key.lastIndexOf(":"))));
    for (const factor of FACTORS) {
      const mine = got[factor] ?? [];
      const tally = agree[factor];
      if (!tally) continue;
      tally.top10 += base.length ? mine.filter((key) => base.includes(key)).length / base.length : 1;
      tally.first += mine[0] === base[0] ? 1 : 0;
      const [a, b] = [files(base), files(mine)];
      tally.files5 += a.size ? [...a].filter((file) => b.has(file)).length / a.size : 1;
    }
  }
  // the first round is a warm-up for the timings
  if (round === 0) for (const factor of FACTORS) vectorMs[factor] = [];
}
index.close();
const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`${queries.length} queries, ${values.rounds} timed rounds, load ${load}`);
console.log(
  "| refine factor | vector query p50 / p95 | top 10 as with 4 | first hit as with 4 | top 5 files as with 4 |",
);
console.log("|---|---|---|---|---|");
for (const factor of FACTORS) {
  const ms = vectorMs[factor] ?? [];
  const tally = agree[factor] ?? { top10: 0, first: 0, files5: 0 };
  const share = (/** @type {number} */ x) => `${((100 * x) / queries.length).toFixed(1)}%`;
  console.log(
    `| ${factor || "none"} | ${percentile(ms, 50).toFixed(1)} / ${percentile(ms, 95).toFixed(1)} ms | ${share(tally.top10)} | ${share(tally.first)} | ${share(tally.files5)} |`,
  );
}
