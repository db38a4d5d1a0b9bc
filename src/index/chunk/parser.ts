/**
 * Lazy, cached tree-sitter: the runtime is initialised once, each grammar is loaded once, and one Parser
 * per language is reused. Every load is memoised as a promise, so concurrent callers share one load; a
 * failed load is remembered too (callers fall back to line chunking instead of retrying on every file).
 */
import { createRequire } from "node:module";
import { Language, Parser } from "web-tree-sitter";
import { languageSpec } from "./languages.js";

const require = createRequire(import.meta.url);

let runtime: Promise<void> | undefined;
const parsers = new Map<string, Promise<Parser | undefined>>();

function initRuntime(): Promise<void> {
  runtime ??= Parser.init();
  return runtime;
}

/** Absolute path of a grammar shipped by `tree-sitter-wasms`, resolved from this module (src or dist). */
export function grammarPath(grammar: string): string {
  return require.resolve(`tree-sitter-wasms/out/${grammar}`);
}

async function load(languageId: string): Promise<Parser | undefined> {
  const grammar = languageSpec(languageId)?.grammar;
  if (!grammar) return undefined;
  await initRuntime();
  const language = await Language.load(grammarPath(grammar));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/**
 * The parser of a language, or undefined when it has no grammar. Rejects when the grammar cannot be
 * loaded; the rejection is cached.
 */
export function getParser(languageId: string): Promise<Parser | undefined> {
  let parser = parsers.get(languageId);
  if (!parser) {
    parser = load(languageId);
    parsers.set(languageId, parser);
  }
  return parser;
}

/**
 * Loads the grammars of `languageIds` (those that have one), one after another, before any of them parses:
 * a grammar loaded after big parses have grown tree-sitter's memory takes seconds to load instead of
 * milliseconds (JavaScript's: 3.1 s after Alamofire's Swift files; 72 ms for it, Python's and Swift's
 * loaded first: bench/speed/grammar-load.mjs). A grammar that cannot be loaded is left to `getParser`'s
 * callers, which chunk by lines.
 */
export async function loadParsers(languageIds: Iterable<string>): Promise<void> {
  for (const id of [...new Set(languageIds)].sort()) {
    if (hasGrammar(id)) await getParser(id).catch(() => undefined);
  }
}

/** Whether a language is parsed with a tree-sitter grammar. */
export function hasGrammar(languageId: string): boolean {
  return languageSpec(languageId)?.grammar !== undefined;
}
