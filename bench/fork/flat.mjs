#!/usr/bin/env node
// @ts-check
/**
 * Fork stays flat (issue 13: "fork still flat and under 50 ms at 1k, 100k and 500k files, next to `cp -r`
 * and `git worktree` in the same run"). The product path only: fork() and discard() from dist/shadow as the
 * engine calls them (a private UMBRA_HOME and config, the configured default mode `auto`; the mode it chose
 * is reported), whatever fork() does inside. In the same run, on the same folders:
 *   - `cp -r` of the folder (the copy removed after each run, untimed);
 *   - `git worktree add --detach` from a git repository holding the folder with every file committed
 *     (a copy of the folder, made and committed once; only `worktree add` is timed, its removal is not);
 *   - `umbra run --root TREE --shadow -- true` end to end, a fresh CLI process each time (Node start-up,
 *     sandbox, fork, discard), next to `umbra run --root TREE -- true` in the same rounds.
 * Folders (bench/fork/tree.mjs: source files in nested folders and a node_modules-like folder) are
 * generated once into --cache (default /tmp/umbra-bench-fork; complete when their manifest exists) and
 * reused; generation is not timed. A size whose folders do not fit the free disk is skipped and said so.
 * Usage: node bench/fork/flat.mjs [--sizes 1000,100000,500000] [--runs 20] [--copy-runs N] [--cli-runs 5]
 *        [--cache DIR] [--json FILE] [--md FILE]
 * --copy-runs: `cp -r` and `git worktree add` runs (default 5, 3 at 500,000 files). Prints a markdown
 * table (median / p90); --md and --json files are rewritten after every step, so an interrupted run keeps
 * what it measured. Needs `npm run build`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { run, runChecked } from "../lib/proc.mjs";
import { ensureTree, SIZES } from "./tree.mjs";

const ROOT = resolve(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,100000,500000" },
    runs: { type: "string", default: "20" },
    "copy-runs": { type: "string" },
    "cli-runs": { type: "string", default: "5" },
    cache: { type: "string", default: "/tmp/umbra-bench-fork" },
    json: { type: "string" },
    md: { type: "string" },
  },
});
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
/** "1000" or "1k" → the tree's size name. */
const NAMES = /** @type {Record<string, keyof typeof SIZES>} */ ({
  1000: "1k",
  "1k": "1k",
  100000: "100k",
  "100k": "100k",
  500000: "500k",
  "500k": "500k",
});
const sizes = values.sizes.split(",").map((s) => {
  const name = NAMES[s.trim()];
  if (!name) throw new Error(`unknown size ${s} (1000, 100000 or 500000)`);
  return name;
});
const RUNS = Math.max(1, Number(values.runs));
const CLI_RUNS = Math.max(1, Number(values["cli-runs"]));
const copyRuns = (/** @type {keyof typeof SIZES} */ size) =>
  Math.max(1, Number(values["copy-runs"] ?? (size === "500k" ? 3 : 5)));
if (!existsSync(join(ROOT, "dist", "shadow", "index.js")) || !existsSync(CLI)) {
  log("dist/ is missing: run npm run build first");
  process.exit(2);
}
const { fork } = await import(join(ROOT, "dist", "shadow", "index.js"));

