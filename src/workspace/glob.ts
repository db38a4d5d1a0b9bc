/**
 * Globs over workspace-relative paths, as agents, MCP clients and the CLI write them to narrow a search
 * (`src/**\/*.ts`, `*.{py,pyi}`, `tests/[a-c]*`). Pure, no I/O.
 *
 * The pattern comes from untrusted callers, so matching must stay cheap whatever it is: a glob compiled to
 * a backtracking regular expression (picomatch 4) took 150 s to test one path, whose name is 43
 * characters long, against `**\/*?*?…*?#` with twelve `*?`; ten took 23 s, eight 1.5 s
 * (bench/speed/hostile-glob.mjs). Here a segment is matched
 * by the greedy algorithm that backs up only to the last `*` (time ≤ pattern × segment), and `**` by
 * dynamic programming over segments (time ≤ pattern segments × path segments); braces are expanded up to
 * MAX_ALTERNATIVES patterns.
 *
 * Syntax (gitignore's, as ripgrep's `--glob` reads it): `*` any run of characters within a segment, `?`
 * one character, `[abc]`, `[a-z]`, `[!a]` or `[^a]` one of a set, `\` escapes the next character, `**` as
 * a whole segment any number of segments, `{a,b}` either alternative (nested allowed). A pattern with no
 * `/`, or only a trailing one, matches at any depth (`*.ts`, `build/`); one with a `/` before its end is
 * anchored at the root (`src/*.ts`, `./a.py`, `/a.py`). A dot at the start of a name needs nothing
 * special (`*` matches `.env`).
 */

import { z } from "zod";

/** At most this many patterns after brace expansion. */
const MAX_ALTERNATIVES = 256;

/** A glob that cannot be read: the message is one line, fit to show to whoever wrote it. */
export class GlobError extends Error {
  override readonly name = "GlobError";
}

/**
 * One step of a segment's pattern, each but `star` taking exactly one character: what matchSegment reads.
 * Exported for the gitignore matcher (ignore-match.ts), which reads git's syntax into the same tokens.
 */
export type Token =
  | { kind: "char"; char: string }
  | { kind: "any" }
  | { kind: "star" }
  | { kind: "set"; negated: boolean; ranges: [string, string][] };

/** A segment's tokens, or `globstar` for a `**` segment. */
type Segment = Token[] | "globstar";

/** Whether `path` (workspace-relative, `/`-separated) matches the glob; throws GlobError for a bad one. */
export function compileGlob(pattern: string): (path: string) => boolean {
  const compiled = expandBraces(pattern).map(compileOne);
  return (path) => {
    const segments = path.split("/");
    return compiled.some((glob) => matchSegments(glob, segments));
  };
}

/** A glob as a parameter at a boundary (the engine's API, an agent's tool): refused when it cannot be read. */
export const globSchema = z
  .string()
  .max(1000)
  .superRefine((pattern, context) => {
    try {
      compileGlob(pattern);
    } catch (error) {
      if (!(error instanceof GlobError)) throw error;
      context.addIssue({ code: z.ZodIssueCode.custom, message: error.message });
    }
  });

function compileOne(pattern: string): Segment[] {
  // a slash before the end anchors the pattern (`./a.py` and `/a.py` too); `src/` alone is any `src` folder
  const anchored = pattern.replace(/\/+$/, "").includes("/");
  const body = pattern.replace(/^\.\//, "").replace(/^\/+/, "");
  if (body === "") throw new GlobError(`glob ${JSON.stringify(pattern)} matches nothing`);
  const segments: Segment[] = body
    .split("/")
    .filter((segment, i, all) => segment !== "" || i === all.length - 1)
    .map((segment) => (segment === "**" ? "globstar" : tokens(segment, pattern)));
  // `src/` means the folder: everything below it
  if (segments.at(-1)?.length === 0) segments[segments.length - 1] = "globstar";
  return anchored ? segments : ["globstar", ...segments];
}

function tokens(segment: string, pattern: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i] as string;
    if (char === "\\") {
      const next = segment[i + 1];
      if (next === undefined) throw new GlobError(`glob ${JSON.stringify(pattern)} ends with a lone \\`);
      out.push({ kind: "char", char: next });
      i++;
    } else if (char === "*") {
      if (out.at(-1)?.kind !== "star") out.push({ kind: "star" }); // `**` within a segment is `*`
    } else if (char === "?") {
      out.push({ kind: "any" });
    } else if (char === "[") {
      const set = readSet(segment, i);
      if (set) {
        out.push(set.token);
        i = set.end;
      } else out.push({ kind: "char", char });
    } else out.push({ kind: "char", char });
  }
  return out;
}

