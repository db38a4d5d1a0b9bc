#!/usr/bin/env node
// @ts-check
/**
 * What entering excluded folders costs `umbra run`: the policy walk applies the .umbraignore and
 * .cursorignore rules inside node_modules and the other excluded folders too, so their folders are in
 * the walk and its cache. Measures, in the same run, interleaved, medians of --runs (default 7):
 *   - `umbra run --root WS -- true` through the built CLI in a workspace with a node_modules-like tree
 *     (--packages packages of 15 folders of 4 files each: 2,000 make 30,000 folders and 120,000 files;
 *     a few `*.pem` files there and a package's own `.umbraignore` that the policy must hide);
 *   - the same workspace without its node_modules (what the walk saw before it entered excluded
 *     folders: the baseline);
 *   - `umbra --version`, the CLI's own start-up;
 *   - findWorkspacePaths alone, its cache warm, in this process (the walk's own time), for both.
 * The walk is cached per folder in the data directory: each workspace's first run (cache cold) is
 * reported apart, the medians are of the runs after it. CPU = user + system of the process tree.
 * Usage: node bench/hidden/excluded.mjs [--runs 7] [--packages 2000]. Needs `npm run build`.
 * Writes bench/out/hidden-excluded.{json,md} and prints the markdown table.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const ROOT = join(import.meta.dirname, "..", "..");
const { resolvePolicy } = await import(join(ROOT, "dist", "sandbox", "policy.js"));
const { findWorkspacePaths } = await import(join(ROOT, "dist", "sandbox", "workspace-walk.js"));
const { hiddenRootOf } = await import(join(ROOT, "dist", "sandbox", "hidden-masks.js"));
const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: { runs: { type: "string", default: "7" }, packages: { type: "string", default: "2000" } },
});
const RUNS = Math.max(3, Number(values.runs));
const PACKAGES = Number(values.packages);
const SUBFOLDERS = ["", "lib", "lib/a", "lib/b", "lib/a/x", "lib/a/y", "lib/b/x", "dist", "dist/esm"];
SUBFOLDERS.push("dist/cjs", "types", "test", "test/fixtures", "docs", "src");

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-excluded-")));
const env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };

/** A workspace with a small src/ and a root .umbraignore; with `packages` packages in node_modules. */
function workspace(name, packages) {
  const ws = join(base, name);
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(join(ws, ".umbraignore"), ".env\n*.pem\nsecrets/\n");
  for (let i = 0; i < 10; i++) writeFileSync(join(ws, "src", `m${i}.ts`), `export const m${i} = ${i};\n`);
  const hidden = [];
  for (let p = 0; p < packages; p++) {
    const pkg = join(ws, "node_modules", `pkg${p}`);
    for (const sub of SUBFOLDERS) {
      mkdirSync(join(pkg, sub), { recursive: true });
      for (let f = 0; f < 4; f++) writeFileSync(join(pkg, sub, `f${f}.js`), "module.exports = 0;\n");
    }
    if (p % 100 === 0) {
      writeFileSync(join(pkg, "test", "fixtures", "key.pem"), "secret\n");
      hidden.push(join(pkg, "test", "fixtures", "key.pem"));
    }
  }
  if (packages > 0) {
    writeFileSync(join(ws, "node_modules", "pkg1", ".umbraignore"), "token.txt\n");
    writeFileSync(join(ws, "node_modules", "pkg1", "token.txt"), "secret\n");
    hidden.push(join(ws, "node_modules", "pkg1", "token.txt"));
  }
  return { name, ws, hidden, folders: 2 + (packages > 0 ? 1 + packages * SUBFOLDERS.length : 0) };
}

/** Runs argv under /usr/bin/time; returns {ms, cpu (s), ok, stderr}. */
function time(argv) {
  const started = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "cpu %U %S", ...argv], {
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = performance.now() - started;
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr ?? "");
  return { ms, cpu: m ? Number(m[1]) + Number(m[2]) : Number.NaN, ok: r.status === 0, stderr: r.stderr };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const started = performance.now();
const workspaces = [workspace("with-node-modules", PACKAGES), workspace("without", 0)];
console.error(`made the workspaces in ${((performance.now() - started) / 1000).toFixed(1)} s`);
// Let every stamp age past the walk's 2 s window, so that the first walk can be cached.
await new Promise((done) => setTimeout(done, 2500));
for (const w of workspaces) {
  const config = loadConfig({ workspaceRoot: w.ws, env }).sandbox;
  const { policy } = await resolvePolicy({
    workspace: w.ws,
    config,
    env: { ...env, UMBRA_HOME: join(base, "check") },
  });
  const shown = w.hidden.filter((path) => hiddenRootOf(policy, path) === undefined);
  if (shown.length > 0)
    throw new Error(`the policy leaves ${shown.length} hidden files readable: ${shown[0]}`);
  w.samples = { umbra: [], cpu: [], walk: [] };
}
const version = { ms: [], cpu: [] };
for (let run = 0; run < RUNS; run++) {
  const v = time([process.execPath, CLI, "--version"]);
  version.ms.push(v.ms);
  version.cpu.push(v.cpu * 1000);
  for (const w of workspaces) {
    const u = time([process.execPath, CLI, "run", "--root", w.ws, "--", "true"]);
    if (!u.ok) throw new Error(`umbra run failed in ${w.name}: ${u.stderr}`);
    w.samples.umbra.push(u.ms);
    w.samples.cpu.push(u.cpu * 1000);
    const cacheFile = join(base, "walk", `${w.name}.json`);
    const t = performance.now();
    const found = findWorkspacePaths(w.ws, { cacheFile, writableRoots: [w.ws] });
    // the sandbox's stand-ins for missing protected paths change the root, which is listed again
    if (run > 0 && found.listed > 1) throw new Error(`the cached walk listed ${found.listed} folders`);
    w.samples.walk.push(performance.now() - t);
  }
}
const fmt = (ms) => `${ms.toFixed(0)} ms`;
const rows = workspaces.map((w) => ({
  workspace: w.name,
  folders: w.folders,
  hidden: w.hidden.length,
  firstMs: w.samples.umbra[0],
  umbraMs: median(w.samples.umbra.slice(1)),
  umbraCpuMs: median(w.samples.cpu.slice(1)),
  walkMs: median(w.samples.walk.slice(1)),
}));
const lines = [
  "| workspace | folders | hidden in node_modules | umbra run -- true | its CPU | first run (walk not cached) | cached walk alone |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...rows.map(
    (r) =>
      `| ${r.workspace} | ${r.folders.toLocaleString("en")} | ${r.hidden} | ${fmt(r.umbraMs)} | ${fmt(r.umbraCpuMs)} | ${fmt(r.firstMs)} | ${fmt(r.walkMs)} |`,
  ),
  "",
  `umbra --version: ${fmt(median(version.ms))}, CPU ${fmt(median(version.cpu))}; medians of ${RUNS} runs, interleaved (umbra run: of the runs after the first).`,
];
const md = lines.join("\n");
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(
  join(ROOT, "bench", "out", "hidden-excluded.json"),
  JSON.stringify({ runs: RUNS, packages: PACKAGES, version: median(version.ms), rows }, null, 2),
);
writeFileSync(join(ROOT, "bench", "out", "hidden-excluded.md"), `${md}\n`);
console.log(md);
rmSync(base, { recursive: true, force: true });
