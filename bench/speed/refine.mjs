#!/usr/bin/env node
// @ts-check
/**
 * How many IVF partitions the vector leg probes and how many candidates per hit it re-ranks with exact
 * vectors (LanceDB's nprobes and refine factor), measured through search(): for each setting, the vector
 * query's time and how much of search()'s result stays as with 24 partitions and a factor of 4 (the top 10
 * hits, the first hit, the top 5 files), over the 32 agent-style queries
 * and the first 107 issue texts of bench/mcp/queries.mjs. The product's own query (ANN_PROBES and
 * ANN_REFINE in src/index/store/vectors.ts) is replaced by one with the setting under test on the opened
 * store; each query runs every setting in turn, so a loaded machine slows them alike.
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

/** Settings: partitions probed / refine factor (0: none); the first is the reference. */
const SETTINGS = ["24/4", "24/2", "16/2", "12/2", "24/1", "24/0"];
/** @type {Record<string, number[]>} */
const vectorMs = Object.fromEntries(SETTINGS.map((f) => [f, []]));
/** The store's query with `setting`, timed. @param {string} setting */
const queryWith = (setting) => async (/** @type {Float32Array} */ vector, /** @type {number} */ limit) => {
  const [probes, factor] = setting.split("/").map(Number);
  const started = performance.now();
  let query = table.vectorSearch(vector).distanceType("cosine").nprobes(probes);
  if (factor) query = query.refineFactor(factor);
  const result = await query.select(["id", "_distance"]).limit(limit).toArrow();
  vectorMs[setting]?.push(performance.now() - started);
  const ids = /** @type {ArrayLike<number>} */ (result.getChild("id").toArray());
  return Array.from(ids, (id) => ({ id, distance: 0 }));
};

const queries = [...AGENT_QUERIES, ...issueQueries(107)];
/** @param {{ path: string, startLine: number }[]} hits */
const keys = (hits) => hits.map((hit) => `${hit.path}:${hit.startLine}`);
/** @type {Record<string, { top10: number, first: number, files5: number }>} */
const agree = Object.fromEntries(SETTINGS.map((f) => [f, { top10: 0, first: 0, files5: 0 }]));
for (let round = 0; round <= Number(values.rounds); round++) {
  for (const query of queries) {
    /** @type {Record<string, string[]>} */
    const got = {};
    for (const setting of round % 2 ? SETTINGS : [...SETTINGS].reverse()) {
      store.search = queryWith(setting);
      got[setting] = keys(await search(index, query, { limit: 10 }));
    }
    if (round !== 0) continue;
    const base = got[SETTINGS[0] ?? ""] ?? [];
    const files = (/** @type {string[]} */ list) =>
      new Set(list.slice(0, 5).map((key) => key.slice(0, key.lastIndexOf(":"))));
    for (const setting of SETTINGS) {
      const mine = got[setting] ?? [];
      const tally = agree[setting];
      if (!tally) continue;
      tally.top10 += base.length ? mine.filter((key) => base.includes(key)).length / base.length : 1;
      tally.first += mine[0] === base[0] ? 1 : 0;
      const [a, b] = [files(base), files(mine)];
      tally.files5 += a.size ? [...a].filter((file) => b.has(file)).length / a.size : 1;
    }
  }
  // the first round is a warm-up for the timings
  if (round === 0) for (const setting of SETTINGS) vectorMs[setting] = [];
}
index.close();
const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`${queries.length} queries, ${values.rounds} timed rounds, load ${load}`);
console.log(
  "| partitions / refine factor | vector query p50 / p95 | top 10 as with 24/4 | first hit as with 24/4 | top 5 files as with 24/4 |",
);
console.log("|---|---|---|---|---|");
for (const setting of SETTINGS) {
  const ms = vectorMs[setting] ?? [];
  const tally = agree[setting] ?? { top10: 0, first: 0, files5: 0 };
  const share = (/** @type {number} */ x) => `${((100 * x) / queries.length).toFixed(1)}%`;
  console.log(
    `| ${setting.replace(/\/0$/, "/none")} | ${percentile(ms, 50).toFixed(1)} / ${percentile(ms, 95).toFixed(1)} ms | ${share(tally.top10)} | ${share(tally.first)} | ${share(tally.files5)} |`,
  );
}
