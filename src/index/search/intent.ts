import type { ParsedQuery } from "./query.js";

/**
 * What a query is, judged from its text alone (pure, linear in its length):
 * - `question`: prose asking where or how something is done ("where is the session cookie signed?"), or a
 *   few keywords;
 * - `report`: a bug report (long, with code, tracebacks, "expected / actual");
 * - `identifier`: one name of the code (`parseQuery`, `Flask.run`, `session_cookie`, `class Router`);
 * - `path`: one file path (`src/router/trie.ts`, a link to a file);
 * - `location`: a path with a line (`src/a.ts:42`, `a.py:10:5`, `src/a.ts#L106`, `a.ts#L10-L20`, a
 *   GitHub, GitLab or Bitbucket link to a line), or the same in words (`src/a.ts line 42`,
 *   `a.py, lines 10-20`, `line 42 of src/a.ts`);
 * - `trace`: a stack trace and little else (Python, Node, Java, Go frames).
 */
export type IntentKind = "question" | "report" | "identifier" | "path" | "location" | "trace";

export interface QueryIntent {
  kind: IntentKind;
  /** A question about docs or tests: that kind of file is what it asks for. */
  about?: "docs" | "tests";
  /** An identifier: the name defined, and what qualifies it (`Flask.run` → `run`, `["Flask"]`). */
  name?: { name: string; qualifiers: string[] };
  /** A path or a location: the file as written (normalised to `a/b/c.ts`) and the lines it points at. */
  target?: { path: string; line?: number; endLine?: number };
}

/** A query longer than this is never one name or one path. */
const MAX_TOKEN = 2048;
/** A question is at most this long (longer prose is a report) and, unless it asks, one line. */
const MAX_QUESTION_CHARS = 400;
/** A text is a trace when this share of its (non-blank) text is in trace lines. */
const TRACE_SHARE = 0.6;

/** `a.b`, `A::b`, `A#b`, `a->b`, optionally called (`f()`): one name of the code. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*(?:\(\))?$/;
const DECLARATION =
  /^(?:def|class|function|func|fn|interface|type|struct|enum|trait|impl|const|let|var|module|method)\s+(\S+)$/;
/** Extensions that make a dotted word a file (`app.py`, not `Flask.run`). */
const FILE_EXTENSION =
  /\.(?:py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|mts|cts|go|rs|java|kt|kts|scala|groovy|c|h|cc|cpp|cxx|hpp|hh|cs|rb|php|swift|m|mm|lua|sh|bash|zsh|vue|svelte|md|mdx|rst|txt|adoc|json|jsonc|toml|yaml|yml|cfg|ini|conf|xml|html|css|scss|less|sql|proto|gradle|lock|env|dockerfile|mk|cmake)$/i;
const FILE_WITHOUT_EXTENSION =
  /^(?:Makefile|Dockerfile|Containerfile|Rakefile|Gemfile|Procfile|Jenkinsfile|README|LICENSE|CHANGELOG|CHANGES|NEWS)$/;
const PATH = /^[\w.@+~-]+(?:\/[\w.@+~-]+)*\/?$/;
/** `#L10`, `#L10-L20`, `#L10C3-L12C1` (GitHub), `#L10-20` (GitLab), `#lines-10:20` (Bitbucket). */
const LINE_ANCHOR = /^(?:L(\d+)(?:C\d+)?(?:-L?(\d+)(?:C\d+)?)?|lines-(\d+)(?::(\d+))?)$/;
/** `:42`, `:42:7`, `:10-20` after a path. */
const LINE_SUFFIX = /^(.*?):(\d+)(?::\d+|-(\d+))?$/;
/** A line or range in words: `line 42`, `lines 10-20`, `lines 10 to 20`, `L42`, `ln 42`. */
const SPOKEN_LINES = String.raw`(?:lines?|ln|l\.?)\s*(\d+)(?:\s*(?:-|–|to|through)\s*l?(\d+))?`;
/** `src/a.ts line 42`, `a.py, at lines 10-20`, `a.go (line 7)`. */
const PATH_THEN_LINES = new RegExp(String.raw`^(\S+?),?\s+\(?(?:at\s+|on\s+)?${SPOKEN_LINES}\)?$`, "i");
/** `line 42 of src/a.ts`, `lines 10-20 in a.py`. */
const LINES_THEN_PATH = new RegExp(String.raw`^${SPOKEN_LINES}\s+(?:of|in)\s+(\S+)$`, "i");
const LINK_HOSTS = new Set(["github.com", "gitlab.com", "bitbucket.org"]);

