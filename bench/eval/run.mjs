#!/usr/bin/env node
// @ts-check
/**
 * Overhead of the eval harness per task. For each task of a set (default examples/eval), with the
 * oracle agent: (a) the harness — copy the starting repository, fork a grading branch, write the changes,
 * restore the tests, run the visible and hidden tests sandboxed in the branch — through runTask(); (b) the
 * same two test commands run directly (unsandboxed, no branch) in a plain copy with the solution applied.
 * Interleaved, medians of --runs runs (default 10). Overhead = median(a) - median(b).
 * Usage: node bench/eval/run.mjs [--tasks DIR] [--runs 10]. Needs `npm run build` first.
 * Writes bench/out/eval.{json,md} and prints the markdown table.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = join(import.meta.dirname, "..", "..");
const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: join(ROOT, "examples", "eval") },
    runs: { type: "string", default: "10" },
  },
});
const RUNS = Math.max(3, Number(values.runs));
const { loadTaskSet, materializeStart } = await import(join(ROOT, "dist", "eval", "task.js"));
const { runTask } = await import(join(ROOT, "dist", "eval", "runner.js"));
const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));

const home = mkdtempSync(join(tmpdir(), "umbra-bench-eval-home-"));
const env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
const config = loadConfig({ workspaceRoot: home, env });
const tasks = await loadTaskSet(resolve(values.tasks));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function direct(task) {
  const base = mkdtempSync(join(tmpdir(), "umbra-bench-eval-"));
  const dir = join(base, "repo");
  try {
    await materializeStart(task, dir);
    for (const [path, content] of Object.entries(task.solution ?? {})) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content ?? "");
    }
    const started = performance.now();
    const visible = spawnSync("sh", ["-c", task.visible.command], { cwd: dir, encoding: "utf8" });
    for (const [path, content] of Object.entries(task.hidden.files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    const hidden = spawnSync("sh", ["-c", task.hidden.command], { cwd: dir, encoding: "utf8" });
    if (visible.status !== 0 || hidden.status !== 0)
      throw new Error(`${task.id}: tests failed when run directly`);
    return performance.now() - started;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const rows = [];
for (const task of tasks) {
  const harness = [];
  const plain = [];
  const parts = { setup: [], tests: [] };
  for (let i = 0; i < RUNS; i++) {
    const { result, timing } = await runTask(task, { tasks: [task], agent: "oracle", config, env });
    if (!result.passed) throw new Error(`${task.id}: the oracle failed in the harness`);
    harness.push(timing.wallMs);
    parts.setup.push(timing.gradeSetupMs);
    parts.tests.push(timing.visibleTestMs + timing.hiddenTestMs);
    plain.push(await direct(task));
  }
  rows.push({
    task: task.id,
    harnessMs: Math.round(median(harness)),
    directMs: Math.round(median(plain)),
    overheadMs: Math.round(median(harness) - median(plain)),
    gradeSetupMs: Math.round(median(parts.setup)),
    sandboxedTestsMs: Math.round(median(parts.tests)),
  });
}
rmSync(home, { recursive: true, force: true });

const md = [
  `umbra eval harness overhead per task (oracle agent, ${RUNS} runs, medians, ms)`,
  "",
  "| task | harness (copy + branch + sandboxed tests) | tests run directly | overhead | of which branch setup | sandboxed tests |",
  "| --- | --: | --: | --: | --: | --: |",
  ...rows.map(
    (r) =>
      `| ${r.task} | ${r.harnessMs} | ${r.directMs} | ${r.overheadMs} | ${r.gradeSetupMs} | ${r.sandboxedTestsMs} |`,
  ),
  "",
].join("\n");
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "eval.json"), `${JSON.stringify({ runs: RUNS, rows }, null, 2)}\n`);
writeFileSync(join(ROOT, "bench", "out", "eval.md"), md);
process.stdout.write(md);
