#!/usr/bin/env node
// @ts-check
/**
 * Cost of the git guard around `umbra run` in a folder of N files (default 100,000, in 1,000 folders,
 * a git repository with 3 nested repositories). Measured in the same run, medians of --runs runs:
 *   - baseline: findWorkspacePaths(), the walk resolvePolicy already did before the guard (it now also
 *     collects the `.git` entries, at no extra readdir);
 *   - gitControlPaths(): what the guard adds before the command (git rev-parse + git config per repo);
 *   - checkGitAfterRun(): what it adds after the command (a second walk for new `.git` entries);
 *   - resolvePolicy(): the whole policy, guard included.
 * Usage: node bench/git-guard/run.mjs [--files 100000] [--runs 5]. Needs `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const ROOT = join(import.meta.dirname, "..", "..");
const { values } = parseArgs({
  options: { files: { type: "string", default: "100000" }, runs: { type: "string", default: "5" } },
});
const FILES = Number(values.files);
const RUNS = Math.max(3, Number(values.runs));

const { findWorkspacePaths, resolvePolicy } = await import(join(ROOT, "dist", "sandbox", "policy.js"));
const { gitControlPaths, checkGitAfterRun } = await import(join(ROOT, "dist", "sandbox", "git-guard.js"));
const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-git-")));
const ws = join(base, "ws");
const env = { ...process.env, UMBRA_HOME: join(base, "data"), GIT_CONFIG_NOSYSTEM: "1" };
mkdirSync(ws);
execFileSync("git", ["init", "-q", ws]);
const perDir = 100;
for (let d = 0; d < FILES / perDir; d++) {
  const dir = join(ws, `d${d % 10}`, `s${d}`);
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < perDir; f++) writeFileSync(join(dir, `f${f}.txt`), "x\n");
}
for (const name of ["a", "b", "c"]) execFileSync("git", ["init", "-q", join(ws, "nested", name)]);

/** @param {() => Promise<unknown>} fn */
async function median(fn) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const config = loadConfig({ workspaceRoot: ws, env });
const found = await findWorkspacePaths(ws);
const nested = found.gitEntries.filter((rel) => rel !== ".git").map((rel) => join(ws, rel));
const { git } = await resolvePolicy({ workspace: ws, config: config.sandbox, env });
const rows = [
  ["findWorkspacePaths (baseline walk)", await median(() => findWorkspacePaths(ws))],
  ["gitControlPaths (before the command)", await median(() => gitControlPaths(ws, nested, env))],
  ["checkGitAfterRun (after the command)", await median(() => checkGitAfterRun(git, env))],
  [
    "resolvePolicy (all, guard included)",
    await median(() => resolvePolicy({ workspace: ws, config: config.sandbox, env })),
  ],
];
console.log(`| step (${FILES} files, ${found.gitEntries.length} .git entries) | median ms |`);
console.log("| --- | ---: |");
for (const [name, ms] of rows) console.log(`| ${name} | ${Number(ms).toFixed(1)} |`);
rmSync(base, { recursive: true, force: true });
