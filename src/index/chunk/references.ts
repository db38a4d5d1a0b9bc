/**
 * The code graph's edges, read from the syntax tree the chunker already has: every call (or construction)
 * site as the row it is on and the callee's last name (`self.app.url_for(…)` → `url_for`,
 * `pkg.NewEngine()` → `NewEngine`, `new Hono<E>()` → `Hono`). Names only: resolving them to definitions
 * is the search's job (by the store's symbol-name index), so nothing here depends on other files.
 */
import { type Language, type Node, Query } from "web-tree-sitter";
import type { LanguageSpec } from "./languages.js";

export interface CallSite {
  /** 0-based row of the call. */
  row: number;
  name: string;
}

/** The most distinct names kept for one chunk (a generated table of calls says little about each). */
export const MAX_CALLS_PER_CHUNK = 64;
/** A callee written longer than this (an immediately called function literal) has no name worth keeping. */
const MAX_CALLEE_LENGTH = 200;
/** The last name of a callee, after any type arguments: `a.b.Foo[T]` → `Foo`, `x::y::<T>` → `y`. */
const LAST_NAME = /([A-Za-z_$][\w$]*)\s*(?:::)?\s*(?:<[^<>]*>|\[[^[\]]*\])?\s*$/;

function calleeName(callee: Node): string | undefined {
  const text = callee.text;
  if (text.length > MAX_CALLEE_LENGTH) return undefined;
  return LAST_NAME.exec(text)?.[1];
}

/** The query of a language's call forms, compiled once per language (undefined: it has none). */
const queries = new Map<string, Query | undefined>();

function callQuery(spec: LanguageSpec, language: Language): Query | undefined {
  if (queries.has(spec.id)) return queries.get(spec.id);
  const patterns = Object.entries(spec.calls ?? {}).map(([type, field]) =>
    field === "" ? `(${type} . (_) @callee)` : `(${type} ${field}: (_) @callee)`,
  );
  const query = patterns.length > 0 ? new Query(language, patterns.join("\n")) : undefined;
  queries.set(spec.id, query);
  return query;
}

/**
 * Every call site of the tree, in document order (rows never decrease). One tree-sitter query per file:
 * walking every node from JavaScript would cost as much as the chunking itself.
 */
export function callSites(spec: LanguageSpec, root: Node): CallSite[] {
  const query = callQuery(spec, root.tree.language);
  if (!query) return [];
  const sites: CallSite[] = [];
  for (const { node } of query.captures(root)) {
    const name = calleeName(node);
    if (name) sites.push({ row: node.startPosition.row, name });
  }
  return sites;
}

/**
 * The distinct names called within each of the row ranges (0-based, inclusive, in file order and not
 * overlapping, as chunks are), at most MAX_CALLS_PER_CHUNK each.
 */
export function callsByRange(
  sites: readonly CallSite[],
  ranges: readonly { start: number; end: number }[],
): string[][] {
  const out = ranges.map(() => new Set<string>());
  let at = 0;
  for (const site of sites) {
    while (at < ranges.length && (ranges[at]?.end ?? 0) < site.row) at++;
    const range = ranges[at];
    const names = out[at];
    if (!range || !names) break;
    if (site.row >= range.start && names.size < MAX_CALLS_PER_CHUNK) names.add(site.name);
  }
  return out.map((names) => [...names]);
}
