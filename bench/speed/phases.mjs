#!/usr/bin/env node
// @ts-check
/**
 * Where a cold index run's time goes, phase by phase (scan, hash, chunk, train, embed, write, compact), for
 * one build (`--dist`, default this tree's dist/) in process, into a fresh data directory: what the index
 * reports as progress, timed at each change of phase.
 * Usage: node bench/speed/phases.mjs --repo DIR [--dist PATH/TO/dist]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({ options: { repo: { type: "string" }, dist: { type: "string" } } });
if (!values.repo) throw new Error("usage: node bench/speed/phases.mjs --repo DIR [--dist DIST_DIR]");
const dist = resolve(values.dist ?? join(ROOT, "dist"));
const { indexWorkspace } = await import(join(dist, "index", "indexer.js"));
const { loadConfig } = await import(join(dist, "config", "config.js"));
const home = mkdtempSync(join(tmpdir(), "umbra-phases-"));
try {
  /** @type {Record<string, number>} */
  const times = {};
  let phase = "start";
  let since = performance.now();
  const started = since;
  await indexWorkspace(resolve(values.repo), {
    config: loadConfig({ env: {} }),
    env: { ...process.env, UMBRA_HOME: home, UMBRA_ENGINE: "off" },
    onProgress: (/** @type {{ phase: string }} */ progress) => {
      if (progress.phase === phase) return;
      const now = performance.now();
      times[phase] = (times[phase] ?? 0) + now - since;
      since = now;
      phase = progress.phase;
    },
  });
  times[phase] = (times[phase] ?? 0) + performance.now() - since;
  delete times.start;
  const phases = Object.entries(times).map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)} s`);
  console.log(`${dist}: ${phases.join(", ")}; total ${((performance.now() - started) / 1000).toFixed(1)} s`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
