/**
 * How well a chunk's symbol name answers a query's words (pure, no I/O). A question names what the code
 * does ("how are file uploads encoded?", "how does a session follow redirects?") and the function that
 * does it is often named with the same words in another form (`_encode_files`, `resolve_redirects`): the
 * name is the strongest sign of which definition of a file the question is about.
 */

import { symbolName } from "../store/lexical.js";
import { splitIdentifier } from "../tokenize.js";
import { codeNames } from "./thesaurus.js";

/** Words shorter than this match only when equal (`len` is not `length`, `id` is not `idle`). */
const MIN_PREFIX = 4;
/** Two words that share a prefix this long, all but a short ending of the shorter one, are one word. */
const MIN_STEM = 5;
const MAX_ENDING = 3;

/**
 * One word in two forms: equal; one the start of the other (`auth` / `authorization`, `redirect` /
 * `redirects`), the shorter at least MIN_PREFIX long; or one stem with different endings (`verified` /
 * `verify`, `suggested` / `suggestions`). Both lower-cased.
 */
export function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (short.length < MIN_PREFIX) return false;
  if (long.startsWith(short)) return true;
  let common = 0;
  while (common < short.length && short[common] === long[common]) common++;
  return common >= MIN_STEM && short.length - common <= MAX_ENDING;
}

/** The words of a symbol's own name (`Flask > wsgi_app` → wsgi, app), lower-cased. */
export function nameWords(symbol: string): string[] {
  const name = symbolName(symbol);
  const parts = splitIdentifier(name);
  const whole = name.toLowerCase();
  return parts.length === 1 && parts[0] === whole ? parts : whole ? [whole, ...parts] : parts;
}

/**
 * The share of the query's weight that the symbol's own name carries: the weights of the query terms
 * found among the name's words (in any form, see sameWord, or as a name code writes for the term, see
 * thesaurus.ts: "remove" is found in `stripFlags`) over the weights of all terms; 0 for a chunk without a
 * symbol. `weights` are the query's terms with how much each tells (e.g. weight × idf); `names` each
 * term's code names (default: codeNames).
 */
export function nameMatch(
  weights: ReadonlyMap<string, number>,
  symbol: string,
  names: (term: string) => readonly string[] = codeNames,
): number {
  const words = nameWords(symbol);
  if (words.length === 0) return 0;
  let total = 0;
  let matched = 0;
  for (const [term, weight] of weights) {
    total += weight;
    const found = (alias: string) => words.some((word) => sameWord(alias, word));
    if (found(term) || names(term).some(found)) matched += weight;
  }
  return total > 0 ? matched / total : 0;
}

/**
 * `nameMatch` for one query, remembered per symbol (a search asks about the same symbols many times).
 * `terms` are the query's lexical terms and weights, `idf` how rare each is among the chunks: a rare word
 * in a name (`wsgi`) tells more than a common one (`run`).
 */
export function nameFit(
  terms: ReadonlyMap<string, number>,
  idf: ReadonlyMap<string, number>,
): (symbol: string) => number {
  const weights = new Map<string, number>();
  for (const [term, weight] of terms) weights.set(term, weight * (idf.get(term) ?? 0));
  const names = new Map([...weights.keys()].map((term) => [term, codeNames(term)]));
  const namesOf = (term: string) => names.get(term) ?? [];
  const known = new Map<string, number>();
  return (symbol) => {
    let fit = known.get(symbol);
    if (fit === undefined) {
      fit = nameMatch(weights, symbol, namesOf);
      known.set(symbol, fit);
    }
    return fit;
  };
}

/**
 * How well the best of a chunk's names answers the query: its symbol's, or that of a definition of code it
 * holds (a chunk grouping small functions answers for each of them). Not its declarations: a question
 * asks what code does, and interfaces or aliases named with its words ranked worse on bench/questions
 * (a development set). `fitOf` is a `nameFit`.
 */
export function chunkNameFit(
  fitOf: (symbol: string) => number,
  chunk: { readonly symbol: string; readonly defines: readonly string[] },
): number {
  let best = fitOf(chunk.symbol);
  for (const path of chunk.defines) if (path !== chunk.symbol) best = Math.max(best, fitOf(path));
  return best;
}

/**
 * Which chunks only frame code rather than do what a question asks (pure): a class's or a struct's own
 * chunk (its fields, its docstring: a chunk whose symbol holds members in `rows` and that defines nothing
 * else), a declaration alone (a Go struct or interface, a TypeScript interface or type), and a chunk that
 * is neither named nor holds a definition (imports, constants, a module's header). `rows` are the chunks a
 * search has read; the members they name tell containers from functions.
 */
export function framingChunks(
  rows: Iterable<{ readonly symbol: string; readonly defines: readonly string[] }>,
): (chunk: {
  readonly symbol: string;
  readonly defines: readonly string[];
  readonly declares: readonly string[];
}) => boolean {
  const containers = new Set<string>();
  for (const row of rows) for (const path of [row.symbol, ...row.defines]) addContainers(path, containers);
  return (chunk) => {
    if (chunk.defines.some((path) => path !== chunk.symbol)) return false;
    if (chunk.symbol === "") return true;
    return (
      containers.has(chunk.symbol) || (chunk.defines.length === 0 && chunk.declares.includes(chunk.symbol))
    );
  };
}

/**
 * The shapes a file declares that none of its code belongs to (pure): the symbol paths its chunks declare
 * (an interface, a type alias, a struct, an enum) less those that hold a definition of code (a Go struct
 * with methods: `Command` for `Command > Find`). `chunks` are all of one file's chunks. Such a shape says
 * what code takes, and its doc comments describe behaviour that is implemented elsewhere.
 */
export function bareShapes(
  chunks: Iterable<{
    readonly symbol: string;
    readonly defines: readonly string[];
    readonly declares: readonly string[];
  }>,
): Set<string> {
  const declared = new Set<string>();
  const containers = new Set<string>();
  for (const chunk of chunks) {
    for (const path of chunk.declares) declared.add(path);
    for (const path of [chunk.symbol, ...chunk.defines]) addContainers(path, containers);
  }
  for (const container of containers) declared.delete(container);
  return declared;
}

/** The symbol paths that hold `path` (`A > b > c`: `A`, `A > b`), added to `into`. */
function addContainers(path: string, into: Set<string>): void {
  for (let at = path.lastIndexOf(" > "); at > 0; at = path.lastIndexOf(" > ", at - 1))
    into.add(path.slice(0, at));
}
