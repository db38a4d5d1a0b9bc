#!/usr/bin/env node
// @ts-check
/**
 * An offline estimate of a "past fixes" leg for bug reports, before building one into the product: the
 * commits reachable from a task's base whose messages read most like the report (BM25 over commit
 * messages) vote for the source files they changed, as bug-localisation work uses similar past reports.
 * Fused by reciprocal rank with umbra's file ranking from a run.mjs results file (its top 20, and the
 * gold files at their ranks past it), the way search() fuses a leg. Reads git mirrors only.
 *
 *   node bench/retrieval/commit-leg.mjs --tasks TASKS.jsonl --results RESULTS.jsonl [--weights 0.25,0.5,1]
 *     [--voters 30] [--hub 0] [--commits 5000] [--mirrors DIR] [--show WEIGHT]
 *
 * --show W lists the tasks that enter or leave umbra's top 5 when fused at weight W.
 *
 * The results file's lists are cut at 20 files, so the fused figures are an estimate; see BENCHMARKS.md.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "../lib/ablation.mjs";
import { mirrorOf } from "../lib/checkout.mjs";
import { run } from "../lib/proc.mjs";
import { positiveInt, readRows } from "../lib/umbra-cli.mjs";
import { aggregate, goldRanks } from "./metrics.mjs";

const { values } = parseArgs({
  options: {
    tasks: { type: "string" },
    results: { type: "string" },
    mirrors: { type: "string", default: join(ROOT, "..", ".mirror") },
    commits: { type: "string", default: "5000" },
    voters: { type: "string", default: "30" },
    weights: { type: "string", default: "0.25,0.5,1" },
    hub: { type: "string", default: "0" },
    show: { type: "string" },
  },
});
/** @param {string} msg @returns {never} */
function usage(msg) {
  process.stderr.write(
    `commit-leg: ${msg}\nusage: node bench/retrieval/commit-leg.mjs --tasks FILE --results FILE [--weights W,…]\n`,
  );
  process.exit(2);
}
if (!values.tasks || !values.results) usage("--tasks and --results are required");
const VOTERS = positiveInt(values.voters, "voters", usage) ?? 30;
const COMMITS = positiveInt(values.commits, "commits", usage) ?? 5000;
/** --hub p: a file's votes over (commits touching it)^p, so files every change touches count less */
const HUB = Number(values.hub);
const WEIGHTS = values.weights.split(",").map(Number);
if (!(HUB >= 0) || WEIGHTS.some((w) => !(w >= 0))) usage("--hub and --weights take numbers ≥ 0");
const FUSION_K = 20;
const MAX_FILES_PER_COMMIT = 20;
const STOP = new Set(
  "the and for with this that from not but are was when which can should would will does have has had use using fix fixed fixes add added remove update make now issue bug error merge pull request branch main master test tests".split(
    " ",
  ),
);
const isSource = (/** @type {string} */ p) =>
  p.endsWith(".py") && !/(^|\/)(tests?|testing)\//.test(p) && !/(^|\/)(test_[^/]*|conftest)\.py$/.test(p);

/** Lower-cased words and identifiers, identifiers also split into their parts. @param {string} text */
function terms(text) {
  const out = [];
  for (const [word] of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const parts = word.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[_\s]+/);
    for (const t of new Set([word, ...(parts.length > 1 ? parts : [])])) {
      const lower = t.toLowerCase();
      if (lower.length > 2 && !STOP.has(lower)) out.push(lower);
    }
  }
  return out;
}

/**
 * What git printed, whatever its exit status: a mirror missing an old tree ends the log early, and what
 * was read before is kept. @param {string} gitDir @param {string[]} args
 */
async function git(gitDir, args) {
  return (await run("git", ["--git-dir", gitDir, ...args])).stdout;
}

/** Non-merge commits and first-parent merges (a pull request's title and all its files) before `base`. */
async function pastCommits(/** @type {string} */ gitDir, /** @type {string} */ base) {
  const format = ["--format=%x01%s%n%b%x02", "--name-only", "-n", String(COMMITS)];
  const read = (/** @type {string} */ out) =>
    out
      .split("\x01")
      .slice(1)
      .map((entry) => {
        const [message = "", files = ""] = entry.split("\x02");
        return { message, files: files.split("\n").filter(Boolean) };
      });
  return [
    ...read(await git(gitDir, ["log", base, "--no-merges", ...format])),
    ...read(await git(gitDir, ["log", base, "--merges", "--first-parent", "-m", ...format])),
  ].filter((c) => c.files.length > 0 && c.files.length <= MAX_FILES_PER_COMMIT);
}

