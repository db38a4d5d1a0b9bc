#!/usr/bin/env node
// @ts-check
/**
 * Ignore rules through a build's matcher (`dist/workspace/ignore-rules.js`: what the scan, the sandbox's
 * walk, the shadow diff, grep and search use), in two parts:
 *
 * - hostile: the rule `a/**\/` × k followed by `x`, in a workspace's `.umbraignore` (asked through
 *   `umbraIgnoreMatcher`, as search and grep ask) and in its `.gitignore` (the scan of a tree holding one
 *   chain of `depth` folders named `a` and a file at its bottom): the time to test the chain's file.
 *   Each case runs in a child process that is killed after --timeout seconds.
 * - ordinary: a .gitignore of 50 typical rules (node's and python's templates) tested, with
 *   `extendRules` and `matchIgnore`, over --paths synthetic paths (a tree of folders and the files in
 *   them, made by a seeded generator, so every build sees the same paths): the time and how many are
 *   ignored.
 *
 * Usage: node bench/speed/hostile-ignore.mjs [--dist DIR] [--k 6,10,14] [--depth 40] [--paths 100000]
 *   [--timeout 120] [--runs 5]
 * --dist: a build of umbra (default: this tree's dist/; an older one, e.g. built from another commit with
 * `npx tsc -p tsconfig.build.json --outDir bench/.work/dist-old`, to compare).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = resolve(dirname(SCRIPT), "..", "..");
const { values } = parseArgs({
  options: {
    dist: { type: "string", default: join(ROOT, "dist") },
    k: { type: "string", default: "6,10,14" },
    depth: { type: "string", default: "40" },
    paths: { type: "string", default: "100000" },
    timeout: { type: "string", default: "120" },
    runs: { type: "string", default: "5" },
    /** internal: run one hostile case (`umbra:k` or `scan:k`) and print its time in ms */
    one: { type: "string" },
  },
});
const dist = resolve(values.dist ?? "");
const depth = Number(values.depth);
const load = (/** @type {string} */ rel) => import(pathToFileURL(join(dist, rel)).href);

/** `a/**\/` k times, then `x`: no path below matches it, and a backtracking matcher tries every split. */
const hostileRule = (/** @type {number} */ k) => `${"a/**/".repeat(k)}x`;

