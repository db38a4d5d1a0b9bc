#!/usr/bin/env node
// @ts-check
/**
 * Chunking alone, A/B in one process: an earlier build's chunker (`--base`, a dist/ folder) and this tree's
 * chunk every file of a checkout, in turns (alternating which goes first; the first round is a warm-up and
 * not counted), so that a loaded machine slows both alike. Prints each build's time per round, the chunk
 * counts, how many chunks carry a symbol, and how many chunks (range and symbol) the other build lacks.
 * Usage: node bench/speed/chunk-ab.mjs --base PATH/TO/dist --repo DIR [--rounds N]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: { base: { type: "string" }, repo: { type: "string" }, rounds: { type: "string", default: "3" } },
});
if (!values.base || !values.repo)
  throw new Error("usage: node bench/speed/chunk-ab.mjs --base DIST_DIR --repo DIR [--rounds N]");
const repo = resolve(values.repo);

/** Every file under `dir` of at most 1 MiB, outside .git and node_modules. */
function files(/** @type {string} */ dir, /** @type {{ path: string, text: string }[]} */ out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === ".git" || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files(path, out);
    else if (entry.isFile() && statSync(path).size <= 1 << 20)
      out.push({ path: relative(repo, path), text: readFileSync(path, "utf8") });
  }
  return out;
}
const all = files(repo);
const builds = {
  base: await import(join(resolve(values.base), "index", "chunk", "index.js")),
  "this tree": await import(join(ROOT, "dist", "index", "chunk", "index.js")),
};
const names = Object.keys(builds);
/** @type {Record<string, number[]>} */
const times = {};
/** @type {Record<string, { chunks: number, named: number }>} */
const counts = {};
/** @type {Record<string, Set<string>>} */
const made = {};
for (let round = 0; round <= Number(values.rounds); round++) {
  for (const name of round % 2 ? names : [...names].reverse()) {
    const { chunkFile } = builds[name];
    let chunks = 0;
    let named = 0;
    const keys = new Set();
    const started = performance.now();
    for (const { path, text } of all) {
      for (const chunk of await chunkFile(path, text)) {
        chunks++;
        if (chunk.symbol) named++;
        keys.add(`${path}:${chunk.startLine}-${chunk.endLine} ${chunk.symbol}`);
      }
    }
    made[name] = keys;
    if (round > 0) times[name] = [...(times[name] ?? []), (performance.now() - started) / 1000];
    counts[name] = { chunks, named };
  }
}
console.log(`${all.length} files under ${repo}`);
for (const name of names) {
  const xs = times[name] ?? [];
  console.log(
    `${name}: ${xs.map((x) => x.toFixed(2)).join(", ")} s (min ${Math.min(...xs).toFixed(2)} s), ` +
      `${counts[name]?.chunks} chunks, ${counts[name]?.named} with a symbol`,
  );
}
const [a = "", b = ""] = names;
const only = (/** @type {string} */ x, /** @type {string} */ y) =>
  [...(made[x] ?? [])].filter((key) => !made[y]?.has(key));
console.log(`chunks only in ${a}: ${only(a, b).length}; only in ${b}: ${only(b, a).length}`);
for (const key of only(b, a).slice(0, 8)) console.log(`  new: ${key}`);
