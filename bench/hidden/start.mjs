#!/usr/bin/env node
// @ts-check
/**
 * Start-up of `umbra run` in a big workspace (issue 12: "`umbra run` in a folder with 100,000 files starts
 * in under 1 s"). A workspace of --files files (default 100,000: src/ in folders of 1,000, a README, a
 * .gitignore and a .umbraignore that hides one file) and, in the same run, interleaved round-robin,
 * medians of --runs (default 9), wall time of fresh processes:
 *   - `node -e 0` and `umbra --version` (the CLI's own start-up), for reference;
 *   - `umbra run --root WS -- true` with the walk cached (the folders unchanged since the last run);
 *   - the same as a first run: the walk's cache (UMBRA_HOME/sandbox/walk) removed before each, so every
 *     folder is listed and matched again.
 * With --before OLD/dist/cli/main.js (another build, e.g. an older commit's, with its own helper), its two
 * `umbra run` rows too, in the same rounds (its walk cache is its own data directory).
 * With --hard-link, one more row: the walk cached, and the hidden file given another name (a hard link)
 * outside the workspace before each of its runs (removed before the others), so that the sandbox walks
 * the whole workspace looking for names of it there (the worst case: no name found, no early stop).
 * Usage: node bench/hidden/start.mjs [--runs 9] [--files 100000] [--before CLI] [--hard-link]. Needs
 * `npm run build`.
 * Writes bench/out/start.{json,md} and prints the markdown table.
 */
import { existsSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runChecked } from "../lib/proc.mjs";
import { timeRows } from "../lib/stats.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "9" },
    files: { type: "string", default: "100000" },
    before: { type: "string" },
    "hard-link": { type: "boolean", default: false },
  },
});
const RUNS = Math.max(3, Number(values.runs));
const FILES = Math.max(1000, Number(values.files));

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-start-")));
const env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };
const ws = join(base, "ws");
mkdirSync(ws);
writeFileSync(join(ws, "README.md"), "a big workspace\n");
writeFileSync(join(ws, ".gitignore"), "node_modules/\n");
writeFileSync(join(ws, ".umbraignore"), "secret.env\n");
writeFileSync(join(ws, "secret.env"), "KEY=1\n");
for (let i = 0; i < FILES; i++) {
  const dir = join(ws, "src", `d${Math.floor(i / 1000)}`);
  if (i % 1000 === 0) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `f${i}.ts`), `export const f${i} = ${i};\n`);
}

/** The two `umbra run` rows of a build, each with its own data directory. */
function runRows(/** @type {string} */ cli, /** @type {string} */ label) {
  const own = { ...env, UMBRA_HOME: join(base, `home-${label}`) };
  const argv = [process.execPath, cli, "run", "--root", ws, "--", "true"];
  const walkCache = join(own.UMBRA_HOME, "sandbox", "walk");
  return {
    [`${label}umbra run -- true (walk cached)`]: { argv, env: own },
    [`${label}umbra run -- true (first run: walk not cached)`]: {
      argv,
      env: own,
      before: () => rmSync(walkCache, { recursive: true, force: true }),
    },
  };
}
/** The hard link of --hard-link: there for its row's runs only. */
const outsideLink = join(base, "outside-link.env");
/** @param {boolean} wanted */
function hardLink(wanted) {
  if (wanted && !existsSync(outsideLink)) linkSync(join(ws, "secret.env"), outsideLink);
  if (!wanted) rmSync(outsideLink, { force: true });
}
/** @type {Record<string, { argv: string[], env?: NodeJS.ProcessEnv, before?: () => void, linked?: boolean }>} */
const variants = {
  "node -e 0": { argv: [process.execPath, "-e", "0"] },
  "umbra --version": { argv: [process.execPath, CLI, "--version"] },
  ...runRows(CLI, ""),
  ...(values.before ? runRows(values.before, "before: ") : {}),
  ...(values["hard-link"]
    ? {
        "umbra run -- true (walk cached; the hidden file has a hard link outside the workspace)": {
          argv: [process.execPath, CLI, "run", "--root", ws, "--", "true"],
          env: { ...env, UMBRA_HOME: join(base, "home-linked") },
          linked: true,
        },
      }
    : {}),
};
/** @type {Record<string, number[]>} */
const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const load = [loadavg()[0]];
try {
  // warm-up: the page cache, and the walk's cache of each cached variant
  for (const { argv, env: own, linked } of Object.values(variants)) {
    hardLink(Boolean(linked));
    const [cmd = "", ...args] = argv;
    await runChecked(cmd, args, { env: own ?? env });
  }
  for (let i = 0; i < RUNS; i++) {
    for (const [name, { argv, env: own, before, linked }] of Object.entries(variants)) {
      before?.();
      hardLink(Boolean(linked));
      const [cmd = "", ...args] = argv;
      const r = await runChecked(cmd, args, { env: own ?? env });
      times[name]?.push(r.ms);
    }
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
load.push(loadavg()[0]);
const rows = timeRows(times);
const lines = [
  `\`umbra run\` start-up in a workspace of ${FILES.toLocaleString("en")} files (medians of ${RUNS} runs, interleaved; load average ${load.map((l) => l.toFixed(2)).join(" → ")})`,
  "",
  "| command | median | min | max | target |",
  "| --- | ---: | ---: | ---: | --- |",
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.medianMs.toFixed(0)} ms | ${r.minMs.toFixed(0)} ms | ${r.maxMs.toFixed(0)} ms | ${r.name.includes("umbra run") ? (r.medianMs < 1000 ? "< 1 s: met" : "< 1 s: missed") : ""} |`,
  ),
];
const md = lines.join("\n");
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(
  join(ROOT, "bench", "out", "start.json"),
  `${JSON.stringify({ files: FILES, runs: RUNS, load, rows }, null, 2)}\n`,
);
writeFileSync(join(ROOT, "bench", "out", "start.md"), `${md}\n`);
console.log(md);
