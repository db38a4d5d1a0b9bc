#!/usr/bin/env node
// @ts-check
/**
 * A change to the native sandbox helper against the helper of an earlier commit, in the same run: builds
 * native/ of --base (default HEAD) into a temporary folder, then times a sandboxed `true` with each
 * helper in turn (UMBRA_HELPER), interleaved, through the sandbox entry point in the same workspace as
 * bench/sandbox/run.mjs (fixture.mjs: the folder's own policy, network off). On a loaded machine the bwrap ratio of run.mjs
 * swings by 2× from run to run; pairs of runs taken side by side show what the change itself costs.
 * With --cgroups, this tree's helper instead, with the default limits against no process and memory
 * limits (so no cgroups: what the cgroup limits cost where umbra may make cgroups, e.g. as root).
 * Usage: node bench/sandbox/helper-ab.mjs [--base REV | --cgroups] [--runs 200]. Needs `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openBenchSandbox } from "./fixture.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const { values } = parseArgs({
  options: {
    base: { type: "string", default: "HEAD" },
    runs: { type: "string", default: "200" },
    cgroups: { type: "boolean", default: false },
  },
});
const RUNS = Math.max(20, Number(values.runs));

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-helper-ab-")));
const src = join(base, "native");
mkdirSync(src);
const git = (/** @type {string[]} */ ...args) =>
  execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8" });
const sources = git("ls-tree", "--name-only", values.base, "native/")
  .split("\n")
  .filter((p) => /\.[ch]$/.test(p));
for (const path of sources) writeFileSync(join(base, path), git("show", `${values.base}:${path}`));
const baseline = join(base, "umbra-helper");
execFileSync(process.env.CC || "cc", [
  "-O2",
  "-std=c11",
  "-pthread",
  "-o",
  baseline,
  ...sources.filter((p) => p.endsWith(".c")).map((p) => join(base, p)),
]);

const limited = await openBenchSandbox();
const unlimited = values.cgroups
  ? await openBenchSandbox({ limits: { processes: 0, memoryBytes: 0 } })
  : limited;
const current = join(ROOT, "native", "build", "umbra-helper");
/** @type {Record<string, { path: string, opened: typeof limited }>} */
const helpers = values.cgroups
  ? {
      "this tree, no process or memory limit": { path: current, opened: unlimited },
      "this tree": { path: current, opened: limited },
    }
  : { [values.base]: { path: baseline, opened: limited }, "this tree": { path: current, opened: limited } };
/** @type {Record<string, number[]>} */
const times = Object.fromEntries(Object.keys(helpers).map((name) => [name, []]));
try {
  for (let i = 0; i <= RUNS; i++) {
    for (const [name, { path, opened }] of Object.entries(helpers)) {
      process.env.UMBRA_HELPER = path;
      const result = await opened.sandbox.run("true", [], { cwd: opened.ws });
      if (result.exitCode !== 0) throw new Error(`${name}: true exited ${result.exitCode}: ${result.stderr}`);
      if (i > 0) times[name]?.push(result.durationMs); // run 0 warms up
    }
  }
} finally {
  for (const dir of new Set([base, limited.base, unlimited.base]))
    rmSync(dir, { recursive: true, force: true });
}
const median = (/** @type {number[]} */ xs) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
for (const [name, list] of Object.entries(times))
  console.log(
    `umbra-helper of ${name}: median ${median(list).toFixed(1)} ms per sandboxed \`true\` (${RUNS} runs)`,
  );
