#!/usr/bin/env node
// @ts-check
/**
 * Index speed benchmark, each figure next to a baseline measured in the same run:
 *   1. full index of a ≥100k-line repository (time, chunks/s, peak memory) vs `rg` reading every file;
 *   2. no-change re-index of a ≥20k-file tree vs a full rescan (state removed, every file re-hashed);
 *   3. one edited file searchable again (incremental sync + search, in process as `umbra watch` does)
 *      vs a full rescan;
 *   4. search latency p50/p95 over an index of ≥100k chunks (whole issue texts, and agent-style queries of
 *      bench/mcp/queries.mjs) vs `rg` for the query's identifier.
 * Usage: node bench/speed/run.mjs [--repo DIR] [--big DIR...] [--out FILE]
 */
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { AGENT_QUERIES, issueQueries, rgFiles } from "../mcp/queries.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const WORK = join(ROOT, "bench", ".work", "speed");
const { values } = parseArgs({
  options: {
    repo: { type: "string" },
    big: { type: "string", multiple: true },
    out: { type: "string" },
    files: { type: "string" },
    queries: { type: "string" },
    sections: { type: "string" },
  },
});
const repo = resolve(values.repo ?? join(ROOT, "bench", ".work", "repos", "astropy+astropy"));
const out = values.out ?? join(ROOT, "bench", "out", "speed.json");

const { indexWorkspace } = await import(join(ROOT, "dist", "index", "indexer.js"));
const { openIndex } = await import(join(ROOT, "dist", "index", "open.js"));
const { search } = await import(join(ROOT, "dist", "index", "search", "searcher.js"));
const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
const { workspaceDir } = await import(join(ROOT, "dist", "config", "paths.js"));

/** @param {number[]} xs @param {number} p */
function percentile(xs, p) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const median = (/** @type {number[]} */ xs) => percentile(xs, 50);
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/** Runs a command under GNU time: wall seconds and peak RSS (MiB). */
function timed(/** @type {string[]} */ argv, /** @type {NodeJS.ProcessEnv} */ env) {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %M", ...argv], {
    env,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) throw new Error(`${argv.join(" ")} failed: ${result.stderr.slice(-2000)}`);
  const last = result.stderr.trim().split("\n").pop() ?? "";
  const [seconds, kb] = last.split(" ").map(Number);
  return { seconds: seconds ?? NaN, peakMiB: (kb ?? NaN) / 1024, stdout: result.stdout };
}

function countLines(/** @type {string} */ dir) {
  const text = execFileSync(
    "bash",
    ["-c", `cd ${JSON.stringify(dir)} && git ls-files -z | xargs -0 cat 2>/dev/null | wc -l`],
    { encoding: "utf8" },
  );
  return Number(text.trim());
}

/** Which of the four measurements to run (default all): --sections 1,2,3,4 */
const sections = new Set((values.sections ?? "1,2,3,4").split(",").map(Number));
const results = /** @type {Record<string, unknown>} */ ({
  machine: `${process.platform} ${process.arch}, node ${process.version}`,
});
mkdirSync(WORK, { recursive: true });
const config = loadConfig({ env: {} });

// 1. Full index of a real repository, cold (empty data directory: no embedding cache).
if (sections.has(1)) {
  const home = join(WORK, "home-full");
  rmSync(home, { recursive: true, force: true });
  const env = { ...process.env, UMBRA_HOME: home };
  const lines = countLines(repo);
  log(`full index of ${repo} (${lines} lines)…`);
  const run = timed([process.execPath, CLI, "index", repo, "--json"], env);
  const report = JSON.parse(run.stdout);
  const rg = timed(["rg", "--count-matches", "--no-messages", ".", repo], env);
  results.fullIndex = {
    repo,
    lines,
    files: report.files,
    chunks: report.chunks,
    seconds: run.seconds,
    chunksPerSecond: report.chunks / run.seconds,
    peakMiB: run.peakMiB,
    baselineRgReadAllSeconds: rg.seconds,
  };
  log(JSON.stringify(results.fullIndex));
}

