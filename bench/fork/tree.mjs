// @ts-check
/**
 * Generated workspaces for the fork benchmark: N files, about 30% source files in nested folders and 70%
 * in a node_modules-like folder (packages of small files, some with a large bundle), deterministic, so
 * that a tree can be reused between runs. A tree is complete when its manifest (`<dir>.json`) exists.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const VERSION = 1;
const SMALL_MIN = 200;
const SMALL_MAX = 2500;
const BUNDLE_BYTES = 2 * 1024 * 1024;

/** Size name → number of files and total bytes aimed at. */
export const SIZES = /** @type {const} */ ({
  "1k": { files: 1_000, bytes: 3_000_000 },
  "100k": { files: 100_000, bytes: 220_000_000 },
  "500k": { files: 500_000, bytes: 1_150_000_000 },
});

/** @param {number} seed */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A few MB of code-like text to cut file contents from. */
function baseText() {
  const random = prng(7);
  const words = [
    "const",
    "value",
    "return",
    "function",
    "items",
    "map",
    "filter",
    "await",
    "result",
    "config",
    "export",
    "import",
    "from",
    "if",
    "else",
    "for",
    "of",
    "let",
    "index",
    "length",
    "push",
    "error",
    "throw",
  ];
  const lines = [];
  let size = 0;
  while (size < 4.5 * 1024 * 1024) {
    const n = 3 + Math.floor(random() * 9);
    let line = "  ".repeat(Math.floor(random() * 4));
    for (let i = 0; i < n; i++)
      line += `${words[Math.floor(random() * words.length)]}${i % 3 === 2 ? "(" : " "}`;
    line += ";\n";
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join(""), "utf8");
}

/**
 * The file list of a tree: relative path and size.
 * @param {number} files
 * @param {number} bytes
 * @returns {{ path: string, size: number }[]}
 */
export function plan(files, bytes) {
  const random = prng(files);
  const srcCount = Math.round(files * 0.3);
  const nmCount = files - srcCount;
  /** @type {{ path: string, size: number }[]} */
  const out = [];
  for (let i = 0; i < srcCount; i++) {
    const dir = Math.floor(i / 40);
    const path = `src/m${Math.floor(dir / 25)}/s${dir % 25}/f${i % 40}.ts`;
    out.push({ path, size: SMALL_MIN + Math.floor(random() * (SMALL_MAX - SMALL_MIN)) });
  }
  const perPackage = 30;
  for (let i = 0; i < nmCount; i++) {
    const pkg = Math.floor(i / perPackage);
    const k = i % perPackage;
    const base = `node_modules/@scope${pkg % 20}/pkg${pkg}`;
    const path = k === 0 ? `${base}/package.json` : k === 1 ? `${base}/index.js` : `${base}/lib/f${k}.js`;
    out.push({ path, size: SMALL_MIN + Math.floor(random() * (SMALL_MAX - SMALL_MIN)) });
  }
  const small = out.reduce((sum, f) => sum + f.size, 0);
  const missing = bytes - small;
  if (missing > 0) {
    // Some packages get a large bundle instead of one small file, until the tree reaches its size.
    const bundles = Math.max(1, Math.ceil(missing / BUNDLE_BYTES));
    const step = Math.max(1, Math.floor(nmCount / bundles));
    let left = missing;
    for (let b = 0; b < bundles && left > 0; b++) {
      const index = srcCount + Math.min(nmCount - 1, Math.floor((b * step) / perPackage) * perPackage + 2);
      const entry = out[index];
      if (!entry) break;
      const extra = Math.min(left, Math.ceil(missing / bundles));
      entry.path = entry.path.replace(/lib\/f\d+\.js$/, "dist/bundle.js");
      entry.size += extra;
      left -= extra;
    }
  }
  return out;
}

/**
 * Makes (or reuses) the tree of one size under `workDir`; returns its folder and manifest.
 * @param {string} workDir
 * @param {keyof typeof SIZES} name
 * @param {(line: string) => void} log
 */
export function ensureTree(workDir, name, log) {
  const dir = join(workDir, `tree-${name}`);
  const manifestFile = `${dir}.json`;
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
    if (manifest.version === VERSION && existsSync(dir)) return { dir, manifest };
  }
  const { files, bytes } = SIZES[name];
  log(`generating ${name} tree (${files} files, ~${Math.round(bytes / 1e6)} MB) in ${dir} ...`);
  const started = performance.now();
  rmSync(dir, { recursive: true, force: true });
  const text = baseText();
  const list = plan(files, bytes);
  const made = new Set();
  let total = 0;
  const random = prng(files + 1);
  for (const [i, file] of list.entries()) {
    const path = join(dir, file.path);
    const parent = dirname(path);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    const header = Buffer.from(`// ${file.path} #${i}\n`);
    const length = Math.max(0, file.size - header.length);
    const start = Math.floor(random() * Math.max(1, text.length - length));
    const body = length <= text.length ? text.subarray(start, start + length) : Buffer.alloc(length, 0x61);
    writeFileSync(path, Buffer.concat([header, body]));
    total += header.length + body.length;
    if (i > 0 && i % 50_000 === 0) log(`  ${i} files ...`);
  }
  const manifest = { version: VERSION, name, files: list.length, bytes: total };
  writeFileSync(manifestFile, JSON.stringify(manifest));
  log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s (${(total / 1e9).toFixed(2)} GB)`);
  return { dir, manifest };
}

/** The relative paths of a tree of one size (as generated). @param {keyof typeof SIZES} name */
export function treePaths(name) {
  return plan(SIZES[name].files, SIZES[name].bytes).map((f) => f.path);
}
