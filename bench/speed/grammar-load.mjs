#!/usr/bin/env node
// @ts-check
/**
 * How long loading a tree-sitter grammar takes after big parses: chunks every file of one language in a
 * checkout (`--language`, default swift), then loads other grammars (`--after`, default javascript and
 * python) and times each load. With `--preload` they are loaded first, as an index run does (`loadParsers`).
 * Usage: node bench/speed/grammar-load.mjs --repo DIR [--language swift] [--after javascript]... [--preload]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    repo: { type: "string" },
    language: { type: "string", default: "swift" },
    after: { type: "string", multiple: true },
    preload: { type: "boolean", default: false },
  },
});
if (!values.repo)
  throw new Error(
    "usage: node bench/speed/grammar-load.mjs --repo DIR [--language L] [--after L]... [--preload]",
  );
const repo = resolve(values.repo);
const { chunkFile, detectLanguage, loadParsers } = await import(
  join(ROOT, "dist", "index", "chunk", "index.js")
);
const { getParser } = await import(join(ROOT, "dist", "index", "chunk", "parser.js"));
const others = values.after ?? ["javascript", "python"];

/** @type {string[]} */
const files = [];
(function walk(/** @type {string} */ dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === ".git" || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.isFile() && statSync(path).size <= 1 << 20 && detectLanguage(path) === values.language)
      files.push(path);
  }
})(repo);
if (values.preload) {
  const started = performance.now();
  await loadParsers([values.language ?? "swift", ...others]);
  console.log(
    `loaded ${[values.language, ...others].join(", ")} first: ${(performance.now() - started).toFixed(0)} ms`,
  );
}
let started = performance.now();
for (const path of files) await chunkFile(relative(repo, path), readFileSync(path, "utf8"));
console.log(
  `chunked ${files.length} ${values.language} files (${extname(files[0] ?? "")}): ${(performance.now() - started).toFixed(0)} ms`,
);
for (const language of others) {
  started = performance.now();
  await getParser(language);
  console.log(`then loading ${language}: ${(performance.now() - started).toFixed(0)} ms`);
}
