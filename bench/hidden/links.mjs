#!/usr/bin/env node
// @ts-check
/**
 * What looking for other names (hard links) of hidden files costs the sandbox policy:
 * `findHiddenLinks` (src/sandbox/hidden-links.ts) timed with the cached policy walk before it (as
 * resolvePolicy calls them), in a workspace of --files files (default 100,000: src/ in folders of 1,000,
 * a hidden secret.env), medians of --runs, interleaved, next to that walk alone as the baseline:
 *   - no hidden file has another name (the common case);
 *   - secret.env has one, in the workspace's root (found at once: the walk stops);
 *   - secret.env has one outside the workspace (never found there: the whole workspace is walked);
 *   - a hidden folder of --hidden files (default 30,000, none linked) beside the rest: past the cap of
 *     20,000 hidden entries, so the whole workspace is walked for files it cannot rule out;
 *   - the last two again with the result kept beside the walk's cache (used while the walk finds the
 *     workspace unchanged).
 * Usage: node bench/hidden/links.mjs [--runs 9] [--files 100000] [--hidden 30000]. Needs `npm run build`.
 * Writes bench/out/links.{json,md} and prints the markdown table.
 */
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { timeRows } from "../lib/stats.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const { findHiddenLinks } = await import(join(ROOT, "dist", "sandbox", "hidden-links.js"));
const { findWorkspacePaths } = await import(join(ROOT, "dist", "sandbox", "workspace-walk.js"));
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "9" },
    files: { type: "string", default: "100000" },
    hidden: { type: "string", default: "30000" },
  },
});
const RUNS = Math.max(3, Number(values.runs));
const FILES = Math.max(1000, Number(values.files));
const HIDDEN = Math.max(100, Number(values.hidden));

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-links-")));
/** A workspace of FILES files with a hidden secret.env, and `extra` to set up more. */
function workspace(/** @type {string} */ name, /** @type {(ws: string) => void} */ extra = () => {}) {
  const ws = join(base, name);
  mkdirSync(ws);
  writeFileSync(join(ws, ".umbraignore"), "secret.env\nvault/\n");
  writeFileSync(join(ws, "secret.env"), "KEY=1\n");
  for (let i = 0; i < FILES; i++) {
    const dir = join(ws, "src", `d${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.ts`), `export const f${i} = ${i};\n`);
  }
  extra(ws);
  const cacheFile = join(base, `${name}.walk.json`);
  const walk = () => findWorkspacePaths(ws, { writableRoots: [ws], cacheFile });
  walk();
  return { ws, walk, cacheFile };
}

const plain = workspace("plain");
const inside = workspace("inside", (ws) => linkSync(join(ws, "secret.env"), join(ws, "notes-link.txt")));
const outside = workspace("outside", (ws) =>
  linkSync(join(ws, "secret.env"), join(base, "outside-link.env")),
);
const vault = workspace("vault", (ws) => {
  for (let i = 0; i < HIDDEN; i++) {
    const dir = join(ws, "vault", `d${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `v${i}.bin`), "secret\n");
  }
});

/** The policy's input of a workspace: its walk's hidden paths and masks (`kept`: with the result kept
 * beside the walk's cache, as resolvePolicy does; the walk runs first, cached, as in resolvePolicy). */
function links(
  /** @type {{ ws: string, cacheFile: string, walk: () => { hidden: string[], masks: unknown[], listed: number } }} */ w,
  kept = false,
) {
  return () => {
    const found = w.walk();
    const cache = { file: `${w.cacheFile}.links`, walkFile: w.cacheFile, unchanged: found.listed === 0 };
    return findHiddenLinks({
      workspace: w.ws,
      hiddenPaths: found.hidden,
      masks: found.masks,
      ...(kept ? { cache } : {}),
    });
  };
}
/** @type {Record<string, () => unknown>} */
const variants = {
  "policy walk, cached (baseline)": () => plain.walk(),
  "no hidden file has another name": links(plain),
  "another name in the workspace root": links(inside),
  "another name outside the workspace (whole walk)": links(outside),
  "another name outside the workspace, result kept (walk unchanged)": links(outside, true),
  [`hidden folder of ${HIDDEN.toLocaleString("en")} files (past the cap: whole walk)`]: links(vault),
  [`hidden folder of ${HIDDEN.toLocaleString("en")} files, result kept (walk unchanged)`]: links(vault, true),
};
/** @type {Record<string, number[]>} */
const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
/** @type {Record<string, string>} */
const outcome = {};
const load = [loadavg()[0]];
try {
  for (let i = 0; i < RUNS + 1; i++) {
    for (const [name, run] of Object.entries(variants)) {
      const started = performance.now();
      const result = /** @type {{ paths?: string[], searched?: boolean, warnings?: string[] }} */ (run());
      if (i > 0) times[name]?.push(performance.now() - started);
      if (result.searched !== undefined)
        outcome[name] =
          `${result.searched ? "walked" : "not walked"}, ${result.paths?.length ?? 0} found, ${result.warnings?.length ?? 0} warning(s)`;
    }
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
load.push(loadavg()[0]);
const rows = timeRows(times).map((row) => ({ ...row, outcome: outcome[row.name] ?? "" }));
const md = [
  `Other names of hidden files in a workspace of ${FILES.toLocaleString("en")} files (medians of ${RUNS} runs, interleaved; load average ${load.map((l) => l.toFixed(2)).join(" → ")})`,
  "",
  "| case | median | min | max | outcome |",
  "| --- | ---: | ---: | ---: | --- |",
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.medianMs.toFixed(1)} ms | ${r.minMs.toFixed(1)} ms | ${r.maxMs.toFixed(1)} ms | ${r.outcome} |`,
  ),
].join("\n");
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(
  join(ROOT, "bench", "out", "links.json"),
  `${JSON.stringify({ files: FILES, hidden: HIDDEN, runs: RUNS, load, rows }, null, 2)}\n`,
);
writeFileSync(join(ROOT, "bench", "out", "links.md"), `${md}\n`);
console.log(md);