/** Okapi BM25 of each document for the query's terms (k1 1.2, b 0.75); documents sharing none left out. */
function bm25(/** @type {string[][]} */ docs, /** @type {string[]} */ query) {
  const df = new Map();
  const tfs = docs.map((doc) => {
    const tf = new Map();
    for (const t of doc) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    return tf;
  });
  const avg = docs.reduce((s, d) => s + d.length, 0) / Math.max(1, docs.length);
  const wanted = [...new Set(query)].filter((t) => df.has(t));
  return tfs
    .map((tf, i) => {
      let score = 0;
      for (const t of wanted) {
        const f = tf.get(t);
        if (!f) continue;
        const idf = Math.log(1 + (docs.length - df.get(t) + 0.5) / (df.get(t) + 0.5));
        score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * (docs[i]?.length ?? 0)) / avg));
      }
      return { i, score };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score);
}

/** @param {string[][]} lists @param {number[]} weights */
function fuse(lists, weights) {
  const score = new Map();
  for (const [l, list] of lists.entries()) {
    for (const [i, f] of list.entries())
      score.set(f, (score.get(f) ?? 0) + (weights[l] ?? 0) / (FUSION_K + i + 1));
  }
  return [...score].sort((a, b) => b[1] - a[1]).map(([f]) => f);
}

const tasks = new Map((await readRows(values.tasks)).map((t) => [t.instance_id, t]));
const rows = [];
for (const result of await readRows(values.results)) {
  const task = tasks.get(result.instance_id);
  if (!task || !result.umbra?.top) continue;
  const gitDir =
    (await mirrorOf({ mirrors: resolve(values.mirrors), work: "" }, result.repo)) ??
    usage(`no mirror of ${result.repo} under ${values.mirrors}`);
  const present = new Set(
    (await git(gitDir, ["ls-tree", "-r", "--name-only", result.base_commit])).split("\n"),
  );
  const commits = await pastCommits(gitDir, result.base_commit);
  const touches = new Map();
  for (const c of commits) for (const f of c.files) touches.set(f, (touches.get(f) ?? 0) + 1);
  const votes = new Map();
  for (const { i, score } of bm25(
    commits.map((c) => terms(c.message)),
    terms(task.problem_statement),
  ).slice(0, VOTERS)) {
    const files = (commits[i]?.files ?? []).filter((f) => isSource(f) && present.has(f));
    for (const f of files) votes.set(f, (votes.get(f) ?? 0) + score / Math.sqrt(files.length));
  }
  const history = [...votes]
    .map(([f, v]) => /** @type {[string, number]} */ ([f, v / (touches.get(f) ?? 1) ** HUB]))
    .sort((a, b) => b[1] - a[1])
    .map(([f]) => f);
  const umbra = [...result.umbra.top];
  result.gold.forEach((/** @type {string} */ g, /** @type {number} */ j) => {
    const rank = result.umbra.ranks[j];
    if (rank > umbra.length) {
      while (umbra.length < rank - 1) umbra.push(`\0${umbra.length}`);
      umbra[rank - 1] = g;
    }
  });
  rows.push({ id: result.instance_id, gold: result.gold, umbra, history });
}
const line = (/** @type {string} */ name, /** @type {(r: typeof rows[number]) => string[]} */ list) => {
  const a = aggregate(rows.map((r) => goldRanks(list(r), r.gold)));
  process.stdout.write(
    `| ${name} | ${rows.length} | ${a.acc1.toFixed(3)} | ${a.acc5.toFixed(3)} | ${a.acc10.toFixed(3)} |\n`,
  );
};
process.stdout.write("| ranking | n | Acc@1 | Acc@5 | Acc@10 |\n| --- | ---: | ---: | ---: | ---: |\n");
line("umbra (run's results)", (r) => r.umbra);
line("past-commits leg alone", (r) => r.history);
for (const w of WEIGHTS) {
  line(`umbra + past commits, weight ${w}`, (r) => fuse([r.umbra, r.history], [1, w]));
}
if (values.show) {
  const w = Number(values.show);
  if (!(w >= 0)) usage("--show takes a number ≥ 0");
  for (const r of rows) {
    const worst = (/** @type {string[]} */ list) =>
      Math.max(...goldRanks(list, r.gold).map((k) => k ?? Infinity));
    const before = worst(r.umbra);
    const after = worst(fuse([r.umbra, r.history], [1, w]));
    if (before <= 5 !== after <= 5) process.stdout.write(`${r.id}: worst gold rank ${before} → ${after}\n`);
  }
}
