#!/usr/bin/env node
import { createWriteStream } from "node:fs";
// @ts-check
/**
 * Retrieval benchmark: for each SWE-bench task, lay the repository out at its base commit,
 * index it with umbra, search with the issue text, fold hits to files and score them against
 * the files the real fix changed — next to a whole-file BM25 baseline computed on the same
 * checkout. See bench/retrieval/README.md.
 */
import { appendFile, mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { checkout, ensureClone, mirrorOf, trackedFiles } from "../lib/checkout.mjs";
import { fmtMs, runChecked, runShell } from "../lib/proc.mjs";
import { parseSearchJson, positiveInt, preflightUmbra, readJsonl, readRows } from "../lib/umbra-cli.mjs";
import { Bm25Corpus, isCodeFile } from "./bm25.mjs";
import { aggregate, foldToFiles, goldRanks, markdownTable, percentile } from "./metrics.mjs";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TOP_KEPT = 20;

const USAGE = `usage: node bench/retrieval/run.mjs [options]

  --tasks FILE        tasks JSONL (default ../shared/eval/swebench-dev.jsonl)
  --mirrors DIR       git mirrors, DIR/<owner>+<name>/repo (default ../.mirror)
  --work DIR          scratch directory (default bench/.work)
  --umbra "CMD"       umbra command line (default "node dist/cli/main.js", run from the project root)
  --no-umbra          run only the BM25 baseline
  --limit K           hits asked of umbra search (default 200)
  --repo NAME         only tasks whose repo contains NAME (repeatable)
  --instance ID       only this instance (repeatable)
  --limit-tasks N     only the first N tasks, in run order (repo, then commit date)
  --out FILE          summary JSON (default bench/out/retrieval.json)
  --results FILE      per-task JSONL, for resuming (default <work>/retrieval/results.jsonl)
  --fresh             forget earlier per-task results and start over
  --report-only       do not run anything; report from the per-task results
  --verbose           stream umbra's index progress to stderr
  -h, --help
`;

/**
 * @typedef {object} Task
 * @property {string} instance_id
 * @property {string} repo
 * @property {string} base_commit
 * @property {string} problem_statement
 * @property {string[]} files
 */

/**
 * @typedef {object} SystemResult
 * @property {(number | null)[]} ranks 1-based rank of each gold file among the files, null if absent
 * @property {string[]} top the first files returned
 * @property {number} nFiles files in the ranked list
 * @property {number} [nHits] hits returned (umbra)
 * @property {number} [stale] hits flagged stale (umbra)
 * @property {string} [error] why the system produced no result
 */

/**
 * @typedef {object} TaskRecord
 * @property {string} instance_id
 * @property {string} repo
 * @property {string} base_commit
 * @property {string[]} gold changed files present at the base commit
 * @property {string[]} goldMissing changed files absent at the base commit (created by the fix)
 * @property {string[]} goldNotIndexable gold files present but binary or too large
 * @property {string[]} absentFromMirror tracked files whose content the mirror lacks (left out of the checkout)
 * @property {string} [skipped] why the task is not scored
 * @property {number} trackedFiles
 * @property {number} docs files in the BM25 corpus
 * @property {{checkoutMs: number, bm25StatsMs: number, bm25QueryMs: number, indexMs?: number, searchMs?: number, firstIndexOfRepo?: boolean}} timings
 * @property {SystemResult} [bm25]
 * @property {SystemResult} [bm25code] the same BM25 over code files only (isCodeFile)
 * @property {SystemResult} [umbra]
 * @property {string} at ISO time of the record
 */

/** @typedef {"bm25" | "bm25code" | "umbra"} SystemName */

/** @type {Record<SystemName, string>} */
const SYSTEM_LABELS = { bm25: "BM25 (whole files)", bm25code: "BM25 (code files)", umbra: "umbra" };

/**
 * @typedef {object} Options
 * @property {string} tasksFile
 * @property {string} mirrors
 * @property {string} work
 * @property {string} umbraCmd
 * @property {boolean} useUmbra
 * @property {number} limit
 * @property {string[]} repos
 * @property {string[]} instances
 * @property {number | undefined} limitTasks
 * @property {string} out
 * @property {string} results
 * @property {boolean} fresh
 * @property {boolean} reportOnly
 * @property {boolean} verbose
 */

/** @returns {Options} */
function parseOptions() {
  const { values } = parseArgs({
    options: {
      tasks: { type: "string" },
      mirrors: { type: "string" },
      work: { type: "string" },
      umbra: { type: "string" },
      "no-umbra": { type: "boolean", default: false },
      limit: { type: "string" },
      repo: { type: "string", multiple: true },
      instance: { type: "string", multiple: true },
      "limit-tasks": { type: "string" },
      out: { type: "string" },
      results: { type: "string" },
      fresh: { type: "boolean", default: false },
      "report-only": { type: "boolean", default: false },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const int = (/** @type {string | undefined} */ s, /** @type {string} */ name) =>
    positiveInt(s, name, usage);
  const work = resolve(values.work ?? join(PROJECT_ROOT, "bench", ".work"));
  return {
    tasksFile: resolve(values.tasks ?? join(PROJECT_ROOT, "..", "shared", "eval", "swebench-dev.jsonl")),
    mirrors: resolve(values.mirrors ?? join(PROJECT_ROOT, "..", ".mirror")),
    work,
    umbraCmd: values.umbra ?? "node dist/cli/main.js",
    useUmbra: !values["no-umbra"],
    limit: int(values.limit, "limit") ?? 200,
    repos: values.repo ?? [],
    instances: values.instance ?? [],
    limitTasks: int(values["limit-tasks"], "limit-tasks"),
    out: resolve(values.out ?? join(PROJECT_ROOT, "bench", "out", "retrieval.json")),
    results: resolve(values.results ?? join(work, "retrieval", "results.jsonl")),
    fresh: values.fresh ?? false,
    reportOnly: values["report-only"] ?? false,
    verbose: values.verbose ?? false,
  };
}

/** @param {string} msg @returns {never} */
function usage(msg) {
  process.stderr.write(`retrieval: ${msg}\n${USAGE}`);
  process.exit(2);
}

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`${msg}\n`);
}

/**
 * @param {string} file
 * @returns {Promise<Task[]>}
 */
async function loadTasks(file) {
  return /** @type {Task[]} */ (await readRows(file, isTask, "a task row"));
}

/**
 * @param {unknown} x
 * @returns {x is Task}
 */
function isTask(x) {
  if (typeof x !== "object" || x === null) return false;
  const r = /** @type {Record<string, unknown>} */ (x);
  return (
    typeof r.instance_id === "string" &&
    typeof r.repo === "string" &&
    typeof r.base_commit === "string" &&
    typeof r.problem_statement === "string" &&
    Array.isArray(r.files) &&
    r.files.every((f) => typeof f === "string")
  );
}

/**
 * Commit times of the tasks' base commits, per repository, for ordering.
 * @param {Options} opts
 * @param {Task[]} tasks
 * @returns {Promise<Map<string, number>>} commit -> unix time
 */
async function commitTimes(opts, tasks) {
  /** @type {Map<string, number>} */
  const times = new Map();
  /** @type {Map<string, Set<string>>} */
  const byRepo = new Map();
  for (const t of tasks) {
    const set = byRepo.get(t.repo) ?? new Set();
    set.add(t.base_commit);
    byRepo.set(t.repo, set);
  }
  for (const [repo, commits] of byRepo) {
    const gitDir = (await mirrorOf(opts, repo)) ?? join(await ensureClone(opts, repo), ".git");
    const res = await runChecked("git", ["--git-dir", gitDir, "show", "-s", "--format=%H %ct", ...commits]);
    for (const line of res.stdout.split("\n")) {
      const [hash, time] = line.split(" ");
      if (hash && time) times.set(hash, Number(time));
    }
    for (const c of commits) if (!times.has(c)) throw new Error(`${repo}: base commit ${c} not found`);
  }
  return times;
}

/**
 * Load the per-task results written so far; the last record of an instance wins.
 * @param {string} file
 * @returns {Promise<Map<string, TaskRecord>>}
 */
async function loadResults(file) {
  /** @type {Map<string, TaskRecord>} */
  const records = new Map();
  for (const rec of /** @type {TaskRecord[]} */ (await readJsonl(file))) records.set(rec.instance_id, rec);
  return records;
}

/**
 * Whether a record already holds everything this run would compute.
 * @param {TaskRecord | undefined} rec
 * @param {Options} opts
 */
function isDone(rec, opts) {
  if (!rec) return false;
  if (rec.skipped) return true;
  if (!rec.bm25 || !rec.bm25code) return false;
  return !opts.useUmbra || (rec.umbra !== undefined && rec.umbra.error === undefined);
}

/**
 * @param {string[]} files ranked files
 * @param {string[]} gold
 * @returns {SystemResult}
 */
function systemResult(files, gold) {
  return { ranks: goldRanks(files, gold), top: files.slice(0, TOP_KEPT), nFiles: files.length };
}

/**
 * Index the checkout and search it with the issue text.
 * @param {Options} opts
 * @param {Task} task
 * @param {string} dir
 * @param {string[]} gold
 * @param {TaskRecord["timings"]} timings
 * @returns {Promise<SystemResult>}
 */
async function runUmbra(opts, task, dir, gold, timings) {
  const env = { ...process.env, UMBRA_HOME: join(opts.work, "umbra-home") };
  const logDir = join(opts.work, "retrieval", "logs");
  await mkdir(logDir, { recursive: true });
  const logFile = join(logDir, `${task.instance_id}.index.log`);
  const logStream = createWriteStream(logFile);
  const idx = await runShell(opts.umbraCmd, ["index", dir], {
    cwd: PROJECT_ROOT,
    env,
    keepStderr: 4000,
    onStderr: (chunk) => {
      logStream.write(chunk);
      if (opts.verbose) process.stderr.write(chunk);
    },
  });
  await new Promise((done) => logStream.end(done));
  timings.indexMs = Math.round(idx.ms);
  const empty = { ranks: gold.map(() => null), top: [], nFiles: 0 };
  if (idx.code !== 0) {
    const tail = idx.stderr.trim().split("\n").slice(-3).join(" / ");
    return { ...empty, error: `index exited ${idx.code}: ${tail} (log: ${relative(PROJECT_ROOT, logFile)})` };
  }
  const res = await runShell(
    opts.umbraCmd,
    ["search", "-", "--root", dir, "--limit", String(opts.limit), "--json"],
    { cwd: PROJECT_ROOT, env, input: task.problem_statement, keepStderr: 4000 },
  );
  timings.searchMs = Math.round(res.ms);
  if (res.code !== 0) {
    const tail = res.stderr.trim().split("\n").slice(-3).join(" / ");
    return { ...empty, error: `search exited ${res.code}: ${tail}` };
  }
  const parsed = parseSearchJson(res.stdout);
  if ("error" in parsed) return { ...empty, error: parsed.error };
  const files = foldToFiles(parsed.hits);
  return {
    ...systemResult(files, gold),
    nHits: parsed.hits.length,
    stale: parsed.hits.filter((h) => h.stale === true).length,
  };
}

/**
 * Run one task on a fresh checkout.
 * @param {Options} opts
 * @param {Task} task
 * @param {Bm25Corpus} corpus
 * @param {boolean} firstOfRepo
 * @returns {Promise<TaskRecord>}
 */
async function runTask(opts, task, corpus, firstOfRepo) {
  const dir = await ensureClone(opts, task.repo);
  const t0 = performance.now();
  const absentFromMirror = await checkout(dir, task.base_commit);
  /** @type {TaskRecord["timings"]} */
  const timings = { checkoutMs: Math.round(performance.now() - t0), bm25StatsMs: 0, bm25QueryMs: 0 };

  const absent = new Set(absentFromMirror);
  const entries = (await trackedFiles(dir)).filter((e) => !absent.has(e.path));
  const tracked = new Set(entries.map((e) => e.path));
  const gold = task.files.filter((f) => tracked.has(f));
  const goldMissing = task.files.filter((f) => !tracked.has(f));

  const t1 = performance.now();
  const { docs, skipped } = await corpus.documents(dir, entries);
  timings.bm25StatsMs = Math.round(performance.now() - t1);
  const goldNotIndexable = gold.filter((f) => skipped.has(f));

  /** @type {TaskRecord} */
  const rec = {
    instance_id: task.instance_id,
    repo: task.repo,
    base_commit: task.base_commit,
    gold,
    goldMissing,
    goldNotIndexable,
    absentFromMirror,
    trackedFiles: entries.length,
    docs: docs.length,
    timings,
    at: new Date().toISOString(),
  };
  if (gold.length === 0) {
    rec.skipped = "no changed file exists at the base commit";
    return rec;
  }

  const t2 = performance.now();
  const ranked = corpus.rank(docs, task.problem_statement).map((d) => d.path);
  timings.bm25QueryMs = Math.round(performance.now() - t2);
  rec.bm25 = systemResult(ranked, gold);
  const code = docs.filter((doc) => isCodeFile(doc.path));
  rec.bm25code = systemResult(
    corpus.rank(code, task.problem_statement).map((d) => d.path),
    gold,
  );

  if (opts.useUmbra) {
    timings.firstIndexOfRepo = firstOfRepo;
    rec.umbra = await runUmbra(opts, task, dir, gold, timings);
  }
  return rec;
}

/** @param {number} x */
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : "–");

/**
 * Build the summary (JSON) and the Markdown report from the records of the selected tasks.
 * @param {Options} opts
 * @param {Task[]} tasks selected tasks, in run order
 * @param {Map<string, TaskRecord>} records
 * @param {{wallMs: number, ranThisTime: number}} run
 */
function summarize(opts, tasks, records, run) {
  const recs = tasks.map((t) => records.get(t.instance_id)).filter((r) => r !== undefined);
  const scored = recs.filter((r) => !r.skipped);
  const skipped = recs.filter((r) => r.skipped);
  /** @type {SystemName[]} */
  const systems = ["bm25", "bm25code", "umbra"];
  const present = systems.filter((s) => scored.some((r) => r[s] !== undefined));
  const repos = [...new Set(tasks.map((t) => t.repo))].sort();
  const scopes = [{ name: "all", filter: (/** @type {TaskRecord} */ _r) => true }].concat(
    repos.map((repo) => ({ name: repo, filter: (r) => r.repo === repo })),
  );

  /** @type {Record<string, Record<string, ReturnType<typeof aggregate> & {errors: number}>>} */
  const metrics = {};
  for (const scope of scopes) {
    metrics[scope.name] = {};
    for (const s of present) {
      const results = scored.filter(scope.filter).flatMap((r) => (r[s] ? [r[s]] : []));
      const agg = aggregate(results.map((x) => x.ranks));
      /** @type {Record<string, ReturnType<typeof aggregate> & {errors: number}>} */ (metrics[scope.name])[
        s
      ] = {
        ...agg,
        errors: results.filter((x) => x.error !== undefined).length,
      };
    }
  }

  const checkout = recs.map((r) => r.timings.checkoutMs);
  const bm25Stats = recs.map((r) => r.timings.bm25StatsMs);
  const bm25Query = scored.map((r) => r.timings.bm25QueryMs);
  const index = scored.flatMap((r) => (r.timings.indexMs !== undefined ? [r.timings.indexMs] : []));
  const firstIndex = scored.flatMap((r) =>
    r.timings.firstIndexOfRepo && r.timings.indexMs !== undefined ? [r.timings.indexMs] : [],
  );
  const incIndex = scored.flatMap((r) =>
    r.timings.firstIndexOfRepo === false && r.timings.indexMs !== undefined ? [r.timings.indexMs] : [],
  );
  const search = scored.flatMap((r) => (r.timings.searchMs !== undefined ? [r.timings.searchMs] : []));
  const sum = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0);
  const timings = {
    checkoutTotalMs: sum(checkout),
    bm25StatsTotalMs: sum(bm25Stats),
    bm25QueryP50Ms: percentile(bm25Query, 50),
    bm25QueryP95Ms: percentile(bm25Query, 95),
    indexTotalMs: sum(index),
    indexFirstOfRepoMs: firstIndex,
    indexIncrementalP50Ms: percentile(incIndex, 50),
    indexIncrementalP95Ms: percentile(incIndex, 95),
    searchP50Ms: percentile(search, 50),
    searchP95Ms: percentile(search, 95),
    searchQueries: search.length,
    wallThisRunMs: Math.round(run.wallMs),
    tasksRunThisTime: run.ranThisTime,
  };

  const summary = {
    generatedAt: new Date().toISOString(),
    config: {
      tasksFile: opts.tasksFile,
      umbra: opts.useUmbra ? opts.umbraCmd : null,
      searchLimit: opts.limit,
      bm25: {
        k1: 1.2,
        b: 0.75,
        tokenizer: "lower-cased [\\p{L}\\p{N}_]+ words",
        documents:
          "whole files; bm25code: code files only (a language's extension, outside test, doc and example folders)",
      },
    },
    tasks: { selected: tasks.length, recorded: recs.length, scored: scored.length, skipped: skipped.length },
    metrics,
    timings,
    skipped: skipped.map((r) => ({
      instance_id: r.instance_id,
      reason: r.skipped,
      goldMissing: r.goldMissing,
    })),
    goldMissing: recs
      .filter((r) => r.goldMissing.length)
      .map((r) => ({ instance_id: r.instance_id, missing: r.goldMissing, kept: r.gold })),
    goldNotIndexable: recs
      .filter((r) => r.goldNotIndexable.length)
      .map((r) => ({ instance_id: r.instance_id, files: r.goldNotIndexable })),
    perTask: scored.map((r) => ({
      instance_id: r.instance_id,
      repo: r.repo,
      gold: r.gold,
      bm25: r.bm25 ? { ranks: r.bm25.ranks, top5: r.bm25.top.slice(0, 5) } : undefined,
      bm25code: r.bm25code ? { ranks: r.bm25code.ranks, top5: r.bm25code.top.slice(0, 5) } : undefined,
      umbra: r.umbra
        ? {
            ranks: r.umbra.ranks,
            top5: r.umbra.top.slice(0, 5),
            nFiles: r.umbra.nFiles,
            error: r.umbra.error,
          }
        : undefined,
    })),
  };

  // Markdown
  const rows = [];
  for (const scope of scopes) {
    for (const s of present) {
      const m = metrics[scope.name]?.[s];
      if (!m || m.n === 0) continue;
      rows.push([
        scope.name,
        SYSTEM_LABELS[s],
        String(m.n) + (m.errors ? ` (${m.errors} err)` : ""),
        f3(m.acc1),
        f3(m.acc5),
        f3(m.acc10),
        f3(m.mrr),
        f3(m.recall5),
      ]);
    }
  }
  const lines = [
    `## Retrieval benchmark — ${scored.length} scored tasks` +
      (skipped.length ? `, ${skipped.length} skipped (no changed file at base commit)` : ""),
    "",
    markdownTable(["scope", "system", "n", "Acc@1", "Acc@5", "Acc@10", "MRR", "Recall@5"], rows, [
      "l",
      "l",
      "r",
      "r",
      "r",
      "r",
      "r",
      "r",
    ]),
    "",
    "Acc@k: every changed file (present at the base commit) within the top k files. " +
      "MRR: 1/rank of the first changed file found.",
    "",
    markdownTable(
      ["timing", "value"],
      [
        ["checkout, total", fmtMs(timings.checkoutTotalMs)],
        ["BM25 tokenizing, total (cached by blob)", fmtMs(timings.bm25StatsTotalMs)],
        ["BM25 query p50 / p95", `${fmtMs(timings.bm25QueryP50Ms)} / ${fmtMs(timings.bm25QueryP95Ms)}`],
        ...(index.length
          ? [
              ["umbra index, total", fmtMs(timings.indexTotalMs)],
              ["umbra index, first of each repo", firstIndex.map(fmtMs).join(", ") || "–"],
              [
                "umbra index, incremental p50 / p95",
                incIndex.length
                  ? `${fmtMs(timings.indexIncrementalP50Ms)} / ${fmtMs(timings.indexIncrementalP95Ms)}`
                  : "–",
              ],
              [
                "umbra search p50 / p95 (CLI process)",
                `${fmtMs(timings.searchP50Ms)} / ${fmtMs(timings.searchP95Ms)}`,
              ],
            ]
          : []),
        ["wall time of this run", `${fmtMs(timings.wallThisRunMs)} (${run.ranThisTime} tasks run)`],
      ],
      ["l", "r"],
    ),
  ];
  if (summary.goldMissing.length) {
    lines.push("", "Changed files absent at the base commit (dropped from the gold set):");
    for (const g of summary.goldMissing) lines.push(`- ${g.instance_id}: ${g.missing.join(", ")}`);
  }
  if (summary.goldNotIndexable.length) {
    lines.push("", "Gold files that are binary or over 1 MiB:");
    for (const g of summary.goldNotIndexable) lines.push(`- ${g.instance_id}: ${g.files.join(", ")}`);
  }
  const errors = scored.filter((r) => r.umbra?.error);
  if (errors.length) {
    lines.push("", `umbra errors (${errors.length}, counted as misses):`);
    for (const r of errors.slice(0, 10)) lines.push(`- ${r.instance_id}: ${r.umbra?.error}`);
  }
  const few = scored.filter((r) => r.umbra && !r.umbra.error && r.umbra.nFiles < 10);
  if (few.length) {
    lines.push("", `umbra returned fewer than 10 distinct files on ${few.length} tasks (raise --limit).`);
  }
  if (recs.length < tasks.length)
    lines.push("", `(${tasks.length - recs.length} selected tasks have no result yet)`);
  return { summary, markdown: `${lines.join("\n")}\n` };
}

