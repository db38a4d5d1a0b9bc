/**
 * Gitignore rules over workspace-relative paths, matched as git matches them (its dir.c and wildmatch.c),
 * in time bounded by pattern × path whatever the patterns. Pure, no I/O.
 *
 * The rules come from the workspace, which may be a hostile clone: the `ignore` package compiled each
 * pattern to a backtracking regular expression, and one `.umbraignore` line, `a/**\/` ten times then `x`,
 * held the test of one path 40 folders deep for 18 s (bench/speed/hostile-ignore.mjs), each `**` more
 * multiplying it: indexing, every sandboxed command's start and search hung on it. Here a pattern is read
 * once into wildmatch's tokens; one without a `/` is matched against the name by glob.ts's greedy matcher
 * (time ≤ pattern × name), one with a `/` against the path by running its automaton over the path's
 * characters (time ≤ pattern × path), after a literal start and end are compared.
 *
 * Semantics (gitignore(5); test/workspace/ignore-parity.test.ts compares them with `git check-ignore`):
 * the last rule that matches decides, `!` re-includes, and a path below an ignored folder is ignored by
 * that folder's rule whatever comes after it. A trailing `/` restricts a rule to folders (given here with
 * a trailing `/`). A pattern without any other `/` matches the name at any depth; one with a `/` is
 * matched against the path from the root (one leading `/` dropped). `*`, `?` and `[…]` never match `/`;
 * a run of `*` that fills a segment (`**`, `***`) spans folders: `**\/` zero or more, `/**` at the end
 * everything below. As in wildmatch, a run of `*` right after the pattern's literal start counts as
 * filling a segment too (`a/b**\/c` matches `a/bc` and `a/bx/y/c`), and one before an escaped slash spans
 * one folder at least. Names and patterns are compared as UTF-8 bytes (`?` takes one byte); with
 * `ignoreCase`, ASCII letters are folded with wildmatch's quirks (an escaped capital, or a capital alone
 * in a class, matches nothing). A pattern git cannot read (an unclosed `[`, an unknown `[:class:]`, a
 * lone trailing `\`) matches nothing. Blank lines, comments and trailing spaces are the reader's
 * (ignore-rules.ts), as is rebasing a nested file's patterns onto the root.
 */

import { matchesOne, matchSegment, type Token } from "./glob.js";

/** One pattern of an ignore file, rebased onto the workspace root, and where it came from. */
export interface SourcedPattern {
  pattern: string;
  /** The ignore file the pattern came from, as reported in `SkippedEntry.detail`. */
  mark: string;
}

/** What the rules say of a path: ignored or not, and the mark of the rule that decided (none decided). */
export interface IgnoreVerdict {
  readonly ignored: boolean;
  readonly mark: string | undefined;
}

const UNDECIDED: IgnoreVerdict = Object.freeze({ ignored: false, mark: undefined });

/**
 * A token of a pattern matched against a whole path: glob.ts's, `globstar` (any run of characters,
 * `/` included) and `skip` (nothing, or the `to - 1` tokens that follow it: `**\/` is skip, globstar, `/`).
 */
type PathToken = Token | { kind: "globstar" } | { kind: "skip"; to: number };

interface Rule {
  /** Its place among the rules: a later one wins. */
  readonly index: number;
  readonly dirOnly: boolean;
  /** Matched against the path's last name (a pattern without `/`), else against the whole path. */
  readonly byName: boolean;
  /** The name or path it matches when its pattern holds no wildcard: then it is looked up, not tried. */
  readonly literal: string | undefined;
  readonly matches: (subject: string) => boolean;
  readonly verdict: IgnoreVerdict;
}

/** The last rule for one exact name or path: for a folder, and for a file (which `dir/` rules skip). */
interface Latest {
  readonly any: Rule;
  readonly file: Rule | undefined;
}

/**
 * Rules of ignore files in the order git applies them, each compiled once; a later rule wins. Rules
 * without a wildcard (most of a .gitignore: `node_modules`, `.env`, `/dist`) are looked up by the name
 * or path they match, the others tried from the last back to the latest found so. Folder verdicts are
 * remembered, since every path below a folder asks for them again.
 */
export class IgnoreRules {
  private readonly folders = new Map<string, IgnoreVerdict>();