const TRACE_LINE = [
  /^Traceback \(most recent call last\)/,
  /^File "[^"]*", line \d+/,
  /^at \S/,
  /^\S+\.go:\d+/,
  /^\S+\.\w+:\d+(?::\d+)?$/,
  /^goroutine \d+ \[/,
  /^(?:panic|fatal error|created by|exit status|Caused by|Exception in thread|During handling of the above exception|The above exception)\b/,
  /^[^\s(]+\(.*\)(?: \+0x[0-9a-f]+)?$/,
  /^\.\.\. \d+ more/,
  /^[\w.$]*(?:Error|Exception|Warning|Interrupt|Exit)\b/,
  /^[~^]+$/,
];
const QUESTION_START =
  /^(?:where|how|what|which|why|when|who|whose|is|are|does|do|did|can|could|should|would|will|find|show|list|explain|locate)\b/i;
const ASKS_ABOUT_DOCS =
  /\b(?:docs?|documentation|documented|readme|changelog|change ?log|release notes|tutorials?|guides?|manual)\b/i;
/**
 * Tests as what is asked for: tests as a noun in the plural ("which tests…", "how do the tests…"), a test
 * asked for ("which test", "a test that"), "tested", test cases, suites, files, specs, fixtures,
 * benchmarks. Not a word that merely qualifies code: "the test client" is the API that tests use.
 */
const ASKS_ABOUT_TESTS =
  /\b(?:tests|tested|unit ?tests?|(?:which|what|a|any|the) (?:unit )?test\b(?! (?:client|helper|utilit(?:y|ies)|mode|runner)\b)|test (?:cases?|suites?|files?|coverage)|specs?|fixtures?|conftest|benchmarks?)\b/i;
/** Where a clause of a question starts: after `;`, `,`, `:` or a sentence's end. */
const CLAUSE_BREAK = /[;,:]\s+|[.!?]\s+/g;

const WRAPPERS = ["``", "''", '""', "<>", "()", "[]"];

/** Quotes, backticks and brackets around a one-word query, and the punctuation after it (linear). */
function unwrap(text: string): string {
  let from = 0;
  let to = text.length;
  for (;;) {
    while (from < to && /\s/.test(text[from] ?? "")) from++;
    while (to > from && /[\s,;?!.:]/.test(text[to - 1] ?? "")) to--;
    const pair = WRAPPERS.find((p) => to - from >= 2 && text[from] === p[0] && text[to - 1] === p[1]);
    if (!pair) break;
    from++;
    to--;
  }
  return text.slice(from, to);
}

function normalised(path: string): string {
  return path
    .replace(/\\/g, "/")
    .replace(/^[A-Za-z]:\//, "")
    .replace(/^(?:\.?\/)+/, "");
}

function looksLikePath(word: string): boolean {
  return (
    PATH.test(word) && (word.includes("/") || FILE_EXTENSION.test(word) || FILE_WITHOUT_EXTENSION.test(word))
  );
}

function lines(anchor: string): { line: number; endLine?: number } | undefined {
  const m = LINE_ANCHOR.exec(anchor);
  const line = Number(m?.[1] ?? m?.[3]);
  if (!m || !(line > 0)) return undefined;
  const end = Number(m[2] ?? m[4]);
  return end >= line ? { line, endLine: end } : { line };
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** A link to a file (or a line of one) on a code host: `…/<owner>/<repo>/blob/<ref>/<path>#L10`. */
function readLink(word: string): QueryIntent | undefined {
  let url: URL;
  try {
    url = new URL(word);
  } catch {
    return undefined;
  }
  if (!LINK_HOSTS.has(url.hostname.replace(/^www\./, ""))) return undefined;
  const parts = url.pathname.split("/").filter(Boolean).map(decoded);
  const at = parts.findIndex((part, i) => i >= 2 && (part === "blob" || part === "src"));
  const path = at < 0 ? "" : parts.slice(at + 2).join("/");
  if (!path) return undefined;
  const where = lines(url.hash.slice(1));
  return where ? { kind: "location", target: { path, ...where } } : { kind: "path", target: { path } };
}

/** A path with a line (`a.ts:42`, `a.py:10:5`, `a.ts:10-20`, `a.ts#L10-L20`), or a bare path. */
function readPathOrLocation(word: string): QueryIntent | undefined {
  if (/^https?:\/\//i.test(word)) return readLink(word);
  const hash = word.indexOf("#");
  if (hash > 0) {
    const path = normalised(word.slice(0, hash));
    const where = lines(word.slice(hash + 1));
    return where && looksLikePath(path) ? { kind: "location", target: { path, ...where } } : undefined;
  }
  const suffix = LINE_SUFFIX.exec(word);
  if (suffix) {
    const path = normalised(suffix[1] ?? "");
    const line = Number(suffix[2]);
    const end = Number(suffix[3]);
    if (!looksLikePath(path) || !(line > 0)) return undefined;
    return { kind: "location", target: { path, line, ...(end >= line ? { endLine: end } : {}) } };
  }
  const path = normalised(word);
  return looksLikePath(path) ? { kind: "path", target: { path } } : undefined;
}

/** A path with a line said in words (`src/a.ts line 42`, `line 42 of src/a.ts`): the whole text. */
function readSpokenLocation(text: string): QueryIntent | undefined {
  const before = PATH_THEN_LINES.exec(text);
  const after = before ? undefined : LINES_THEN_PATH.exec(text);
  const [written, first, last] = before
    ? [before[1], before[2], before[3]]
    : after
      ? [after[3], after[1], after[2]]
      : [];
  const path = normalised(unwrap(written ?? ""));
  const line = Number(first);
  if (!looksLikePath(path) || !(line > 0)) return undefined;
  const end = Number(last);
  return { kind: "location", target: { path, line, ...(end >= line ? { endLine: end } : {}) } };
}

function readIdentifier(word: string): QueryIntent | undefined {
  const declared = DECLARATION.exec(word)?.[1];
  const name = unwrap(declared ?? word);
  if (!IDENTIFIER.test(name)) return undefined;
  const segments = name
    .replace(/\(\)$/, "")
    .split(/\.|::|#|->/)
    .filter(Boolean);
  const last = segments.pop() ?? name;
  return { kind: "identifier", name: { name: last, qualifiers: segments } };
}

/** Non-blank lines, trimmed; only the first `limit` (a question or a trace is read from its start). */
function leadingLines(text: string, limit: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (from <= text.length && out.length < limit) {
    const end = text.indexOf("\n", from);
    const line = text.slice(from, end < 0 ? text.length : end).trim();
    if (line) out.push(line);
    if (end < 0) break;
    from = end + 1;
  }
  return out;
}

/**
 * The text starts as a trace does and most of it is frames, exceptions, or the source lines a Python
 * traceback quotes under a frame (counted in characters: a line of prose says more than a frame). A bug
 * report that quotes a trace starts with its title.
 */
function isTrace(text: string, query: ParsedQuery): boolean {
  if (query.frames.length === 0) return false;
  const isTraceLine = (line: string) => TRACE_LINE.some((pattern) => pattern.test(line));
  const lines = leadingLines(text, Number.POSITIVE_INFINITY).filter((line) => !line.startsWith("```"));
  if (!isTraceLine(lines[0] ?? "")) return false;
  let total = 0;
  let inTrace = 0;
  let quoted = false; // the line after a Python frame quotes the source
  for (const line of lines) {
    total += line.length;
    if (quoted || isTraceLine(line)) inTrace += line.length;
    quoted = line.startsWith("File ");
  }
  return inTrace >= TRACE_SHARE * total;
}

/** Asks where, how or what, or ends with a question mark. */
function asks(text: string): boolean {
  return QUESTION_START.test(text) || text.endsWith("?");
}

/**
 * Long text, several lines (a title and a body that asks nothing), code blocks, frames, "expected …
 * but": a bug report rather than a question. A short text that asks is a question all the same.
 */
function isReport(text: string, query: ParsedQuery): boolean {
  if (asks(text) && text.length <= MAX_QUESTION_CHARS) return false;
  if (query.frames.length > 0 || text.includes("```") || text.length > MAX_QUESTION_CHARS) return true;
  const first = leadingLines(text, 2);
  if (first.length > 1) return true;
  return /\bexpected\b/i.test(text) && /\b(?:actual|got|instead|but)\b/i.test(text);
}

/**
 * The part of a question that asks: from its first clause that starts with a question word to the end.
 * What comes before sets the scene ("the docs say a session lasts a month; where is its expiry computed?",
 * "in tests, how can I …"): docs or tests named there are where the asker read, not what they ask for.
 * A question with no such clause is all asking.
 */
function askingPart(text: string): string {
  if (QUESTION_START.test(text)) return text;
  for (const m of text.matchAll(CLAUSE_BREAK)) {
    const rest = text.slice((m.index ?? 0) + m[0].length);
    if (QUESTION_START.test(rest)) return rest;
  }
  return text;
}

/**
 * Reads what kind of query `text` is (see IntentKind); `query` is `parseQuery(text)`. One word is a
 * location, a path or an identifier when it reads as one; a longer text is a trace, a report or a question.
 */
export function classifyQuery(text: string, query: ParsedQuery): QueryIntent {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_TOKEN) {
    const word = unwrap(trimmed);
    if (!/\s/.test(word)) {
      const named = readPathOrLocation(word) ?? readIdentifier(word);
      if (named) return named;
    } else if (DECLARATION.test(word)) {
      const declared = readIdentifier(word);
      if (declared) return declared;
    } else {
      const spoken = readSpokenLocation(word);
      if (spoken) return spoken;
    }
  }
  if (isTrace(trimmed, query)) return { kind: "trace" };
  if (isReport(trimmed, query)) return { kind: "report" };
  const asked = askingPart(trimmed);
  const about = ASKS_ABOUT_DOCS.test(asked) ? "docs" : ASKS_ABOUT_TESTS.test(asked) ? "tests" : undefined;
  return { kind: "question", ...(about ? { about } : {}) };
}
