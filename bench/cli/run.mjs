#!/usr/bin/env node
// @ts-check
/**
 * Start-up cost of the built CLI as a fresh process, next to `node -e 0` in the same run:
 * `umbra --version`, `umbra --help`, and `umbra search --json QUERY` in warm (already indexed) workspaces —
 * a copy of examples/ and an export of this checkout's HEAD (src/, test/, bench/, ...: a few hundred files).
 * Every variant is started the same way (spawn, wait for exit), interleaved round-robin so that a busy
 * machine slows all of them alike; medians of --runs runs (default 15).
 * CPU = user + system time of the process (all its threads), from /usr/bin/time when it is installed
 * (every variant, `node -e 0` too, then runs under it): on a loaded machine it moves far less than wall.
 * Targets (issue 11): --version and --help within 1.5x of `node -e 0`; search under 300 ms wall.
 * Usage: node bench/cli/run.mjs [--runs 15] [--repo DIR ...] [--before OLD/dist/cli/main.js]. Needs
 * `npm run build` first. --before adds the same rows for another build of the CLI (e.g. an older commit's),
 * searching the same indexes.
 * Writes bench/out/cli.{json,md} and prints the markdown table.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { run, runChecked } from "../lib/proc.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "15" },
    repo: { type: "string", multiple: true },
    before: { type: "string" },
  },
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

  /** @type {Map<string, number>} */
  const files = new Map();
  for (const ws of workspaces) {
    const report = await runChecked(process.execPath, [CLI, "index", ws.dir, "--json"], { env });
    files.set(ws.dir, JSON.parse(report.stdout).files);
  }
  /** @type {{ label: string, cmd: string, args: string[], files?: number }[]} */
  const variants = [{ label: "node -e 0", cmd: process.execPath, args: ["-e", "0"] }];
  const clis = [{ name: "umbra", main: CLI }];
  if (values.before) clis.push({ name: "umbra (before)", main: resolve(values.before) });
  for (const { name, main } of clis) {
    variants.push(
      { label: `${name} --version`, cmd: process.execPath, args: [main, "--version"] },
      { label: `${name} --help`, cmd: process.execPath, args: [main, "--help"] },
    );
    for (const ws of workspaces) {
      for (const [i, query] of QUERIES.entries()) {
        variants.push({
          label: `${name} search (${ws.name}, query ${i + 1})`,
          cmd: process.execPath,
          args: [main, "search", "--root", ws.dir, "--json", query],
          files: files.get(ws.dir),
        });
      }
    }
  }

  const TIME = "/usr/bin/time";
  const timed = existsSync(TIME);
  const loadBefore = loadavg()[0] ?? 0;
  /** @type {number[][]} */
  const times = variants.map(() => []);
  /** @type {number[][]} CPU ms (user + system) of each run, when /usr/bin/time is there */
  const cpu = variants.map(() => []);
  /** @type {Map<string, string>} the output of each variant's first run, by label */
  const outputs = new Map();
  for (let round = 0; round < RUNS; round++) {
    for (const [i, variant] of variants.entries()) {
      const result = timed
        ? await run(TIME, ["-f", "umbra-bench-cpu %U %S", variant.cmd, ...variant.args], { env })
        : await run(variant.cmd, variant.args, { env });
      if (result.code !== 0)
        throw new Error(`${variant.label} exited ${result.code}: ${result.stderr.trim()}`);
      times[i]?.push(result.ms);
      const used = /umbra-bench-cpu ([\d.]+) ([\d.]+)\s*$/.exec(result.stderr);
      if (used) cpu[i]?.push((Number(used[1]) + Number(used[2])) * 1000);
      if (round === 0) outputs.set(variant.label, result.stdout);
    }
  }
  // with --before: does each search print exactly what the other build prints?
  const compared = [...outputs.keys()].filter((label) => label.startsWith("umbra (before) search"));
  const identical = compared.filter(
    (label) => outputs.get(label) === outputs.get(label.replace("umbra (before)", "umbra")),
  );
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
    ...(timed ? { medianCpuMs: Math.round(median(cpu[i] ?? [])) } : {}),
  }));
  const md = [
    `| command (${RUNS} runs each, interleaved) | median wall | × node -e 0 |${timed ? " median CPU |" : ""}`,
    `|---|---:|---:|${timed ? "---:|" : ""}`,
    ...rows.map(
      (r) =>
        `| ${r.label}${r.files ? ` — ${r.files} files` : ""} | ${r.medianMs} ms | ${r.ratio} |${timed ? ` ${r.medianCpuMs} ms |` : ""}`,
    ),
    ...(compared.length
      ? ["", `Search output identical to the --before build: ${identical.length}/${compared.length} queries.`]
      : []),
    "",
    `Load average (1 min): ${loadBefore.toFixed(2)} before the timed runs, ${(loadavg()[0] ?? 0).toFixed(2)} after.`,
  ].join("\n");
  const out = join(ROOT, "bench", "out");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "cli.json"),
    `${JSON.stringify({ runs: RUNS, node: process.version, rows, identical: `${identical.length}/${compared.length}` }, null, 2)}\n`,
  );
  writeFileSync(join(out, "cli.md"), `${md}\n`);
  console.log(md);
} finally {
  rmSync(base, { recursive: true, force: true });
}