  private constructor(
    private readonly count: number,
    private readonly names: ReadonlyMap<string, Latest>,
    private readonly paths: ReadonlyMap<string, Latest>,
    private readonly others: readonly Rule[],
    private readonly ignoreCase: boolean,
  ) {}

  /** The rules of `patterns`; `ignoreCase` folds ASCII letters as git's `core.ignoreCase` does. */
  static compile(patterns: readonly SourcedPattern[], { ignoreCase = false } = {}): IgnoreRules {
    return new IgnoreRules(0, new Map(), new Map(), [], ignoreCase).extend(patterns);
  }

  /** These rules followed by those of `patterns`, which take precedence; this set when they add none. */
  extend(patterns: readonly SourcedPattern[]): IgnoreRules {
    const names = new Map(this.names);
    const paths = new Map(this.paths);
    const others = [...this.others];
    let count = this.count;
    for (const pattern of patterns) {
      const rule = compileRule(pattern, count, this.ignoreCase);
      if (!rule) continue;
      count++;
      if (rule.literal === undefined) {
        others.push(rule);
        continue;
      }
      const exact = rule.byName ? names : paths;
      const before = exact.get(rule.literal);
      exact.set(rule.literal, { any: rule, file: rule.dirOnly ? before?.file : rule });
    }
    return count === this.count ? this : new IgnoreRules(count, names, paths, others, this.ignoreCase);
  }

  /**
   * The verdict on `path` (root-relative, `/`-separated; a folder with a trailing `/`): that of the
   * topmost ignored folder above it if there is one (git does not look inside it), else its own.
   */
  test(path: string): IgnoreVerdict {
    const isDir = path.endsWith("/");
    const bare = isDir ? path.slice(0, -1) : path;
    if (bare === "") return UNDECIDED;
    const known = isDir ? this.folders.get(bare) : undefined;
    if (known) return known;
    const above = this.folderAbove(bare);
    if (above.ignored) return above;
    if (!isDir) return this.decide(bare, false);
    const verdict = this.decide(bare, true);
    this.folders.set(bare, verdict);
    return verdict;
  }

  /** The verdict inherited from the folders above `path`, deciding (and remembering) each not yet seen. */
  private folderAbove(path: string): IgnoreVerdict {
    const unseen: string[] = [];
    let inherited = UNDECIDED;
    for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) {
      const folder = path.slice(0, slash);
      const known = this.folders.get(folder);
      if (known) {
        inherited = known;
        break;
      }
      unseen.push(folder);
    }
    for (let i = unseen.length - 1; i >= 0; i--) {
      const folder = unseen[i] as string;
      if (!inherited.ignored) inherited = this.decide(folder, true);
      this.folders.set(folder, inherited);
    }
    return inherited;
  }

  /** The last rule that matches `path` itself: the latest exact one, unless a later wildcard one matches. */
  private decide(path: string, isDir: boolean): IgnoreVerdict {
    const subject = subjectOf(path, this.ignoreCase);
    const name = subject.slice(subject.lastIndexOf("/") + 1);
    const byName = this.names.get(name);
    const byPath = this.paths.get(subject);
    const named = isDir ? byName?.any : byName?.file;
    const pathed = isDir ? byPath?.any : byPath?.file;
    const exact = named && (!pathed || named.index > pathed.index) ? named : pathed;
    const floor = exact?.index ?? -1;
    for (let i = this.others.length - 1; i >= 0; i--) {
      const rule = this.others[i] as Rule;
      if (rule.index < floor) break;
      if (rule.dirOnly && !isDir) continue;
      if (rule.matches(rule.byName ? name : subject)) return rule.verdict;
    }
    return exact?.verdict ?? UNDECIDED;
  }
}

/**
 * One folder name against one segment of a gitignore pattern (no `/`), as git's wildmatch reads it;
 * a segment git cannot read matches nothing.
 */
export function segmentMatches(pattern: string, name: string, { ignoreCase = false } = {}): boolean {
  const matches = nameMatcher(toBytes(pattern), ignoreCase);
  return matches?.(subjectOf(name, ignoreCase)) === true;
}