// 2. No-change re-index of a ≥20k-file tree.
if (sections.has(2)) {
  const nFiles = Number(values.files ?? 20_000);
  const tree = join(WORK, `tree-${nFiles}`);
  if (!existsSync(join(tree, ".complete"))) {
    rmSync(tree, { recursive: true, force: true });
    for (let i = 0; i < nFiles; i++) {
      const dir = join(tree, `pkg${i % 100}`, `mod${Math.floor(i / 100) % 20}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, `file${i}.py`),
        `def function_${i}(value):\n    """Synthetic module ${i}."""\n    return value * ${i}\n`,
      );
    }
    writeFileSync(join(tree, ".complete"), "");
  }
  const home = join(WORK, "home-tree");
  const env = { ...process.env, UMBRA_HOME: home };
  log(`indexing ${nFiles}-file tree once…`);
  const first = await indexWorkspace(tree, { config, env });
  const noChange = [];
  for (let i = 0; i < 5; i++) {
    const report = await indexWorkspace(tree, { config, env });
    if (report.hashedFiles !== 0) throw new Error("a no-change run hashed files");
    noChange.push(report.durationMs);
  }
  const cliNoChange = [];
  for (let i = 0; i < 3; i++)
    cliNoChange.push(timed([process.execPath, CLI, "index", tree], env).seconds * 1000);
  const rescan = [];
  for (let i = 0; i < 3; i++) {
    rmSync(join(workspaceDir(tree, env), "merkle.json"), { force: true });
    const report = await indexWorkspace(tree, { config, env });
    if (
      report.hashedFiles !== first.files + (report.skipped.length > 0 ? 0 : 0) &&
      report.hashedFiles < nFiles
    ) {
      throw new Error(`rescan hashed only ${report.hashedFiles}`);
    }
    rescan.push(report.durationMs);
  }
  results.noChangeReindex = {
    files: first.files,
    inProcessMedianMs: median(noChange),
    cliMedianMs: median(cliNoChange),
    baselineFullRescanMedianMs: median(rescan),
  };
  log(JSON.stringify(results.noChangeReindex));
}

// 3. Edit one file of the big repository; time until a search finds the edit.
if (sections.has(3)) {
  const home = join(WORK, "home-full");
  const env = { ...process.env, UMBRA_HOME: home };
  const target = execFileSync("git", ["-C", repo, "ls-files", "*.py"], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)[10];
  if (!target) throw new Error("no python file to edit");
  const file = join(repo, target);
  const original = readFileSync(file, "utf8");
  const edit = [];
  const rescan = [];
  try {
    for (let i = 0; i < 5; i++) {
      const name = `umbra_bench_marker_${Date.now()}_${i}`;
      writeFileSync(file, `${original}\n\ndef ${name}():\n    return ${i}\n`);
      const started = performance.now();
      await indexWorkspace(repo, { config, env });
      const index = await openIndex(repo, config, env);
      const hits = await search(index, name, { limit: 1 });
      index.close();
      const ms = performance.now() - started;
      if (hits[0]?.path !== target) throw new Error(`edit not found: ${JSON.stringify(hits[0])}`);
      edit.push(ms);
    }
    for (let i = 0; i < 2; i++) {
      rmSync(join(workspaceDir(repo, env), "merkle.json"), { force: true });
      const started = performance.now();
      await indexWorkspace(repo, { config, env });
      rescan.push(performance.now() - started);
    }
  } finally {
    writeFileSync(file, original);
    await indexWorkspace(repo, { config, env });
  }
  results.editToSearchable = {
    file: target,
    medianMs: median(edit),
    maxMs: Math.max(...edit),
    baselineFullRescanMedianMs: median(rescan),
  };
  log(JSON.stringify(results.editToSearchable));
}

// 4. Search latency over ≥100k chunks: one workspace holding several real repositories.
if (sections.has(4)) {
  const bigDirs = (values.big ?? []).map((d) => resolve(d));
  const big = bigDirs[0] ?? repo;
  const home = join(WORK, "home-big");
  const env = { ...process.env, UMBRA_HOME: home };
  log(`indexing ${big} for search latency…`);
  const report = await indexWorkspace(big, { config, env, onProgress: () => {} });
  const index = await openIndex(big, config, env);
  await search(index, "warm up the caches", { limit: 10 });
  /** Latency of each query in process, and of `rg` for its identifier. @param {string[]} queries */
  const measure = async (queries) => {
    const times = [];
    const rgTimes = [];
    for (const query of queries) {
      const started = performance.now();
      await search(index, query, { limit: 10 });
      times.push(performance.now() - started);
      const rgStarted = performance.now();
      rgFiles(query, big);
      rgTimes.push(performance.now() - rgStarted);
    }
    return {
      queries: queries.length,
      p50Ms: percentile(times, 50),
      p95Ms: percentile(times, 95),
      baselineRgP50Ms: percentile(rgTimes, 50),
    };
  };
  const issues = await measure(issueQueries(Number(values.queries ?? 60)));
  const agent = await measure(AGENT_QUERIES);
  index.close();
  results.search = { dir: big, chunks: report.chunks, ...issues, agentStyle: agent };
  log(JSON.stringify(results.search));
}

mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
appendFileSync(
  join(WORK, "history.jsonl"),
  `${JSON.stringify({ at: new Date().toISOString(), ...results })}\n`,
);
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
