#!/usr/bin/env node
// @ts-check
/**
 * Warm in-process search, A/B: the build of an earlier commit (`--base`) and this working tree's dist/
 * search the same index in one process, each query run by both in turn (alternating which goes first), so
 * that a loaded machine slows both alike; the first of the rounds is a warm-up and not counted. Also
 * checks that both return the same hits for every query. Queries: bench/mcp/queries.mjs and the questions
 * of bench/questions. The index is the
 * one bench/speed section 4 builds (bench/.work/speed/home-big), or the one of `--home` (an UMBRA_HOME that
 * has indexed `--big`, e.g. the xarray checkout of bench/retrieval).
 * Usage: node bench/speed/search-ab.mjs --base COMMIT [--big DIR] [--home DIR] [--rounds N]
 */
import { execSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { percentile } from "../lint/projects.mjs";
import { AGENT_QUERIES, issueQueries } from "../mcp/queries.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    base: { type: "string" },
    big: { type: "string", default: join(ROOT, "bench", ".work", "big") },
    home: { type: "string", default: join(ROOT, "bench", ".work", "speed", "home-big") },
    rounds: { type: "string", default: "3" },
  },
});
if (!values.base)
  throw new Error(
    "usage: node bench/speed/search-ab.mjs --base COMMIT [--big DIR] [--home DIR] [--rounds N]",
  );
const commit = execSync(`git -C ${JSON.stringify(ROOT)} rev-parse --short ${values.base}`, {
  encoding: "utf8",
}).trim();

// the base's sources compiled once into bench/.work/search-ab/COMMIT (node_modules: this tree's)
const baseDir = join(ROOT, "bench", ".work", "search-ab", commit);
if (!existsSync(join(baseDir, "dist", "index", "open.js"))) {
  mkdirSync(baseDir, { recursive: true });
  execSync(
    `git -C ${JSON.stringify(ROOT)} archive ${commit} src tsconfig.json tsconfig.build.json | tar -x -C ${JSON.stringify(baseDir)}`,
  );
  if (!existsSync(join(baseDir, "node_modules")))
    symlinkSync(join(ROOT, "node_modules"), join(baseDir, "node_modules"));
  execSync("npx tsc -p tsconfig.build.json", { cwd: baseDir, stdio: "inherit" });
}

const big = resolve(values.big);
const env = { ...process.env, UMBRA_HOME: resolve(values.home) };
/** @param {string} dist */
async function build(dist) {
  const { openIndex } = await import(join(dist, "index", "open.js"));
  const { search } = await import(join(dist, "index", "search", "searcher.js"));
  const { loadConfig } = await import(join(dist, "config", "config.js"));
  const index = await openIndex(big, loadConfig({ env: {} }), env);
  return { search, index };
}
const builds = { [commit]: await build(join(baseDir, "dist")), "this tree": await build(join(ROOT, "dist")) };
const names = Object.keys(builds);

/** @type {Record<string, number[]>} */
const times = {};
/** @type {Set<string>} */
const differ = new Set();
/** The prose questions of bench/questions (of all its repositories: a question runs the question path anywhere). */
const questions = JSON.parse(
  readFileSync(join(ROOT, "bench", "questions", "questions.json"), "utf8"),
).questions.map((/** @type {{question: string}} */ q) => q.question);
const sets = {
  "whole issue texts": issueQueries(),
  "agent-style": AGENT_QUERIES,
  "questions (bench/questions)": questions,
};
for (let round = 0; round <= Number(values.rounds); round++) {
  for (const [set, queries] of Object.entries(sets)) {
    for (const query of queries) {
      /** @type {Record<string, string>} */
      const hits = {};
      for (const name of round % 2 ? names : [...names].reverse()) {
        const { search, index } = builds[name] ?? {};
        const started = performance.now();
        hits[name] = JSON.stringify(await search(index, query, { limit: 10 }));
        const key = `${set}, ${name}`;
        if (round > 0) times[key] = [...(times[key] ?? []), performance.now() - started];
      }
      if (new Set(Object.values(hits)).size > 1) differ.add(`${set}\t${query}`);
    }
  }
}
for (const { index } of Object.values(builds)) index.close();
for (const [key, xs] of Object.entries(times))
  console.log(
    `${key}: p50 ${percentile(xs, 50).toFixed(1)} ms, p95 ${percentile(xs, 95).toFixed(1)} ms (n ${xs.length})`,
  );
for (const [set, queries] of Object.entries(sets)) {
  const n = [...differ].filter((key) => key.startsWith(`${set}\t`)).length;
  console.log(`${set}: hits differ on ${n} of ${queries.length} queries`);
}