/** The set that starts at `start` (`[`) and the index of its `]`, or undefined when it is not closed. */
function readSet(segment: string, start: number): { token: Token; end: number } | undefined {
  let i = start + 1;
  const negated = segment[i] === "!" || segment[i] === "^";
  if (negated) i++;
  const ranges: [string, string][] = [];
  let first = true;
  for (; i < segment.length; i++) {
    let char = segment[i] as string;
    if (char === "]" && !first) return { token: { kind: "set", negated, ranges }, end: i };
    first = false;
    if (char === "\\" && i + 1 < segment.length) char = segment[++i] as string;
    if (segment[i + 1] === "-" && i + 2 < segment.length && segment[i + 2] !== "]") {
      let last = segment[i + 2] as string;
      i += 2;
      if (last === "\\" && i + 1 < segment.length) last = segment[++i] as string;
      ranges.push([char, last]);
    } else ranges.push([char, char]);
  }
  return undefined;
}

/** Whether a token other than `star` takes `char`. */
export function matchesOne(token: Exclude<Token, { kind: "star" }>, char: string): boolean {
  if (token.kind === "char") return token.char === char;
  if (token.kind === "any") return true;
  for (const [low, high] of token.ranges) if (low <= char && char <= high) return !token.negated;
  return token.negated;
}

/**
 * One segment against one name: on a mismatch, back up to the last `*` and let it take one more
 * character. Every other token takes exactly one character, which is what makes that enough.
 */
export function matchSegment(pattern: readonly Token[], name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let taken = 0;
  while (n < name.length) {
    const token = pattern[p];
    if (token && token.kind !== "star" && matchesOne(token, name[n] as string)) {
      p++;
      n++;
    } else if (token?.kind === "star") {
      star = p++;
      taken = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++taken;
    } else return false;
  }
  while (pattern[p]?.kind === "star") p++;
  return p === pattern.length;
}

/** The pattern's segments against the path's, `**` taking any number of them; memoised on positions. */
function matchSegments(pattern: readonly Segment[], names: readonly string[]): boolean {
  const known = new Map<number, boolean>();
  const width = names.length + 1;
  const from = (p: number, n: number): boolean => {
    const key = p * width + n;
    const memo = known.get(key);
    if (memo !== undefined) return memo;
    const segment = pattern[p];
    let result: boolean;
    if (segment === undefined) result = n === names.length;
    else if (segment === "globstar") result = from(p + 1, n) || (n < names.length && from(p, n + 1));
    else result = n < names.length && matchSegment(segment, names[n] as string) && from(p + 1, n + 1);
    known.set(key, result);
    return result;
  };
  return from(0, 0);
}

/** `a{b,c{d,e}}f` → `abf`, `acdf`, `acef`; an unclosed or single-item brace stays as written. */
function expandBraces(pattern: string): string[] {
  const open = findOpenBrace(pattern);
  if (!open) return [pattern];
  const { start, end, alternatives } = open;
  const out: string[] = [];
  for (const alternative of alternatives) {
    for (const expanded of expandBraces(pattern.slice(0, start) + alternative + pattern.slice(end + 1))) {
      out.push(expanded);
      if (out.length > MAX_ALTERNATIVES)
        throw new GlobError(`glob ${JSON.stringify(pattern)} has more than ${MAX_ALTERNATIVES} alternatives`);
    }
  }
  return out;
}

/** The first `{…}` with a top-level comma: where it starts and ends, and its alternatives. */
function findOpenBrace(pattern: string): { start: number; end: number; alternatives: string[] } | undefined {
  for (let start = 0; start < pattern.length; start++) {
    if (pattern[start] === "\\") {
      start++;
      continue;
    }
    if (pattern[start] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let i = start; i < pattern.length; i++) {
      const char = pattern[i];
      if (char === "\\") i++;
      else if (char === "{") depth++;
      else if (char === "," && depth === 1) commas.push(i);
      else if (char === "}" && --depth === 0) {
        if (commas.length === 0) break; // `{a}`: literal
        const bounds = [start, ...commas, i];
        const alternatives = bounds.slice(1).map((to, k) => pattern.slice((bounds[k] as number) + 1, to));
        return { start, end: i, alternatives };
      }
    }
  }
  return undefined;
}
