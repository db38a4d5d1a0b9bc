#!/usr/bin/env node
// @ts-check
/**
 * Hostile --path globs against one path, through this tree's `compileGlob` (what `umbra search --path`,
 * the engine's search and the agent's search_code use), and, when it can be loaded, through picomatch 4
 * (the backtracking regular expression search used before): for `**\/` followed by k times `*?` and a
 * character no name holds, the time to test one path whose last segment is 45 characters long.
 * Usage: node bench/speed/hostile-glob.mjs [--k 4,8,10,12] [--picomatch-max 12]
 */
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    k: { type: "string", default: "4,8,10,12,40" },
    "picomatch-max": { type: "string", default: "12" },
  },
});
const { compileGlob } = await import(join(ROOT, "dist", "workspace", "glob.js"));
/** @type {((glob: string, options: object) => (path: string) => boolean) | undefined} */
let picomatch;
try {
  picomatch = createRequire(join(ROOT, "package.json"))("picomatch");
} catch {
  picomatch = undefined; // not installed: umbra no longer depends on it
}
const path = "src/index/search/test_something_long_enough_for_backtrack.py";
const time = (/** @type {() => void} */ run) => {
  const start = performance.now();
  run();
  return performance.now() - start;
};
process.stdout.write(`path ${path} (last segment ${path.split("/").pop()?.length} characters)\n`);
process.stdout.write("| k | umbra compileGlob (ms) | picomatch 4 (ms) |\n| ---: | ---: | ---: |\n");
for (const k of (values.k ?? "").split(",").map(Number)) {
  const glob = `**/${"*?".repeat(k)}#`;
  const ours = time(() => compileGlob(glob)(path));
  const theirs =
    picomatch && k <= Number(values["picomatch-max"])
      ? time(() => picomatch?.(glob, { dot: true })(path)).toFixed(1)
      : "not run";
  process.stdout.write(`| ${k} | ${ours.toFixed(2)} | ${theirs} |\n`);
}