/**
 * The rule of one pattern (`!`, a trailing `/`, by name or by path) at `index`, or undefined when it
 * matches nothing (it changes no verdict).
 */
function compileRule(
  { pattern, mark }: SourcedPattern,
  index: number,
  ignoreCase: boolean,
): Rule | undefined {
  let body = toBytes(pattern);
  const negative = body.startsWith("!");
  if (negative) body = body.slice(1);
  const dirOnly = body.endsWith("/");
  if (dirOnly) body = body.slice(0, -1);
  const byName = !body.includes("/");
  if (!byName && body.startsWith("/")) body = body.slice(1);
  const matches = byName ? nameMatcher(body, ignoreCase) : pathMatcher(body, ignoreCase);
  if (!matches) return undefined;
  const literal = literalLength(body, 0) === body.length ? foldAscii(body, ignoreCase) : undefined;
  return { index, dirOnly, byName, literal, matches, verdict: Object.freeze({ ignored: !negative, mark }) };
}

/** A pattern without `/` against a name (git's match_basename): a literal, `*literal`, or wildmatch. */
function nameMatcher(body: string, ignoreCase: boolean): ((name: string) => boolean) | undefined {
  if (body === "") return undefined;
  if (literalLength(body, 0) === body.length) {
    const literal = foldAscii(body, ignoreCase);
    return (name) => name === literal;
  }
  if (body[0] === "*" && literalLength(body, 1) === body.length) {
    const tail = foldAscii(body.slice(1), ignoreCase);
    return (name) => name.endsWith(tail);
  }
  const tokens = nameTokens(body, ignoreCase);
  return tokens && guarded("", tokens, (name) => matchSegment(tokens, name));
}

/**
 * A pattern with a `/` against a path (git's match_pathname): its literal start compared as is, the rest
 * by the automaton.
 */
function pathMatcher(body: string, ignoreCase: boolean): ((path: string) => boolean) | undefined {
  const start = literalLength(body, 0);
  const prefix = foldAscii(body.slice(0, start), ignoreCase);
  if (start === body.length) return body === "" ? undefined : (path) => path === prefix;
  const tokens = pathTokens(body, start, ignoreCase);
  return tokens && guarded(prefix, tokens, (path) => automatonMatches(tokens, path, prefix.length));
}

/**
 * `match` behind the cheap refusals of a subject that `prefix` then `tokens` cannot match: too short, or
 * without the literal start, end or longest literal run that every match holds.
 */
function guarded(
  prefix: string,
  tokens: readonly PathToken[],
  match: (subject: string) => boolean,
): (subject: string) => boolean {
  const minLength = prefix.length + shortest(tokens);
  const runs = literalRuns(tokens);
  const head = runs[0]?.start === 0 ? prefix + runs[0].text : prefix;
  const last = runs.at(-1);
  const tail = last?.end === tokens.length ? last.text : "";
  const longest = runs.reduce((best, run) => (run.text.length > best.length ? run.text : best), "");
  return (subject) =>
    subject.length >= minLength &&
    subject.startsWith(head) &&
    subject.endsWith(tail) &&
    subject.includes(longest, prefix.length) &&
    match(subject);
}

/** The runs of literal tokens every match holds, in order, and where each starts and ends (a skip's `/` is none). */
function literalRuns(tokens: readonly PathToken[]): { text: string; start: number; end: number }[] {
  const runs: { text: string; start: number; end: number }[] = [];
  let text = "";
  for (let p = 0; p <= tokens.length; p++) {
    const token = tokens[p];
    if (token?.kind === "char" && tokens[p - 2]?.kind !== "skip") text += token.char;
    else if (text !== "") {
      runs.push({ text, start: p - text.length, end: p });
      text = "";
    }
  }
  return runs;
}

/** The fewest characters `tokens` take: one each but a `*` run's, none for what a skip may pass over. */
function shortest(tokens: readonly PathToken[]): number {
  let count = 0;
  for (let p = 0; p < tokens.length; p++) {
    const token = tokens[p] as PathToken;
    if (token.kind === "skip") p += token.to - 1;
    else if (token.kind !== "star" && token.kind !== "globstar") count++;
  }
  return count;
}

