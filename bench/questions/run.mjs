#!/usr/bin/env node
// @ts-check
/**
 * Questions benchmark: prose questions over real repositories at pinned commits, each answered by the
 * implementing functions. Every repository is checked out, indexed with the built umbra CLI and searched
 * with each question; hits are scored at file and symbol level next to a whole-file BM25 baseline over the
 * code files of the same checkout. See bench/questions/README.md.
 */
import { appendFile, mkdir, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { checkout, ensureClone, trackedFiles } from "../lib/checkout.mjs";
import { fmtMs, runShell } from "../lib/proc.mjs";
import { parseSearchJson, positiveInt, preflightUmbra, readJsonl } from "../lib/umbra-cli.mjs";
import { Bm25Corpus } from "../retrieval/bm25.mjs";
import { foldToFiles, markdownTable, percentile } from "../retrieval/metrics.mjs";
import { commandHash, DEFAULT_UMBRA, umbraHome } from "./home.mjs";
import { aggregate, fileKind, fileRank, symbolRank } from "./score.mjs";
import { loadSet } from "./set.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROJECT_ROOT = resolve(HERE, "..", "..");
const TOP_KEPT = 10;

const USAGE = `usage: node bench/questions/run.mjs [options]

  --set FILE            question set (default bench/questions/questions.json)
  --mirrors DIR         git mirrors, DIR/<owner>+<name>/repo (default ../.mirror)
  --work DIR            scratch directory (default bench/.work)
  --umbra "CMD"         umbra command line (default "node dist/cli/main.js", run from the project root);
                        repeat it to compare builds in one run
  --no-umbra            run only the BM25 baselines
  --limit K             hits asked of umbra search (default 50)
  --repo NAME           only repositories whose owner/name contains NAME (repeatable)
  --limit-questions N   only the first N selected questions
  --out FILE            summary JSON (default bench/out/questions.json; bench/out/questions-NAME.json
                        for another set NAME.json)
  --results FILE        per-question JSONL, for resuming (default <work>/questions/results.jsonl;
                        results-NAME.jsonl for another set NAME.json)
  --fresh               forget earlier results and start over
  --report-only         run nothing; report from the results so far
  -h, --help
`;

/** The baselines: whole-file BM25 over the code files, with and without the test files. */
const BASELINES = /** @type {const} */ ({
  "bm25-code": {
    label: "BM25, code files",
    keep: (/** @type {string} */ p) => fileKind(p) !== "docs" && fileKind(p) !== "other",
  },
  "bm25-impl": {
    label: "BM25, code files minus tests",
    keep: (/** @type {string} */ p) => fileKind(p) === "code",
  },
});

/**
 * @typedef {object} UmbraSystem
 * @property {string} key `umbra:<hash of the command>`
 * @property {string} label
 * @property {string} cmd
 * @property {string} home its UMBRA_HOME (index formats of two builds may differ)
 */

/**
 * One line of the results file: a question answered by one system, or a repository indexed by umbra.
 * @typedef {object} QuestionRecord
 * @property {"question"} kind
 * @property {string} id
 * @property {string} repo
 * @property {string} system
 * @property {number | null} file
 * @property {number | null} [symbol]
 * @property {string[]} topFiles the first files
 * @property {{path: string, startLine: number, endLine: number, symbol?: string}[]} [topHits] umbra's first hits
 * @property {number} ms
 * @property {string} [error]
 */
/**
 * @typedef {object} IndexRecord
 * @property {"index"} kind
 * @property {string} repo
 * @property {string} system
 * @property {number} ms
 * @property {string} [error]
 */

/**
 * @typedef {object} Options
 * @property {string} setFile
 * @property {string} mirrors
 * @property {string} work
 * @property {UmbraSystem[]} umbras
 * @property {number} limit
 * @property {string[]} repos
 * @property {number | undefined} limitQuestions
 * @property {string} out
 * @property {string} results
 * @property {boolean} fresh
 * @property {boolean} reportOnly
 */

/** @returns {Options} */
function parseOptions() {
  const { values } = parseArgs({
    options: {
      set: { type: "string" },
      mirrors: { type: "string" },
      work: { type: "string" },
      umbra: { type: "string", multiple: true },
      "no-umbra": { type: "boolean", default: false },
      limit: { type: "string" },
      repo: { type: "string", multiple: true },
      "limit-questions": { type: "string" },
      out: { type: "string" },
      results: { type: "string" },
      fresh: { type: "boolean", default: false },
      "report-only": { type: "boolean", default: false },
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
  const cmds = values["no-umbra"] ? [] : (values.umbra ?? [DEFAULT_UMBRA]);
  const umbras = cmds.map((cmd, i) => {
    const hash = commandHash(cmd);
    return {
      key: `umbra:${hash}`,
      label: cmds.length > 1 ? `umbra ${i + 1}` : "umbra",
      cmd,
      home: umbraHome(work, cmd),
    };
  });
  const setFile = resolve(values.set ?? join(HERE, "questions.json"));
  // Another set than the default keeps its summary and results apart (`heldout.json` → `-heldout`).
  const tag = basename(setFile) === "questions.json" ? "" : `-${basename(setFile, ".json")}`;
  return {
    setFile,
    mirrors: resolve(values.mirrors ?? join(PROJECT_ROOT, "..", ".mirror")),
    work,
    umbras,
    limit: int(values.limit, "limit") ?? 50,
    repos: values.repo ?? [],
    limitQuestions: int(values["limit-questions"], "limit-questions"),
    out: resolve(values.out ?? join(PROJECT_ROOT, "bench", "out", `questions${tag}.json`)),
    results: resolve(values.results ?? join(work, "questions", `results${tag}.jsonl`)),
    fresh: values.fresh ?? false,
    reportOnly: values["report-only"] ?? false,
  };
}

/** @param {string} msg @returns {never} */
function usage(msg) {
  process.stderr.write(`questions: ${msg}\n${USAGE}`);
  process.exit(2);
}

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`${msg}\n`);
}

/**
 * The results so far, by `id \t system` (questions) and `repo \t system` (index runs); the last line wins.
 * @param {string} file
 */
async function loadResults(file) {
  /** @type {Map<string, QuestionRecord>} */
  const questions = new Map();
  /** @type {Map<string, IndexRecord>} */
  const indexes = new Map();
  for (const rec of /** @type {(QuestionRecord | IndexRecord)[]} */ (await readJsonl(file))) {
    if (rec.kind === "question") questions.set(`${rec.id}\t${rec.system}`, rec);
    else indexes.set(`${rec.repo}\t${rec.system}`, rec);
  }
  return { questions, indexes };
}

/** @param {UmbraSystem} u */
function umbraEnv(u) {
  return { ...process.env, UMBRA_HOME: u.home, UMBRA_ENGINE: "off" };
}

/**
 * Ask umbra one question.
 * @param {UmbraSystem} u
 * @param {string} dir
 * @param {import("./set.mjs").Question} q
 * @param {number} limit
 * @returns {Promise<QuestionRecord>}
 */
async function askUmbra(u, dir, q, limit) {
  const res = await runShell(
    u.cmd,
    ["search", q.question, "--root", dir, "--json", "--limit", String(limit)],
    {
      cwd: PROJECT_ROOT,
      env: umbraEnv(u),
      keepStderr: 4000,
    },
  );
  const base = {
    kind: /** @type {const} */ ("question"),
    id: q.id,
    repo: q.repo,
    system: u.key,
    ms: Math.round(res.ms),
  };
  const fail = (/** @type {string} */ error) => ({ ...base, file: null, symbol: null, topFiles: [], error });
  if (res.code !== 0)
    return fail(`search exited ${res.code}: ${res.stderr.trim().split("\n").slice(-3).join(" / ")}`);
  const parsed = parseSearchJson(res.stdout);
  if ("error" in parsed) return fail(parsed.error);
  const hits = parsed.hits;
  const files = foldToFiles(hits);
  return {
    ...base,
    file: fileRank(files, q.answers),
    symbol: symbolRank(hits, q.answers),
    topFiles: files.slice(0, TOP_KEPT),
    topHits: hits
      .slice(0, TOP_KEPT)
      .map(({ path, startLine, endLine, symbol }) => ({ path, startLine, endLine, symbol })),
  };
}

/**
 * Run the selected questions of one repository for every system that has not answered them yet.
 * @param {Options} opts
 * @param {import("./set.mjs").QuestionSet} set
 * @param {string} repo
 * @param {import("./set.mjs").Question[]} questions
 * @param {Awaited<ReturnType<typeof loadResults>>} results
 */
async function runRepo(opts, set, repo, questions, results) {
  const done = (/** @type {string} */ id, /** @type {string} */ system) => {
    const r = results.questions.get(`${id}\t${system}`);
    return r !== undefined && r.error === undefined;
  };
  const systems = [...Object.keys(BASELINES), ...opts.umbras.map((u) => u.key)];
  if (questions.every((q) => systems.every((s) => done(q.id, s)))) return;
  const pin = /** @type {import("./set.mjs").RepoPin} */ (set.repos[repo]);
  const dir = await ensureClone(opts, repo);
  const absent = new Set(await checkout(dir, pin.commit));
  const entries = (await trackedFiles(dir)).filter((e) => !absent.has(e.path));
  const record = async (/** @type {QuestionRecord | IndexRecord} */ rec) => {
    await appendFile(opts.results, `${JSON.stringify(rec)}\n`);
    if (rec.kind === "question") results.questions.set(`${rec.id}\t${rec.system}`, rec);
    else results.indexes.set(`${rec.repo}\t${rec.system}`, rec);
  };

  const corpus = new Bm25Corpus();
  for (const [system, { keep }] of Object.entries(BASELINES)) {
    const { docs } = await corpus.documents(
      dir,
      entries.filter((e) => keep(e.path)),
    );
    for (const q of questions) {
      if (done(q.id, system)) continue;
      const t = performance.now();
      const files = corpus.rank(docs, q.question).map((d) => d.path);
      await record({
        kind: "question",
        id: q.id,
        repo,
        system,
        file: fileRank(files, q.answers),
        topFiles: files.slice(0, TOP_KEPT),
        ms: Math.round(performance.now() - t),
      });
    }
  }

  for (const u of opts.umbras) {
    const todo = questions.filter((q) => !done(q.id, u.key));
    if (!todo.length) continue;
    const idx = await runShell(u.cmd, ["index", dir], {
      cwd: PROJECT_ROOT,
      env: umbraEnv(u),
      keepStderr: 4000,
    });
    const indexRec = /** @type {IndexRecord} */ ({
      kind: "index",
      repo,
      system: u.key,
      ms: Math.round(idx.ms),
    });
    if (idx.code !== 0)
      indexRec.error = `index exited ${idx.code}: ${idx.stderr.trim().split("\n").slice(-3).join(" / ")}`;
    await record(indexRec);
    log(`  ${repo}: ${u.label} index ${fmtMs(idx.ms)}${indexRec.error ? ` FAILED: ${indexRec.error}` : ""}`);
    if (indexRec.error) continue;
    for (const q of todo) {
      const rec = await askUmbra(u, dir, q, opts.limit);
      await record(rec);
      const show = (/** @type {number | null | undefined} */ r) =>
        r === null || r === undefined ? "-" : String(r);
      log(
        `  ${q.id}: file ${show(rec.file)} symbol ${show(rec.symbol)}${rec.error ? ` ERROR ${rec.error}` : ""}`,
      );
    }
  }
}

/** @param {number | null} x */
const f3 = (x) => (x === null ? "–" : x.toFixed(3));

/**
 * The summary JSON and the Markdown report.
 * @param {Options} opts
 * @param {import("./set.mjs").QuestionSet} set
 * @param {import("./set.mjs").Question[]} questions the selected ones
 * @param {Awaited<ReturnType<typeof loadResults>>} results
 * @param {number} wallMs
 */
function summarize(opts, set, questions, results, wallMs) {
  const systems = [
    ...opts.umbras.map((u) => ({ key: u.key, label: u.label, cmd: u.cmd })),
    ...Object.entries(BASELINES).map(([key, b]) => ({ key, label: b.label, cmd: null })),
  ];
  const repos = [...new Set(questions.map((q) => q.repo))];
  const scopes = [
    { name: "all", qs: questions },
    ...repos.map((r) => ({ name: r, qs: questions.filter((q) => q.repo === r) })),
  ];
  /** @type {Record<string, Record<string, ReturnType<typeof aggregate> & {missing: number, errors: number}>>} */
  const metrics = {};
  const rows = [];
  for (const scope of scopes) {
    const perSystem =
      /** @type {Record<string, ReturnType<typeof aggregate> & {missing: number, errors: number}>} */ ({});
    metrics[scope.name] = perSystem;
    for (const s of systems) {
      const recs = scope.qs.flatMap((q) => {
        const r = results.questions.get(`${q.id}\t${s.key}`);
        return r ? [r] : [];
      });
      if (!recs.length) continue;
      const m = {
        ...aggregate(recs),
        missing: scope.qs.length - recs.length,
        errors: recs.filter((r) => r.error).length,
      };
      perSystem[s.key] = m;
      rows.push([
        scope.name,
        s.label,
        String(m.n) + (m.errors ? ` (${m.errors} err)` : "") + (m.missing ? ` (${m.missing} to run)` : ""),
        f3(m.file1),
        f3(m.file5),
        f3(m.symbol1),
        f3(m.symbol5),
        f3(m.mrr),
      ]);
    }
  }

  /** How umbra's answers go wrong: what the first file is, and how many files the first 5 hits span. */
  const diagnostics = opts.umbras.map((u) => {
    const recs = questions.flatMap((q) => {
      const r = results.questions.get(`${q.id}\t${u.key}`);
      return r && !r.error ? [r] : [];
    });
    /** @type {Record<string, number>} */
    const firstKind = { code: 0, test: 0, docs: 0, other: 0 };
    for (const r of recs)
      if (r.topFiles[0]) firstKind[fileKind(r.topFiles[0])] = (firstKind[fileKind(r.topFiles[0])] ?? 0) + 1;
    const spans = recs.map((r) => new Set((r.topHits ?? []).slice(0, 5).map((h) => h.path)).size);
    const search = recs.map((r) => r.ms);
    const index = repos.flatMap((repo) => {
      const i = results.indexes.get(`${repo}\t${u.key}`);
      return i ? [{ repo, ms: i.ms, error: i.error }] : [];
    });
    return {
      system: u.key,
      label: u.label,
      cmd: u.cmd,
      firstFileKind: firstKind,
      oneFileFillsTop5: spans.filter((n) => n === 1).length,
      meanFilesInTop5Hits: spans.length ? spans.reduce((a, b) => a + b, 0) / spans.length : null,
      searchP50Ms: percentile(search, 50),
      searchP95Ms: percentile(search, 95),
      index,
    };
  });

  const lines = [
    `## Questions benchmark — ${questions.length} questions over ${repos.length} repositories`,
    "",
    markdownTable(["scope", "system", "n", "file@1", "file@5", "symbol@1", "symbol@5", "MRR (file)"], rows, [
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
    "file@k: an answer file among the first k files (hits folded to files). symbol@k: one of the first k hits " +
      "lies in an answer file and overlaps an answer function's lines. BM25 ranks whole files (no symbol level).",
  ];
  for (const d of diagnostics) {
    const n = Object.values(d.firstFileKind).reduce((a, b) => a + b, 0);
    lines.push(
      "",
      `${d.label} (\`${d.cmd}\`): first file is code ${d.firstFileKind.code}/${n}, a test ${d.firstFileKind.test}, ` +
        `docs ${d.firstFileKind.docs}, other ${d.firstFileKind.other}; the first 5 hits span ` +
        `${d.meanFilesInTop5Hits === null ? "–" : d.meanFilesInTop5Hits.toFixed(2)} files on average, one file only on ` +
        `${d.oneFileFillsTop5} questions; search p50 / p95 ${fmtMs(d.searchP50Ms)} / ${fmtMs(d.searchP95Ms)} (CLI process); ` +
        `index ${d.index.map((i) => `${i.repo} ${i.error ? "FAILED" : fmtMs(i.ms)}`).join(", ") || "–"}.`,
    );
  }
  lines.push("", `wall time of this run: ${fmtMs(wallMs)}`);
  const summary = {
    generatedAt: new Date().toISOString(),
    set: relative(PROJECT_ROOT, opts.setFile),
    repos: Object.fromEntries(repos.map((r) => [r, set.repos[r]])),
    config: {
      searchLimit: opts.limit,
      bm25: {
        k1: 1.2,
        b: 0.75,
        tokenizer: "lower-cased [\\p{L}\\p{N}_]+ words (bench/retrieval/bm25.mjs)",
        documents: Object.fromEntries(Object.entries(BASELINES).map(([k, b]) => [k, b.label])),
      },
    },
    systems,
    metrics,
    diagnostics,
    wallMs: Math.round(wallMs),
    perQuestion: questions.map((q) => ({
      id: q.id,
      repo: q.repo,
      question: q.question,
      answers: q.answers.map((a) => `${a.path}:${a.lines[0]}-${a.lines[1]} ${a.symbol}`),
      results: Object.fromEntries(
        systems.flatMap((s) => {
          const r = results.questions.get(`${q.id}\t${s.key}`);
          return r
            ? [
                [
                  s.key,
                  {
                    file: r.file,
                    symbol: r.symbol,
                    top: r.topHits?.slice(0, 5) ?? r.topFiles.slice(0, 5),
                    error: r.error,
                  },
                ],
              ]
            : [];
        }),
      ),
    })),
  };
  return { summary, markdown: `${lines.join("\n")}\n` };
}

async function main() {
  const opts = parseOptions();
  const started = performance.now();
  const set = await loadSet(opts.setFile);
  let questions = set.questions.filter(
    (q) => !opts.repos.length || opts.repos.some((r) => q.repo.includes(r)),
  );
  if (opts.limitQuestions !== undefined) questions = questions.slice(0, opts.limitQuestions);
  if (!questions.length) usage("no question matches the filters");

  await mkdir(dirname(opts.results), { recursive: true });
  if (opts.fresh && !opts.reportOnly) await rm(opts.results, { force: true });
  const results = await loadResults(opts.results);
  if (!opts.reportOnly) {
    for (const u of opts.umbras) await preflightUmbra(u.cmd, PROJECT_ROOT);
    const repos = [...new Set(questions.map((q) => q.repo))];
    for (const repo of repos) {
      log(`questions: ${repo} at ${set.repos[repo]?.commit.slice(0, 12)}`);
      await runRepo(
        opts,
        set,
        repo,
        questions.filter((q) => q.repo === repo),
        results,
      );
    }
  }
  const { summary, markdown } = summarize(opts, set, questions, results, performance.now() - started);
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFile(opts.out, `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(markdown);
  log(`questions: summary written to ${relative(process.cwd(), opts.out) || opts.out}`);
}

main().catch((err) => {
  process.stderr.write(`questions: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