/** Nearest-rank percentile of samples (ms). */
const percentile = (/** @type {number[]} */ xs, /** @type {number} */ p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
};
async function timed(/** @type {() => Promise<unknown>} */ body) {
  const started = performance.now();
  await body();
  return performance.now() - started;
}
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const gb = (/** @type {number} */ bytes) =>
  bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`;
const freeBytes = (/** @type {string} */ dir) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};
/**
 * Disk one size needs at most: the folder, its git copy and that copy's objects (kept in the cache), and
 * one `cp -r` or worktree copy at a time; each about (files × 4 KiB blocks + bytes).
 */
const needBytes = (/** @type {keyof typeof SIZES} */ size) =>
  4 * (SIZES[size].files * 4096 + SIZES[size].bytes);

const cache = resolve(values.cache);
mkdirSync(cache, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), "umbra-bench-flat-"));
const env = {
  ...process.env,
  UMBRA_HOME: join(scratch, "data"),
  XDG_CONFIG_HOME: join(scratch, "config"),
};
const dest = join(cache, "dest");
const git = (/** @type {string} */ repo, /** @type {string[]} */ args) =>
  runChecked("git", ["-C", repo, "-c", "user.email=bench@umbra", "-c", "user.name=bench", ...args]);

/** The folder committed in a git repository of its own (a copy, made once; complete with its marker). */
async function ensureRepo(/** @type {string} */ tree, /** @type {keyof typeof SIZES} */ size) {
  const repo = join(cache, `repo-${size}`);
  const marker = `${repo}.complete`;
  if (existsSync(marker)) return repo;
  log(`  committing a copy of the ${size} folder in ${repo} (once) ...`);
  rmSync(repo, { recursive: true, force: true });
  await runChecked("cp", ["-r", tree, repo]);
  await git(repo, ["init", "-q"]);
  await git(repo, ["add", "-A"]);
  // The commit packs the objects (gc --auto), as in a real repository: waited for, before any timing.
  await git(repo, ["-c", "gc.autoDetach=false", "commit", "-qm", "tree"]);
  writeFileSync(marker, "");
  return repo;
}

const fmt = (/** @type {number} */ ms) =>
  ms < 10 ? `${ms.toFixed(1)} ms` : ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
const cell = (/** @type {number[] | undefined} */ xs) =>
  !xs
    ? "–"
    : xs.length === 1
      ? `${fmt(xs[0] ?? NaN)} (1 run)`
      : `${fmt(percentile(xs, 0.5))} / ${fmt(percentile(xs, 0.9))} (${xs.length})`;

const startedAt = new Date().toISOString();
const loadBefore = load();
log(`load average ${loadBefore}; cache ${cache}: ${gb(freeBytes(cache))} free`);
/** @type {Record<string, Record<string, number[]>>} size → row → samples (ms) */
const samples = {};
/** @type {Record<string, { files: number, bytes: number, mode: string, warning?: string }>} */
const info = {};
/** @type {string[]} */
const skipped = [];
let firstFork = true;

for (const size of sizes) {
  const free = freeBytes(cache);
  const repoReady = existsSync(join(cache, `repo-${size}.complete`));
  if (!repoReady && free < needBytes(size)) {
    const line = `${size}: skipped, needs ~${gb(needBytes(size))} of disk in ${cache}, ${gb(free)} free`;
    log(line);
    skipped.push(line);
    continue;
  }
  const { dir: tree, manifest } = ensureTree(cache, size, log);
  log(`== ${size}: ${manifest.files} files, ${gb(manifest.bytes)} (load ${load()})`);
  /** @type {Record<string, number[]>} */
  const rows = {};
  samples[size] = rows;
  const add = (/** @type {string} */ name, /** @type {number} */ ms) => {
    rows[name] ??= [];
    rows[name].push(ms);
  };

  // umbra fork() + discard(): the first fork of this process also probes which modes work here.
  if (firstFork) {
    const started = performance.now();
    const branch = await fork(tree, { env });
    add("umbra fork(), first in the process (mode probe)", performance.now() - started);
    await branch.discard();
    firstFork = false;
  }
  let mode = "";
  let warning;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const branch = await fork(tree, { env });
    add("umbra fork()", performance.now() - started);
    mode = branch.mode;
    warning = branch.warning;
    add("umbra discard()", await timed(() => branch.discard()));
  }
  info[size] = { files: manifest.files, bytes: manifest.bytes, mode, ...(warning ? { warning } : {}) };
  log(`  fork mode: ${mode}${warning ? ` (${warning})` : ""}`);
  save();

  // The CLI as the user meets it: fresh processes, interleaved. One untimed warm-up of each first.
  const cli = (/** @type {string[]} */ args) => [CLI, "run", "--root", tree, ...args, "--", "true"];
  const commands = /** @type {[string, string[]][]} */ ([
    ["umbra run -- true (CLI, no branch)", cli([])],
    ["umbra run --shadow -- true (CLI)", cli(["--shadow"])],
  ]);
  for (let i = 0; i < CLI_RUNS + 1; i++)
    for (const [name, argv] of commands) {
      const res = await run(process.execPath, argv, { env });
      if (res.code !== 0) throw new Error(`${name} exited ${res.code}: ${res.stderr.trim().slice(-500)}`);
      if (i > 0) add(name, res.ms);
    }
  save();

  // Baselines last (the slowest): a kill during them keeps the figures above.
  const repo = await ensureRepo(tree, size);
  for (let i = 0; i < copyRuns(size); i++) {
    rmSync(dest, { recursive: true, force: true });
    add("cp -r", await timed(() => runChecked("cp", ["-r", tree, dest])));
    rmSync(dest, { recursive: true, force: true });
    add(
      "git worktree add",
      await timed(() => git(repo, ["worktree", "add", "-q", "--detach", dest, "HEAD"])),
    );
    await git(repo, ["worktree", "remove", "--force", dest]);
    save();
    log(`  copy round ${i + 1}/${copyRuns(size)} done`);
  }
}
rmSync(dest, { recursive: true, force: true });
rmSync(scratch, { recursive: true, force: true });
process.stdout.write(save());

/** The markdown table of the sizes measured so far; also written to --md and --json when given. */
function save() {
  const done = Object.keys(samples);
  const names = [...new Set(done.flatMap((s) => Object.keys(samples[s] ?? {})))];
  const forkMedians = done.map((s) => percentile(samples[s]?.["umbra fork()"] ?? [], 0.5));
  const forkP90 = done.map((s) => percentile(samples[s]?.["umbra fork()"] ?? [], 0.9));
  const loadAfter = load();
  const markdown = [
    `Fork benchmark ${startedAt}: ${process.platform} ${release()}, ${cpus().length} CPUs, node ${process.version}; ` +
      `load average (1/5/15 min) ${loadBefore} at the start, ${loadAfter} at the end.`,
    `Mode chosen by fork() (auto): ${done.map((s) => `${s} ${info[s]?.mode}`).join(", ")}.`,
    "",
    `| operation: median / p90 (runs) | ${done.map((s) => `${info[s]?.files.toLocaleString("en")} files (${gb(info[s]?.bytes ?? 0)})`).join(" | ")} |`,
    `| --- |${done.map(() => " ---: |").join("")}`,
    ...names.map((n) => `| ${n} | ${done.map((s) => cell(samples[s]?.[n])).join(" | ")} |`),
    "",
    `umbra fork() median ${forkMedians.map(fmt).join(", ")}, p90 ${forkP90.map(fmt).join(", ")}: ` +
      `under 50 ms at every size: ${forkP90.every((ms) => ms < 50) ? "yes" : "NO"}.`,
    ...skipped.map((line) => `Skipped: ${line}.`),
    "",
  ].join("\n");
  if (values.md) writeFileSync(values.md, markdown);
  if (values.json)
    writeFileSync(
      values.json,
      `${JSON.stringify({ startedAt, loadBefore, loadAfter, info, skipped, samples }, null, 2)}\n`,
    );
  return markdown;
}