/** The hostile case `kind:k` in a fresh workspace; the milliseconds the match (or the scan) took. */
async function runOne(/** @type {string} */ spec) {
  const [kind, kText] = spec.split(":");
  const k = Number(kText);
  const root = mkdtempSync(join(tmpdir(), "umbra-hostile-ignore-"));
  try {
    const chain = Array.from({ length: depth }, () => "a").join("/");
    const file = `${chain}/f`;
    if (kind === "umbra") {
      writeFileSync(join(root, ".umbraignore"), `${hostileRule(k)}\n`);
      const { umbraIgnoreMatcher } = await load("workspace/ignore-rules.js");
      const start = performance.now();
      const ignored = await umbraIgnoreMatcher(root)(file);
      const ms = performance.now() - start;
      if (ignored) throw new Error("the hostile rule matched");
      return ms;
    }
    writeFileSync(join(root, ".gitignore"), `${hostileRule(k)}\n`);
    mkdirSync(join(root, chain), { recursive: true });
    writeFileSync(join(root, file), "x\n");
    const { scanWorkspace } = await load("workspace/scan.js");
    const start = performance.now();
    const result = await scanWorkspace(root, { globalExcludesFile: null, excludeDirs: [] });
    const ms = performance.now() - start;
    if (!result.files.some((/** @type {{ path: string }} */ entry) => entry.path === file))
      throw new Error("the scan left out the chain's file");
    return ms;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (values.one) {
  process.stdout.write(`${(await runOne(values.one)).toFixed(2)}\n`);
  process.exit(0);
}

/** The time of one hostile case in a child process, or "> N s" when it was killed. */
function hostile(/** @type {string} */ spec) {
  const timeout = Number(values.timeout) * 1000;
  const child = spawnSync(
    process.execPath,
    [SCRIPT, "--dist", dist, "--depth", String(depth), "--one", spec],
    {
      encoding: "utf8",
      timeout,
    },
  );
  if (child.error || child.signal) return `> ${values.timeout} s (killed)`;
  if (child.status !== 0) throw new Error(`${spec}: ${child.stderr}`);
  return `${Number(child.stdout).toLocaleString("en-US", { maximumFractionDigits: 2 })} ms`;
}

// node's and python's .gitignore templates, abridged to 50 rules of every common shape
const GITIGNORE = [
  "logs",
  "*.log",
  "npm-debug.log*",
  "yarn-debug.log*",
  "pids",
  "*.pid",
  "*.seed",
  "lib-cov",
  "coverage",
  "*.lcov",
  ".nyc_output",
  "bower_components",
  "build/Release",
  "node_modules/",
  "jspm_packages/",
  "*.tsbuildinfo",
  ".npm",
  ".eslintcache",
  ".env",
  ".env.*",
  "!.env.example",
  ".next",
  "out",
  "dist",
  ".cache/",
  ".vuepress/dist",
  ".serverless/",
  ".DS_Store",
  "__pycache__/",
  "*.py[cod]",
  "*$py.class",
  "*.so",
  ".Python",
  "develop-eggs/",
  "eggs/",
  ".eggs/",
  "/lib64/",
  "sdist/",
  "*.egg-info/",
  "*.egg",
  "MANIFEST",
  "htmlcov/",
  ".tox/",
  ".pytest_cache/",
  "docs/_build/",
  ".ipynb_checkpoints",
  ".venv",
  "venv/",
  "/site",
  "**/tmp/**/*.bak",
];

/** A deterministic pseudo-random generator (mulberry32). */
function random(/** @type {number} */ seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` workspace paths as a walk meets them, one in ten a folder (isDir): a tree of folders, each
 * below one made before it, one in 25 of a kind the rules ignore; files in random folders, one in 4 of
 * a kind the rules ignore.
 */
function syntheticPaths(/** @type {number} */ count) {
  const next = random(42);
  const pick = (/** @type {readonly string[]} */ list) => list[Math.floor(next() * list.length)];
  const dirs = [
    "src",
    "lib",
    "test",
    "tests",
    "app",
    "components",
    "utils",
    "docs",
    "pkg",
    "core",
    "api",
    "models",
    "views",
    "scripts",
    "internal",
    "vendor",
    "assets",
    "server",
    "client",
    "shared",
  ];
  const ignoredDirs = [
    "node_modules",
    "dist",
    "build",
    "__pycache__",
    ".venv",
    "coverage",
    "tmp",
    "site",
    "eggs",
    "out",
    ".cache",
    "logs",
  ];
  const files = [
    "index.js",
    "main.ts",
    "util.py",
    "README.md",
    ".env.example",
    "package.json",
    "setup.py",
    "conftest.py",
    "style.css",
    "data.json",
    "Makefile",
    "types.d.ts",
    "test_api.py",
    "view.tsx",
    "schema.sql",
    "lib.rs",
    "go.mod",
    "notes.bak",
    "app.config.js",
    "handler.go",
  ];
  const ignoredFiles = [
    "util.pyc",
    ".env",
    ".env.local",
    "npm-debug.log.1",
    "server.log",
    "app.pid",
    ".DS_Store",
    "x.so",
    "mod.egg",
    "a.tsbuildinfo",
  ];
  const folders = [""];
  /** @type {[string, boolean][]} */
  const out = [];
  while (out.length < count / 10) {
    const parent = folders[Math.floor(next() * folders.length)] ?? "";
    const name = `${pick(next() < 0.04 ? ignoredDirs : dirs)}${Math.floor(next() * 3) || ""}`;
    const folder = parent === "" ? name : `${parent}/${name}`;
    folders.push(folder);
    out.push([folder, true]);
  }
  while (out.length < count) {
    const folder = folders[Math.floor(next() * folders.length)] ?? "";
    const name = pick(next() < 0.25 ? ignoredFiles : files);
    out.push([folder === "" ? name : `${folder}/${name}`, false]);
  }
  return out;
}

const { extendRules, matchIgnore, parseIgnoreFile } = await load("workspace/ignore-rules.js");
const paths = syntheticPaths(Number(values.paths));
const patterns = parseIgnoreFile(GITIGNORE.join("\n"), "", ".gitignore");
/** Builds the rules and tests every path, as a walk does (one rule set, every entry). */
const ordinary = () => {
  const start = performance.now();
  const context = { git: extendRules(undefined, patterns) };
  let ignored = 0;
  for (const [path, isDir] of paths) if (matchIgnore(context, path, isDir)) ignored++;
  return { ms: performance.now() - start, ignored };
};
const times = [];
let ignoredCount = 0;
for (let run = 0; run < Number(values.runs); run++) {
  const { ms, ignored } = ordinary();
  times.push(ms);
  ignoredCount = ignored;
}
times.sort((a, b) => a - b);

process.stdout.write(`build ${dist}\n`);
process.stdout.write(`hostile: the rule a/**/ × k + x, a chain of ${depth} folders named a and a file f\n`);
process.stdout.write("| k | umbraIgnoreMatcher, one path | scan of the chain |\n| ---: | ---: | ---: |\n");
for (const k of (values.k ?? "").split(",").map(Number))
  process.stdout.write(`| ${k} | ${hostile(`umbra:${k}`)} | ${hostile(`scan:${k}`)} |\n`);
process.stdout.write(
  `ordinary: ${GITIGNORE.length} rules, ${paths.length.toLocaleString("en-US")} paths, ` +
    `${ignoredCount.toLocaleString("en-US")} ignored; median of ${times.length} runs ` +
    `${times[Math.floor(times.length / 2)]?.toFixed(1)} ms (min ${times[0]?.toFixed(1)} ms)\n`,
);
