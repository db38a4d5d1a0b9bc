#!/usr/bin/env node
// @ts-check
/**
 * Cold full index, A/B: an earlier build's CLI (`--base`, a dist/cli/main.js) and this tree's index the same
 * checkout, each into a fresh data directory (no embedding cache, code model trained anew), in turns
 * (alternating which goes first) so that a loaded machine slows both alike. Prints each build's times, their
 * minimum (the least disturbed run) and the chunk counts (they differ when the chunker does).
 * Usage: node bench/speed/index-ab.mjs --base PATH/TO/dist/cli/main.js --repo DIR [--rounds N]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: { base: { type: "string" }, repo: { type: "string" }, rounds: { type: "string", default: "2" } },
});
if (!values.base || !values.repo)
  throw new Error("usage: node bench/speed/index-ab.mjs --base DIST_CLI --repo DIR [--rounds N]");
const builds = { base: resolve(values.base), "this tree": join(ROOT, "dist", "cli", "main.js") };
const names = Object.keys(builds);
/** @type {Record<string, number[]>} */
const times = {};
/** @type {Record<string, string>} */
const chunks = {};
for (let round = 0; round < Number(values.rounds); round++) {
  for (const name of round % 2 ? [...names].reverse() : names) {
    const home = mkdtempSync(join(tmpdir(), "umbra-index-ab-"));
    const started = performance.now();
    const result = spawnSync(process.execPath, [builds[name] ?? "", "index", resolve(values.repo)], {
      env: { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") },
      encoding: "utf8",
    });
    const seconds = (performance.now() - started) / 1000;
    rmSync(home, { recursive: true, force: true });
    if (result.status !== 0) throw new Error(`${name}: index failed: ${result.stderr.slice(-2000)}`);
    times[name] = [...(times[name] ?? []), seconds];
    chunks[name] = /(\d[\d,]*) chunks/.exec(result.stdout + result.stderr)?.[1] ?? "?";
    process.stderr.write(`round ${round + 1}, ${name}: ${seconds.toFixed(1)} s\n`);
  }
}
for (const name of names) {
  const xs = times[name] ?? [];
  console.log(
    `${name}: ${xs.map((x) => x.toFixed(1)).join(", ")} s (min ${Math.min(...xs).toFixed(1)} s), ${chunks[name]} chunks`,
  );
}
