#!/usr/bin/env node
// @ts-check
/**
 * Start-up cost of the built CLI as a fresh process, next to `node -e 0` in the same run:
 * `umbra --version`, `umbra --help`, and `umbra search --json QUERY` in warm (already indexed) workspaces —
 * a copy of examples/ and an export of this checkout's HEAD (src/, test/, bench/, ...: a few hundred files).
 * Every variant is started the same way (spawn, wait for exit), interleaved round-robin so that a busy
 * machine slows all of them alike; medians of --runs runs (default 15).
 * Targets (issue 11): --version and --help within 1.5x of `node -e 0`; search under 300 ms wall.
 * Usage: node bench/cli/run.mjs [--runs 15] [--repo DIR ...]. Needs `npm run build` first.
 * Writes bench/out/cli.{json,md} and prints the markdown table.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { run, runChecked } from "../lib/proc.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: { runs: { type: "string", default: "15" }, repo: { type: "string", multiple: true } },
});
const RUNS = Math.max(5, Number(values.runs));
/** Queries of each kind the query parser tells apart: prose, identifiers, a path. */
const QUERIES = ["where is the total of an invoice computed", "parseConfig loadConfig", "src/cli/main.ts"];

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-cli-")));
const env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };
try {
  /** @type {{ name: string, dir: string }[]} */
  const workspaces = [];
  const examples = join(base, "examples");
  cpSync(join(ROOT, "examples"), examples, { recursive: true });
  workspaces.push({ name: "examples/", dir: examples });
  const checkout = join(base, "umbra");
  mkdirSync(checkout);
  execFileSync("sh", ["-c", `git -C "$0" archive HEAD | tar -x -C "$1"`, ROOT, checkout]);
  workspaces.push({ name: "umbra checkout", dir: checkout });
  for (const repo of values.repo ?? [])
    workspaces.push({ name: basename(resolve(repo)), dir: resolve(repo) });

  /** @type {{ label: string, cmd: string, args: string[], files?: number }[]} */
  const variants = [
    { label: "node -e 0", cmd: process.execPath, args: ["-e", "0"] },
    { label: "umbra --version", cmd: process.execPath, args: [CLI, "--version"] },
    { label: "umbra --help", cmd: process.execPath, args: [CLI, "--help"] },
  ];
  for (const ws of workspaces) {
    const report = JSON.parse(
      (await runChecked(process.execPath, [CLI, "index", ws.dir, "--json"], { env })).stdout,
    );
    for (const [i, query] of QUERIES.entries()) {
      variants.push({
        label: `umbra search (${ws.name}, query ${i + 1})`,
        cmd: process.execPath,
        args: [CLI, "search", "--root", ws.dir, "--json", query],
        files: report.files,
      });
    }
  }

  /** @type {number[][]} */
  const times = variants.map(() => []);
  for (let round = 0; round < RUNS; round++) {
    for (const [i, variant] of variants.entries()) {
      const result = await run(variant.cmd, variant.args, { env });
      if (result.code !== 0)
        throw new Error(`${variant.label} exited ${result.code}: ${result.stderr.trim()}`);
      times[i]?.push(result.ms);
    }
  }
  /** @param {number[]} list */
  const median = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  };
  const baseline = median(times[0] ?? []);
  const rows = variants.map((variant, i) => ({
    label: variant.label,
    ...(variant.files !== undefined ? { files: variant.files } : {}),
    medianMs: Math.round(median(times[i] ?? [])),
    ratio: Number((median(times[i] ?? []) / baseline).toFixed(2)),
  }));
  const md = [
    `| command (${RUNS} runs each, interleaved) | median wall | × node -e 0 |`,
    "|---|---:|---:|",
    ...rows.map(
      (r) => `| ${r.label}${r.files ? ` — ${r.files} files` : ""} | ${r.medianMs} ms | ${r.ratio} |`,
    ),
  ].join("\n");
  const out = join(ROOT, "bench", "out");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "cli.json"),
    `${JSON.stringify({ runs: RUNS, node: process.version, rows }, null, 2)}\n`,
  );
  writeFileSync(join(out, "cli.md"), `${md}\n`);
  console.log(md);
} finally {
  rmSync(base, { recursive: true, force: true });
}