/** How many characters from `from` on are literal, none of wildmatch's `*?[\`. */
function literalLength(body: string, from: number): number {
  let i = from;
  while (i < body.length && !"*?[\\".includes(body[i] as string)) i++;
  return i - from;
}

/** A name pattern's tokens (a run of `*` is one `*`), or undefined when git gives up on it. */
function nameTokens(body: string, ignoreCase: boolean): Token[] | undefined {
  const tokens: Token[] = [];
  for (let i = 0; i < body.length; ) {
    if (body[i] === "*") {
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
      i++;
      continue;
    }
    const read = readToken(body, i, ignoreCase);
    if (!read) return undefined;
    tokens.push(read.token);
    i = read.next;
  }
  return tokens;
}

/**
 * A path pattern's tokens from `start` (the end of its literal start), or undefined when git gives up on
 * it. A run of `*` spans folders when it follows `/` or `start` and comes before `/`, `\/` or the end.
 */
function pathTokens(body: string, start: number, ignoreCase: boolean): PathToken[] | undefined {
  const tokens: PathToken[] = [];
  for (let i = start; i < body.length; ) {
    if (body[i] !== "*") {
      const read = readToken(body, i, ignoreCase);
      if (!read) return undefined;
      tokens.push(read.token);
      i = read.next;
      continue;
    }
    let end = i;
    while (body[end] === "*") end++;
    const spans =
      end - i >= 2 &&
      (i === start || body[i - 1] === "/") &&
      (end === body.length || body[end] === "/" || (body[end] === "\\" && body[end + 1] === "/"));
    if (!spans) tokens.push({ kind: "star" });
    else if (body[end] !== "/") tokens.push({ kind: "globstar" });
    else {
      // `**/`: nothing, or any run that ends with a `/`
      tokens.push({ kind: "skip", to: 3 }, { kind: "globstar" }, { kind: "char", char: "/" });
      end++;
    }
    i = end;
  }
  return tokens;
}

/** The token at `i` (not `*`) and where the next starts, or undefined when git gives up on the pattern. */
function readToken(body: string, i: number, ignoreCase: boolean): { token: Token; next: number } | undefined {
  const char = body[i] as string;
  if (char === "\\") {
    // an escaped character is compared as written, never folded; a lone trailing `\` matches nothing
    const escaped = body[i + 1];
    return escaped === undefined ? undefined : { token: { kind: "char", char: escaped }, next: i + 2 };
  }
  if (char === "?") return { token: { kind: "any" }, next: i + 1 };
  if (char === "[") return readClass(body, i, ignoreCase);
  return { token: { kind: "char", char: foldAscii(char, ignoreCase) }, next: i + 1 };
}

/** wildmatch's character classes, ASCII only (git's own ctype): pairs of first and last characters. */
const POSIX_CLASSES: ReadonlyMap<string, string> = new Map([
  ["alnum", "09AZaz"],
  ["alpha", "AZaz"],
  ["blank", "  \t\t"],
  ["cntrl", "\x00\x1f\x7f\x7f"],
  ["digit", "09"],
  ["graph", "!~"],
  ["lower", "az"],
  ["print", " ~"],
  ["punct", "!/:@[`{~"],
  ["space", "  \t\n\r\r"],
  ["upper", "AZ"],
  ["xdigit", "09AFaf"],
]);

/**
 * The class that opens at `start`, read as wildmatch reads it (its members one by one: `\` escapes, `-`
 * after a member makes a range with it, `[:name:]`), and where the next token starts; undefined when git
 * gives up on the pattern (no closing `]`, an unknown class name). With `ignoreCase` the path is folded
 * to small letters, so a member is compared as written but a range's capitals also stand for their small
 * letters, as in wildmatch.
 */
