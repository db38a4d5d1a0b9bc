#!/usr/bin/env node
// @ts-check
/**
 * Hostile texts against the chunker's parse budget: for each grammar-backed language, texts made to cost
 * a parser the most (deep nesting, one long expression, random tokens, and lines of one language read as
 * another), chunked with this tree's `chunkFile` in one process, as an index run chunks one file after
 * another. Prints each text's size, the time it took, its budget, and whether it was chunked by its syntax
 * or by lines (its parse ran into the budget and was given up). `--budget default` uses the chunker's own budget; `--budget none` an
 * unlimited one, to see what a parse costs when nothing stops it (slow: minutes for Swift).
 * Usage: node bench/speed/parse-budget.mjs [--language swift]... [--budget default|none] [--scale N]
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    language: { type: "string", multiple: true },
    budget: { type: "string", default: "default" },
    scale: { type: "string", default: "1" },
  },
});
const { chunkFile, parseBudgetMs } = await import(join(ROOT, "dist", "index", "chunk", "index.js"));
const { LANGUAGES } = await import(join(ROOT, "dist", "index", "chunk", "languages.js"));

const scale = Number(values.scale);
const repeat = (/** @type {string} */ text, /** @type {number} */ times) =>
  text.repeat(Math.round(times * scale));
const TOKENS = [
  "func",
  "fun",
  "def",
  "{",
  "}",
  "(",
  ")",
  "let",
  "x",
  "=",
  '"',
  "<",
  ">",
  "->",
  "in",
  ".",
  ":",
  "?",
  "@",
  "\n",
];
/** @type {Record<string, string>} */
const TEXTS = {
  "nested parentheses": `x = ${repeat("(", 20_000)}1${repeat(")", 20_000)}\n`,
  "nested braces": `f() ${repeat("{ ", 20_000)}${repeat("}", 20_000)}\n`,
  "one long expression": `x = ${Array.from({ length: Math.round(100_000 * scale) }, (_, i) => `a${i}`).join(" + ")}\n`,
  "random tokens": Array.from(
    { length: Math.round(200_000 * scale) },
    (_, i) => TOKENS[(i * 7919 + 13) % TOKENS.length],
  ).join(" "),
  "Kotlin functions": Array.from({ length: Math.round(20_000 * scale) }, (_, i) => `fun f${i}() = ${i}`).join(
    "\n",
  ),
};
const EXTENSION = Object.fromEntries(
  LANGUAGES.map((/** @type {{id: string, extensions: string[]}} */ l) => [l.id, l.extensions[0]]),
);
const languages = LANGUAGES.filter(
  (/** @type {{id: string, grammar?: string}} */ l) =>
    l.grammar && (!values.language?.length || values.language.includes(l.id)),
).map((/** @type {{id: string}} */ l) => l.id);

process.stdout.write(
  "| language | text | characters | time | budget | chunked by |\n| --- | --- | ---: | ---: | ---: | --- |\n",
);
for (const language of languages) {
  for (const [name, text] of Object.entries(TEXTS)) {
    const budget = values.budget === "none" ? Number.POSITIVE_INFINITY : parseBudgetMs(text.length);
    const started = performance.now();
    const chunks = await chunkFile(`hostile${EXTENSION[language]}`, text, { parseBudgetMs: budget });
    const ms = performance.now() - started;
    // a parse given up ran into its budget; the text was then chunked by lines
    const givenUp = ms >= budget;
    process.stdout.write(
      `| ${language} | ${name} | ${text.length} | ${(ms / 1000).toFixed(2)} s | ${Number.isFinite(budget) ? `${(budget / 1000).toFixed(1)} s` : "none"} | ${givenUp ? "lines (parse given up)" : "syntax"}, ${chunks.length} chunks |\n`,
    );
  }
}