async function main() {
  const opts = parseOptions();
  const started = performance.now();
  let tasks = await loadTasks(opts.tasksFile);
  if (opts.repos.length) tasks = tasks.filter((t) => opts.repos.some((r) => t.repo.includes(r)));
  if (opts.instances.length) tasks = tasks.filter((t) => opts.instances.includes(t.instance_id));
  if (tasks.length === 0) usage("no task matches the filters");

  const times = await commitTimes(opts, tasks);
  tasks.sort(
    (a, b) =>
      a.repo.localeCompare(b.repo) ||
      /** @type {number} */ (times.get(a.base_commit)) - /** @type {number} */ (times.get(b.base_commit)) ||
      a.instance_id.localeCompare(b.instance_id),
  );
  if (opts.limitTasks !== undefined) tasks = tasks.slice(0, opts.limitTasks);

  await mkdir(dirname(opts.results), { recursive: true });
  if (opts.fresh && !opts.reportOnly) await rm(opts.results, { force: true });
  const records = await loadResults(opts.results);

  let ranThisTime = 0;
  if (!opts.reportOnly) {
    const todo = tasks.filter((t) => !isDone(records.get(t.instance_id), opts));
    log(
      `retrieval: ${tasks.length} tasks selected, ${tasks.length - todo.length} already done, ${todo.length} to run` +
        (opts.useUmbra ? ` (umbra: ${opts.umbraCmd})` : " (BM25 baseline only)"),
    );
    if (opts.useUmbra && todo.length) await preflightUmbra(opts.umbraCmd, PROJECT_ROOT);
    const corpus = new Bm25Corpus();
    /** @type {Set<string>} */
    const indexedRepos = new Set();
    let consecutiveUmbraErrors = 0;
    for (const [i, task] of todo.entries()) {
      const rec = await runTask(opts, task, corpus, !indexedRepos.has(task.repo));
      if (rec.umbra) indexedRepos.add(task.repo);
      await appendFile(opts.results, `${JSON.stringify(rec)}\n`);
      records.set(rec.instance_id, rec);
      ranThisTime++;
      const t = rec.timings;
      const parts = [
        `[${i + 1}/${todo.length}] ${task.instance_id}`,
        `checkout ${fmtMs(t.checkoutMs)}`,
        `bm25 ${fmtMs(t.bm25StatsMs + t.bm25QueryMs)}`,
      ];
      if (t.indexMs !== undefined) parts.push(`index ${fmtMs(t.indexMs)}`);
      if (t.searchMs !== undefined) parts.push(`search ${fmtMs(t.searchMs)}`);
      if (rec.skipped) parts.push(`SKIPPED: ${rec.skipped}`);
      else {
        const fmt = (/** @type {(number | null)[] | undefined} */ r) =>
          r ? `[${r.map((x) => x ?? "-").join(",")}]` : "";
        parts.push(`ranks bm25 ${fmt(rec.bm25?.ranks)}  code ${fmt(rec.bm25code?.ranks)}`);
        if (rec.umbra) parts.push(`umbra ${rec.umbra.error ? "ERROR" : fmt(rec.umbra.ranks)}`);
      }
      parts.push(`elapsed ${fmtMs(performance.now() - started)}`);
      log(parts.join("  "));
      if (rec.umbra?.error) {
        log(`  umbra: ${rec.umbra.error}`);
        consecutiveUmbraErrors++;
        if (consecutiveUmbraErrors >= 3) {
          log("retrieval: umbra failed on 3 tasks in a row; stopping (results so far are kept)");
          process.exitCode = 1;
          break;
        }
      } else {
        consecutiveUmbraErrors = 0;
      }
    }
    log(`retrieval: BM25 blob cache: ${corpus.cacheMisses} files tokenized, ${corpus.cacheHits} reused`);
  }

  const { summary, markdown } = summarize(opts, tasks, records, {
    wallMs: performance.now() - started,
    ranThisTime,
  });
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFile(opts.out, `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(markdown);
  log(`retrieval: summary written to ${relative(process.cwd(), opts.out) || opts.out}`);
}

main().catch((err) => {
  process.stderr.write(`retrieval: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
