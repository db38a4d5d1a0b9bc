/**
 * Which files that depend on an edited file are most likely to break: those that use the symbols the
 * edit touched, by a plain word search (no server involved).
 */

/**
 * Declarations in TypeScript/JavaScript, Python, Go and C: the declared name is the last group. These
 * patterns read one line: `^` starts one after \r, U+2028 and U+2029 too, so none reads past them (each
 * such line read on to the next \n was quadratic).
 */
const DECLARATION =
  /^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?(?:def|class|func|function\*?|interface|type|enum|struct|const|let|var)[ \t]+(?:\([^)\n\r\u2028\u2029]*\)[ \t]*)?\*?([A-Za-z_$][\w$]*)/gm;
/** A top-level assignment (Python module constants, `X = ...`). */
const ASSIGNMENT = /^([A-Za-z_][\w]*)[ \t]*(?::[^=\n\r\u2028\u2029]*)?=(?!=)/gm;
/** A C-style function definition or prototype at the start of a line: `int name(`. */
const C_FUNCTION = /^[A-Za-z_][\w \t*]*?[ \t*]([A-Za-z_]\w*)[ \t]*\(/gm;

function declarations(text: string): Map<number, string> {
  const byLine = new Map<number, string>();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  const lineOf = (index: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  for (const pattern of [DECLARATION, ASSIGNMENT, C_FUNCTION]) {
    for (const match of text.matchAll(pattern)) {
      const name = match[1];
      const line = lineOf(match.index ?? 0);
      if (name && !byLine.has(line) && !KEYWORDS.has(name)) byLine.set(line, name);
    }
  }
  return byLine;
}

const KEYWORDS = new Set(["if", "for", "while", "switch", "return", "else", "do", "sizeof", "case"]);

/** Lines of `text` (0-based) that are not in `other`, counted as multisets. */
function changedLines(text: string, other: string): number[] {
  const counts = new Map<string, number>();
  for (const line of other.split("\n")) counts.set(line, (counts.get(line) ?? 0) + 1);
  const changed: number[] = [];
  text.split("\n").forEach((line, i) => {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else changed.push(i);
  });
  return changed;
}

/** The declared symbols of `text` whose declaration or body holds one of `lines`. */
function touched(text: string, lines: number[]): string[] {
  const decls = declarations(text);
  const starts = [...decls.keys()].sort((a, b) => a - b);
  const out = new Set<string>();
  const words = new Set<string>();
  const all = text.split("\n");
  for (const line of lines) {
    for (const word of (all[line] ?? "").match(/[A-Za-z_$][\w$]*/g) ?? []) words.add(word);
    // The nearest declaration at or above the line encloses it (or precedes it at top level).
    let enclosing: number | undefined;
    for (const start of starts) {
      if (start > line) break;
      enclosing = start;
    }
    const name = enclosing === undefined ? undefined : decls.get(enclosing);
    if (name) out.add(name);
  }
  // Declared names that a changed line mentions (a renamed or removed symbol, a changed signature).
  for (const name of decls.values()) if (words.has(name)) out.add(name);
  return [...out];
}

/**
 * The symbols an edit touched: those declared in either version whose declaration or body changed.
 * Without a base (a new file), every symbol the file declares.
 */
export function editedSymbols(baseText: string | undefined, newText: string): string[] {
  if (baseText === undefined) return [...new Set(declarations(newText).values())];
  const symbols = new Set([
    ...touched(newText, changedLines(newText, baseText)),
    ...touched(baseText, changedLines(baseText, newText)),
  ]);
  return [...symbols];
}

function escapeWord(word: string): string {
  return word.replace(/[$]/g, "\\$");
}

/** Whole-word mentions of any of `symbols`; undefined when there are none. */
function mentionPattern(symbols: readonly string[]): RegExp | undefined {
  if (symbols.length === 0) return undefined;
  return new RegExp(`(?<![\\w$])(?:${symbols.map(escapeWord).join("|")})(?![\\w$])`, "g");
}

function countMatches(text: string, pattern: RegExp | undefined): number {
  return pattern ? (text.match(pattern)?.length ?? 0) : 0;
}

/** How often `text` mentions any of `symbols` as a whole word. */
export function mentions(text: string, symbols: readonly string[]): number {
  return countMatches(text, mentionPattern(symbols));
}

/**
 * Dependents ordered by relevance: files that mention the edited symbols first (most mentions first),
 * then the rest; ties by path. `textOf` gives a file's content (undefined: unknown, ranked last).
 */
export function rankByRelevance(
  paths: readonly string[],
  symbols: readonly string[],
  textOf: (path: string) => string | undefined,
): string[] {
  // One pattern for every file: built again for each, it cost the symbols (every name of a big new file)
  // times the importers.
  const pattern = mentionPattern(symbols);
  const score = new Map(paths.map((path) => [path, countMatches(textOf(path) ?? "", pattern)]));
  return [...paths].sort((a, b) => (score.get(b) ?? 0) - (score.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
}
