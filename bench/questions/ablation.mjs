#!/usr/bin/env node
// @ts-check
/**
 * Questions ablation, in process: the questions of bench/questions/questions.json searched with several
 * search-option variants side by side on one index (legs on/off, leg weights), each question once per
 * variant, with the in-process search latency of each variant (warm: every variant searches once before
 * the timed pass). `--show` lists the questions whose file or symbol rank differs between variants.
 *
 *   node bench/questions/ablation.mjs [REPO_FILTER] [VARIANTS_JSON] [--show]
 *   node bench/questions/ablation.mjs "" '{"default":{},"no-vector":{"weights":{"vector":0}}}'
 *
 * Uses the working clones under bench/.work/repos (made by run.mjs) at the set's pinned commits and indexes
 * them in process under UMBRA_HOME (default bench/.work/questions/ablation-home).
 */
import { join } from "node:path";
import { ablationArgs, loadEngine, ROOT } from "../lib/ablation.mjs";
import { checkout } from "../lib/checkout.mjs";
import { percentile } from "../retrieval/metrics.mjs";
import { aggregate, fileRank, symbolRank } from "./score.mjs";
import { loadSet } from "./set.mjs";

const { indexWorkspace, openIndex, search, loadConfig } = await loadEngine();
const { repoFilter, variants, show } = ablationArgs('{"default":{},"no-vector":{"weights":{"vector":0}}}');
const env = {
  ...process.env,
  UMBRA_HOME: process.env.UMBRA_HOME ?? join(ROOT, "bench", ".work", "questions", "ablation-home"),
  UMBRA_ENGINE: "off",
};
const config = loadConfig({ env: {} });
const set = await loadSet(join(ROOT, "bench", "questions", "questions.json"));
const repos = Object.keys(set.repos).filter((repo) => repo.includes(repoFilter));

/** @typedef {{file: number | null, symbol: number | null}} Ranks */
/** @type {Record<string, {ranks: Ranks[], ms: number[]}>} */
const results = Object.fromEntries(Object.keys(variants).map((name) => [name, { ranks: [], ms: [] }]));
/** @type {Record<string, Record<string, {ranks: Ranks[]}>>} */
const perRepo = {};
/** @type {Map<string, string[]>} question id → "variant file/symbol" per variant */
const shown = new Map();
for (const repo of repos) {
  const dir = join(ROOT, "bench", ".work", "repos", repo.replace("/", "+"));
  const pin = set.repos[repo];
  if (!pin) continue;
  await checkout(dir, pin.commit);
  await indexWorkspace(dir, { config, env });
  const index = await openIndex(dir, config, env);
  const questions = set.questions.filter((q) => q.repo === repo);
  perRepo[repo] = Object.fromEntries(Object.keys(variants).map((name) => [name, { ranks: [] }]));
  for (const [name, options] of Object.entries(variants)) {
    for (const q of questions) await search(index, q.question, { limit: 50, ...options }); // warm
    for (const q of questions) {
      const t = performance.now();
      const hits = await search(index, q.question, { limit: 50, ...options });
      const ms = performance.now() - t;
      /** @type {string[]} */
      const files = [];
      for (const hit of hits) if (!files.includes(hit.path)) files.push(hit.path);
      const ranks = { file: fileRank(files, q.answers), symbol: symbolRank(hits, q.answers) };
      results[name]?.ranks.push(ranks);
      perRepo[repo]?.[name]?.ranks.push(ranks);
      results[name]?.ms.push(ms);
      const line = shown.get(q.id) ?? [];
      line.push(`${name} ${ranks.file ?? "-"}/${ranks.symbol ?? "-"}`);
      shown.set(q.id, line);
    }
  }
  index.close();
}

if (show)
  for (const [id, line] of shown)
    if (new Set(line.map((l) => l.slice(l.indexOf(" ")))).size > 1)
      process.stdout.write(`${id}: ${line.join(", ")}\n`);
const f3 = (/** @type {number | null} */ x) => (x === null ? "–" : x.toFixed(3));
process.stdout.write(
  "| scope | variant | n | file@1 | file@5 | symbol@1 | symbol@5 | MRR (file) | p50 ms |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
);
const row = (
  /** @type {string} */ scope,
  /** @type {string} */ name,
  /** @type {{ranks: Ranks[]}} */ r,
  /** @type {string} */ ms,
) => {
  const a = aggregate(r.ranks);
  process.stdout.write(
    `| ${scope} | ${name} | ${a.n} | ${f3(a.file1)} | ${f3(a.file5)} | ${f3(a.symbol1)} | ${f3(a.symbol5)} | ${f3(a.mrr)} | ${ms} |\n`,
  );
};
for (const [name, r] of Object.entries(results)) row("all", name, r, percentile(r.ms, 50).toFixed(1));
for (const [repo, byVariant] of Object.entries(perRepo))
  for (const [name, r] of Object.entries(byVariant)) row(repo, name, r, "");
