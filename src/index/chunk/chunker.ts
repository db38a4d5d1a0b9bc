/**
 * Chunking of one file into pieces for the index: syntax-aware for languages with a tree-sitter grammar,
 * by headings for markdown, by paragraphs and lines for everything else (see split.ts for the algorithm).
 *
 * Guarantees: chunks are in file order, their line ranges never overlap (several pieces of one
 * over-long line share that line), and together they cover every non-blank line. A chunk's `text` is
 * its lines joined with "\n" (line endings normalised, no trailing newline), preceded by the carried
 * signature lines when it is a later piece of a split definition; `hash` is the sha256 of `text`.
 */
import { createHash } from "node:crypto";
import type { Parser } from "web-tree-sitter";
import { detectLanguage, languageSpec } from "./languages.js";
import { getParser } from "./parser.js";
import { markdownRoot, paragraphRoot, type Section } from "./sections.js";
import { SEPARATOR, type Segment, Splitter } from "./split.js";
import { type DefinitionStart, definitionStarts, syntaxRoot } from "./syntax.js";

export interface Chunk {
  /** The path given to `chunkFile`, unchanged. */
  path: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  language: string;
  /** Names of the enclosing definitions joined by " > " (e.g. "Invoice > total"); "" at top level. */
  symbol: string;
  /**
   * Symbol paths of the definitions of code (functions, methods, classes, modules, …) that start in this
   * chunk (on one of its rows), in file order, nested ones included: a chunk that groups several small
   * functions names each of them, while its `symbol` names at most one. Empty for files chunked without
   * a syntax tree.
   */
  defines: string[];
  /** The same for the declarations of shapes only (interfaces, type aliases, structs, enums, typedefs). */
  declares: string[];
  /** sha256 (hex) of `text`. */
  hash: string;
  text: string;
}

export interface ChunkOptions {
  /** Budget per chunk in estimated tokens (see tokens.ts). Default 400. */
  maxTokens?: number;
  /**
   * Pieces under this many tokens that hold no definition of their own are folded into a neighbour
   * when the result stays within maxTokens + minTokens. Default maxTokens / 8.
   */
  minTokens?: number;
  /** How long one parse may take, in milliseconds, before the file is chunked by lines (default: parseBudgetMs). */
  parseBudgetMs?: number;
}

export const DEFAULT_MAX_TOKENS = 400;

/**
 * Version of what `chunkFile` makes of a file (ranges, symbols, texts). An index records the version that
 * chunked it and re-chunks every file when it differs; the embedding cache is keyed by chunk hash, so
 * chunks that come out the same are not embedded again. Raise it whenever chunking output changes.
 * 2: object literals of functions, Go function variables, C++ lambdas, Ruby define_method and
 * `class << self` are definitions; `x.map(() => …)` at module level is not.
 * 3: a TypeScript file whose parse has errors is parsed again with its unseparated call signatures
 * separated (reparse.ts), when that has fewer errors.
 * 4: every chunk lists the definitions that start in it (`defines`, `declares`).
 * 5: a name given a lambda or closure is a definition in Python, Ruby, PHP, Java, C# and Rust; Kotlin and
 * Swift are chunked by their syntax.
 */
export const CHUNKER_VERSION = 5;

/** Files larger than this are chunked by lines: a syntax tree of them would cost too much memory. */
const MAX_PARSE_LENGTH = 4 * 1024 * 1024;

/**
 * How long parsing a text of `length` characters may take before it is given up and the file chunked by
 * lines: 2 s plus 1 ms per 100 characters (44 s at MAX_PARSE_LENGTH). Real code parses at about 1 MB/s
 * (Swift's grammar, the slowest: Alamofire's 1.8 MB in 2.0 s) or faster, but a text made to look like code
 * can take minutes: 400 kB of Kotlin read as Swift took ten (bench/speed/parse-budget.mjs).
 */
export function parseBudgetMs(length: number): number {
  return 2_000 + length / 100;
}

interface Prepared {
  lines: string[];
  blank: boolean[];
}