function readClass(
  body: string,
  start: number,
  ignoreCase: boolean,
): { token: Token; next: number } | undefined {
  const ranges: [string, string][] = [];
  const addRange = (low: string, high: string): void => {
    if (low > high) return;
    ranges.push([low, high]);
    if (ignoreCase && low <= "Z" && high >= "A")
      ranges.push([foldAscii(low < "A" ? "A" : low, true), foldAscii(high > "Z" ? "Z" : high, true)]);
  };
  let p = start + 1;
  const negated = body[p] === "!" || body[p] === "^";
  if (negated) p++;
  /** The member a `-` would start a range from ("" after a range or a class, as wildmatch's 0). */
  let previous = "";
  for (let char = body[p]; ; ) {
    if (char === undefined) return undefined;
    let member = char;
    if (char === "\\") {
      const escaped = body[++p];
      if (escaped === undefined) return undefined;
      member = escaped;
      ranges.push([member, member]);
    } else if (char === "-" && previous !== "" && body[p + 1] !== undefined && body[p + 1] !== "]") {
      let high = body[++p] as string;
      if (high === "\\") {
        const escaped = body[++p];
        if (escaped === undefined) return undefined;
        high = escaped;
      }
      addRange(previous, high);
      member = "";
    } else if (char === "[" && body[p + 1] === ":") {
      const close = body.indexOf("]", p + 2);
      if (close < 0) return undefined;
      // no `:]` before the `]`: the `[` is a member like any other
      if (close === p + 2 || body[close - 1] !== ":") ranges.push(["[", "["]);
      else {
        const named = POSIX_CLASSES.get(body.slice(p + 2, close - 1));
        if (named === undefined) return undefined;
        for (let i = 0; i < named.length; i += 2) addRange(named[i] as string, named[i + 1] as string);
        member = "";
        p = close;
      }
    } else ranges.push([member, member]);
    previous = member;
    char = body[++p];
    if (char === "]") return { token: { kind: "set", negated, ranges }, next: p + 1 };
  }
}

/** The automaton's two rows of states, reused by every run (a run never starts another). */
let scratch = new Uint8Array(64);

/**
 * Whether `tokens` match `path` from `from` on: the set of token positions reached so far is carried
 * over the characters (time ≤ tokens × characters, whatever the tokens), stopping when it is empty.
 */
function automatonMatches(tokens: readonly PathToken[], path: string, from: number): boolean {
  const size = tokens.length + 1;
  if (scratch.length < 2 * size) scratch = new Uint8Array(4 * size);
  const states = scratch;
  let now = 0;
  let next = size;
  states.fill(0, 0, size);
  states[0] = 1;
  closeOver(tokens, states, now);
  for (let n = from; n < path.length; n++) {
    const char = path[n] as string;
    states.fill(0, next, next + size);
    let alive = false;
    for (let p = 0; p < tokens.length; p++) {
      if (states[now + p] === 0) continue;
      const token = tokens[p] as PathToken;
      if (token.kind === "globstar" || token.kind === "star") {
        // `*` stays where it is on any character but `/`; a run that spans folders, on any
        if (token.kind === "star" && char === "/") continue;
        states[next + p] = 1;
        alive = true;
      } else if (
        token.kind !== "skip" &&
        (token.kind === "char" || char !== "/") &&
        matchesOne(token, char)
      ) {
        // `?` and classes never take `/`
        states[next + p + 1] = 1;
        alive = true;
      }
    }
    if (!alive) return false;
    closeOver(tokens, states, next);
    [now, next] = [next, now];
  }
  return states[now + tokens.length] === 1;
}

/** Adds the positions reached without a character (past a `*` run, over a skip: all forward) to a row. */
function closeOver(tokens: readonly PathToken[], states: Uint8Array, row: number): void {
  for (let p = 0; p < tokens.length; p++) {
    if (states[row + p] === 0) continue;
    const token = tokens[p] as PathToken;
    if (token.kind === "star" || token.kind === "globstar") states[row + p + 1] = 1;
    else if (token.kind === "skip") {
      states[row + p + 1] = 1;
      states[row + p + token.to] = 1;
    }
  }
}

/** A path or name as wildmatch sees it: its UTF-8 bytes (one character each), folded when asked. */
function subjectOf(text: string, ignoreCase: boolean): string {
  return foldAscii(toBytes(text), ignoreCase);
}

/** The UTF-8 bytes of `text` as characters 0–255 (ASCII text as it is). */
function toBytes(text: string): string {
  return /[\u0080-\uffff]/.test(text) ? Buffer.from(text, "utf8").toString("latin1") : text;
}

/** `text` with ASCII capitals made small when `ignoreCase` (git folds no other letter). */
function foldAscii(text: string, ignoreCase: boolean): string {
  return ignoreCase && /[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase()) : text;
}