function prepare(content: string): Prepared {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  const lines = text.split(/\r\n|\r|\n/);
  const blank = lines.map((line) => line.trim() === "");
  return { lines, blank };
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

interface Defined {
  defines: Set<string>;
  declares: Set<string>;
}

/**
 * What each segment defines and declares: a definition goes to the first segment holding the row it
 * starts on (segments are in file order, and so are the definitions).
 */
function definedBy(segments: readonly Segment[], definitions: readonly DefinitionStart[]): Defined[] {
  const out = segments.map((): Defined => ({ defines: new Set(), declares: new Set() }));
  let at = 0;
  for (const { row, path, declaration } of definitions) {
    while (at < segments.length && (segments[at]?.end ?? 0) < row) at++;
    const segment = segments[at];
    const defined = out[at];
    if (!segment || !defined || segment.start > row) continue;
    (declaration ? defined.declares : defined.defines).add(path.join(SEPARATOR).replace(/\s+/g, " "));
  }
  return out;
}

function toChunks(
  path: string,
  language: string,
  lines: readonly string[],
  segments: Segment[],
  definitions: readonly DefinitionStart[] = [],
): Chunk[] {
  const defined = definedBy(segments, definitions);
  return segments.map((segment, i) => {
    const body = segment.cut
      ? (lines[segment.start] ?? "").slice(segment.cut.from, segment.cut.to)
      : lines.slice(segment.start, segment.end + 1).join("\n");
    const carry = segment.frames
      .map((frame) => frame.text)
      .filter((text) => text.length > 0)
      .join("\n");
    const text = carry ? `${carry}\n${body}` : body;
    return {
      path,
      startLine: segment.start + 1,
      endLine: segment.end + 1,
      language,
      symbol: segment.symbol,
      defines: [...(defined[i]?.defines ?? [])],
      declares: [...(defined[i]?.declares ?? [])],
      hash: sha256(text),
      text,
    };
  });
}

function limits(options: ChunkOptions): { max: number; min: number } {
  const max = Math.max(1, Math.floor(options.maxTokens ?? DEFAULT_MAX_TOKENS));
  const min = Math.max(0, Math.floor(options.minTokens ?? max / 8));
  return { max, min: Math.min(min, max) };
}

/** Chunks a text by paragraphs and lines, without any syntax (also the fallback of `chunkFile`). */
export function lineChunks(
  path: string,
  content: string,
  options: ChunkOptions = {},
  language = "text",
): Chunk[] {
  const { lines, blank } = prepare(content);
  if (blank.every(Boolean)) return [];
  const { max, min } = limits(options);
  const segments = new Splitter(lines, blank, max, min).run(paragraphRoot(blank));
  return toChunks(path, language, lines, segments);
}

/**
 * Chunks one file. The language comes from `detectLanguage(path)`; a file that is never to be chunked
 * (lock file, minified bundle, source map) gives []. A grammar that cannot be loaded or a parse that
 * fails falls back to line chunks; syntax errors do not (tree-sitter recovers from them).
 */
export async function chunkFile(path: string, content: string, options: ChunkOptions = {}): Promise<Chunk[]> {
  const language = detectLanguage(path);
  if (language === undefined) return [];
  const { lines, blank } = prepare(content);
  if (blank.every(Boolean)) return [];
  const { max, min } = limits(options);
  const splitter = new Splitter(lines, blank, max, min);
  const spec = languageSpec(language);

  if (language === "markdown") {
    return toChunks(path, language, lines, splitter.run(markdownRoot(lines, blank)));
  }
  if (spec?.grammar && content.length <= MAX_PARSE_LENGTH) {
    const parser = await getParser(language).catch(() => undefined);
    const text = lines.join("\n");
    const budget = options.parseBudgetMs ?? parseBudgetMs(text.length);
    const tree = parser ? parseBest(parser, text, spec.reparse, budget) : null;
    if (tree) {
      try {
        const root: Section = syntaxRoot(spec, tree.rootNode, lines.length - 1);
        const segments = splitter.run(root);
        return toChunks(path, language, lines, segments, definitionStarts(spec, tree.rootNode));
      } finally {
        tree.delete();
      }
    }
  }
  return toChunks(path, language, lines, splitter.run(paragraphRoot(blank)));
}

type Tree = NonNullable<ReturnType<Parser["parse"]>>;

/**
 * The syntax tree of `text`; when it has errors and the language has a rewrite for them (same lines),
 * the rewrite's tree instead if it has fewer. Null when the parser fails or a parse takes over `budget` ms.
 */
function parseBest(
  parser: Parser,
  text: string,
  reparse: ((text: string) => string | undefined) | undefined,
  budget: number,
): Tree | null {
  const tree = tryParse(parser, text, budget);
  if (!tree?.rootNode.hasError || !reparse) return tree;
  const rewritten = reparse(text);
  const second = rewritten === undefined ? null : tryParse(parser, rewritten, budget);
  if (!second) return tree;
  if (errorCount(second) < errorCount(tree)) {
    tree.delete();
    return second;
  }
  second.delete();
  return tree;
}

function tryParse(parser: Parser, text: string, budget: number): Tree | null {
  const deadline = performance.now() + budget;
  try {
    // tree-sitter asks the callback now and then while it parses; true stops the parse
    const tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
    // a stopped parse would otherwise resume on the next file
    if (!tree) parser.reset();
    return tree;
  } catch {
    return null;
  }
}

/** How many syntax errors (error and missing nodes) a tree holds. */
function errorCount(tree: Tree): number {
  let count = 0;
  const cursor = tree.walk();
  try {
    for (;;) {
      if (cursor.nodeType === "ERROR" || cursor.currentNode.isMissing) count++;
      if (cursor.currentNode.hasError && cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return count;
    }
  } finally {
    cursor.delete();
  }
}
