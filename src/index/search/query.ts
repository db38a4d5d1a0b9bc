import { codeTokens, identifiers, splitIdentifier } from "../tokenize.js";

/** A stack-trace frame found in a query (or a link to a line of a file, which points the same way). */
export interface Frame {
  path: string;
  line?: number;
  symbol?: string;
}

/** What a query asks for: weighted lexical terms, code identifiers, file paths and stack frames. */
export interface ParsedQuery {
  text: string;
  /** The text without noise such as environment and version dumps (what the vector leg embeds). */
  cleaned: string;
  /** Lexical term → weight (identifiers, paths and frames weigh more than prose). */
  terms: Map<string, number>;
  /** Identifiers that look like code (snake_case, camelCase, dotted, called), as written. */
  identifiers: string[];
  /** Paths or dotted module names mentioned, normalised to `a/b/c` (extension kept when given). */
  paths: string[];
  /** Frames, the innermost of each trace first (Python's last), then links to a line as written. */
  frames: Frame[];
}

const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between
  both but by can could did do does doing don down during each few for from further had has have having he her here
  hers him his how i if in into is it its itself just let me more most my no nor not now of off on once only or
  other our out over own same she should so some such than that the their them then there these they this those
  through to too under until up very was we were what when where which while who whom why will with would you your
  yours get got use used using like want wants work works seems seem see way thing things something example issue
  bug problem expected actual behavior behaviour result results output error errors following instead however still
  even though make makes made case cases doesn isn aren wasn didn shouldn couldn won ll ve re thanks please hi hello
  describe happened happen minimal complete verifiable reproduce reproducible reproduction environment installed
  steps anything else need know relevant log logs mvce confirmation version versions none true false yes no
  would should could might maybe think tried try trying currently current new old also`
    .split(/\s+/)
    .filter(Boolean),
);

/** A word of prose that says nothing about the code (`the`, `how`, `expected`), lower-cased. */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Extensions that make a word a file name (`conf.py`, `src/app.ts`). */
const FILE_EXTENSIONS =
  "py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|c|h|cc|cpp|cxx|hpp|hh|cs|rb|php|md|rst|txt|json|toml|yaml|yml|cfg|ini|html|css|scss|vue|svelte|swift|scala|sh";
const FILE_PATH = new RegExp(`(?:[A-Za-z0-9_.-]+\\/)*[A-Za-z0-9_.-]+\\.(?:${FILE_EXTENSIONS})\\b`, "g");
const FILE_NAME = new RegExp(`\\.(?:${FILE_EXTENSIONS})$`);
/** A run of the characters paths are made of; FILE_PATH is matched within runs no longer than MAX_PATH. */
const PATH_RUN = /[A-Za-z0-9_./-]+/g;
/** Longer runs are not paths, and FILE_PATH (which backtracks) would cost their length squared. */
const MAX_PATH = 512;
const PYTHON_FRAME = /File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<>][\w<>]*))?/g;
const JS_FRAME = /at (?:([\w$.<>]+) )?\(?((?:[A-Za-z]:)?[^\s():]+\.[A-Za-z]+):(\d+)(?::\d+)?\)?/g;
/** A link to a line of a file in a repository (`…/blob/<ref>/path/to/file.py#L35`): a pointer like a frame. */
const LINE_LINK =
  /https?:\/\/(?:github\.com|gitlab\.com|bitbucket\.org)\/[^\s/]+\/[^\s/]+\/(?:-\/)?(?:blob|src)\/[^\s/]+\/([^\s#?]+)#L(\d+)/g;
/** Indented by blanks, not by blank lines: `^\s*` went on over the blank lines after every line start. */
const GO_FRAME = /^[^\S\n\r\u2028\u2029]*\/?((?:[\w.-]+\/)*[\w.-]+\.go):(\d+)/gm;
/** `at com.example.Foo.bar(Foo.java:42)`: the package names the folders of the file. */
const JAVA_FRAME = /\bat ((?:[\w$]+\.)+)([\w$<>]+)\(([\w$-]+\.(?:java|kt|scala|groovy)):(\d+)\)/g;
const DOTTED = /\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b/g;
const CALLED = /\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g;
/** A method or module function called as `obj.name(`: code, even when the name is an English word. */
const ATTRIBUTE_CALL = /\.([A-Za-z_][A-Za-z0-9_]*)\(/g;
const LITERALS = new Set(["True", "False", "None", "true", "false", "null", "nil", "undefined", "NaN"]);
/** An inline code span holding just a (dotted) name, such as `Quantity` or `xr.where`: a code reference. */
const NAME_SPAN = /`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(\))?`/g;
const CODE_SPAN = /```[\s\S]*?```|`[^`\n]+`/g;

/**
 * `key: value` (a bullet, a key of 1 to 40 name characters or spaces, `:` or `=`, a short value), read so
 * that no run of blanks can be shared among the parts in more than one way (that was quadratic in a long
 * line of blanks): a key starts with a name character, or is blanks only (the second alternative).
 */
const KEY_VALUE_LINE =
  /^\s*(?:[-*]\s*)?[A-Za-z0-9_.()-][A-Za-z0-9_.() -]{0,39}\s*[:=]\s*\S.{0,80}$|^(?:\s*[-*])?[^\S ]* \s*[:=]\s*\S.{0,80}$/;
const DETAILS_BLOCK = /<details>[\s\S]*?<\/details>/gi;

/**
 * Drops what bug reports carry that is not about the code: environment and version dumps (runs of four or
 * more short `key: value` lines, `<details>` blocks listing installed versions).
 */
export function stripNoise(text: string): string {
  const withoutDetails = text.replace(DETAILS_BLOCK, (block) =>
    /INSTALLED VERSIONS|show_versions|pip (freeze|list)|conda list/i.test(block) ? "" : block,
  );
  const lines = withoutDetails.split(/\r?\n/);
  const keep = lines.map(() => true);
  let runStart = 0;
  for (let i = 0; i <= lines.length; i++) {
    const isKeyValue =
      i < lines.length &&
      KEY_VALUE_LINE.test(lines[i] ?? "") &&
      !/\(|\)\s*$|\bdef\b|=\s*\w+\(/.test(lines[i] ?? "");
    if (!isKeyValue) {
      if (i - runStart >= 4) for (let j = runStart; j < i; j++) keep[j] = false;
      runStart = i + 1;
    }
  }
  return lines.filter((_, i) => keep[i]).join("\n");
}

/** An identifier that is recognisably code rather than an English word. */
export function looksLikeCode(identifier: string): boolean {
  return (
    identifier.includes("_") ||
    /[a-z][A-Z]/.test(identifier) ||
    /[A-Z]{2}[a-z]/.test(identifier) ||
    /^[A-Z][a-z]+[A-Z]/.test(identifier) ||
    /[A-Za-z][0-9]/.test(identifier)
  );
}

function normalisePath(raw: string): string {
  let path = raw.replace(/\\/g, "/");
  const marker = path.search(/(?:site|dist)-packages\//);
  if (marker >= 0) path = path.slice(path.indexOf("/", marker) + 1);
  return path.replace(/^\.?\//, "").replace(/^\/+/, "");
}

/** Importance of a term by where it was seen, and how often; repetition counts only logarithmically. */
class TermWeights {
  private readonly seen = new Map<string, { importance: number; count: number }>();

  /** Counts one sighting of `term`; stop words only when they are surely code (`xr.where(`). */
  add(term: string, importance: number, surelyCode = false): void {
    if (term.length < 2 || (STOP_WORDS.has(term) && !surelyCode)) return;
    const current = this.seen.get(term);
    if (current) {
      current.importance = Math.max(current.importance, importance);
      current.count++;
    } else this.seen.set(term, { importance, count: 1 });
  }

  weights(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [term, { importance, count }] of this.seen)
      out.set(term, importance * (1 + 0.5 * Math.log(count)));
    return out;
  }
}

const URL = /\b(?:https?|ftp):\/\/\S+|\bwww\.\S+/g;

function parseFrames(text: string): Frame[] {
  const python: Frame[] = [];
  for (const m of text.matchAll(PYTHON_FRAME)) {
    const symbol = m[3] && m[3] !== "<module>" ? m[3] : undefined;
    python.push({ path: normalisePath(m[1] ?? ""), line: Number(m[2]), ...(symbol ? { symbol } : {}) });
  }
  const frames = python.reverse(); // a Python traceback ends with the innermost call; the others start with it
  for (const m of text.matchAll(JS_FRAME)) {
    if (m[2]?.includes("node:internal")) continue;
    const symbol = m[1]?.split(".").pop();
    frames.push({ path: normalisePath(m[2] ?? ""), line: Number(m[3]), ...(symbol ? { symbol } : {}) });
  }
  for (const m of text.matchAll(JAVA_FRAME)) {
    // `com.example.Foo$Inner.` → folders com/example (the class and its inner classes are not folders)
    const folders = (m[1] ?? "").split(".").slice(0, -2);
    const path = [...folders, m[3] ?? ""].join("/");
    const symbol = (m[2] ?? "").replace(/[<>]/g, ""); // `<init>`: a constructor
    frames.push({ path, line: Number(m[4]), ...(symbol ? { symbol } : {}) });
  }
  for (const m of text.matchAll(GO_FRAME))
    frames.push({ path: normalisePath(m[1] ?? ""), line: Number(m[2]) });
  for (const m of text.matchAll(LINE_LINK)) frames.push({ path: m[1] ?? "", line: Number(m[2]) });
  return frames;
}

/** File paths written in the text (`src/app.ts`, `conf.py`), as written. */
function filePaths(text: string): string[] {
  const found: string[] = [];
  for (const [run] of text.matchAll(PATH_RUN)) {
    if (run.length <= MAX_PATH) for (const [path] of run.matchAll(FILE_PATH)) found.push(path);
  }
  return found;
}

/**
 * Reads a query — a few words, an identifier, or a whole bug report with code and a stack trace — into
 * weighted terms. Identifiers in code spans, called names, dotted names, paths and frames weigh more.
 */
export function parseQuery(original: string): ParsedQuery {
  const text = stripNoise(original);
  const withoutUrls = text.replace(URL, " ");
  const terms = new TermWeights();
  const frames = parseFrames(text);
  const codeText = (text.match(CODE_SPAN) ?? []).join("\n");
  const inCode = new Set(identifiers(codeText));
  const called = new Set([...text.matchAll(CALLED)].map((m) => m[1] ?? ""));
  // names the text marks as code beyond doubt: attribute calls and inline code spans of a bare name
  const surelyCode = new Set([
    ...[...text.matchAll(ATTRIBUTE_CALL)].map((m) => m[1] ?? ""),
    ...[...text.matchAll(NAME_SPAN)]
      .map((m) => m[1] ?? "")
      .filter((name) => !FILE_NAME.test(name))
      .flatMap((name) => name.split("."))
      .filter((name) => !LITERALS.has(name)),
  ]);

  const paths = new Set<string>();
  for (const frame of frames) paths.add(frame.path);
  for (const path of filePaths(withoutUrls)) paths.add(normalisePath(path));
  for (const name of withoutUrls.match(DOTTED) ?? []) {
    const parts = name.split(".");
    // a dotted module path such as `pkg.sub.module` (not `self.x` or a file name with an extension)
    if (parts.length >= 3 && parts[0] !== "self" && parts.every((p) => /^[a-z_][a-z0-9_]*$/.test(p))) {
      paths.add(parts.join("/"));
    }
  }

  const found = new Set<string>();
  for (const identifier of identifiers(withoutUrls)) {
    const lower = identifier.toLowerCase();
    const sure = surelyCode.has(identifier) && lower.length > 2;
    if (STOP_WORDS.has(lower) && !sure) continue;
    const isCode = sure || looksLikeCode(identifier) || (called.has(identifier) && lower.length > 2);
    if (isCode) found.add(identifier);
    const parts = splitIdentifier(identifier).filter((p) => p.length > 1);
    if (isCode) {
      terms.add(lower, 3, sure);
      if (parts.length > 1) for (const part of parts) terms.add(part, 1);
    } else {
      terms.add(lower, inCode.has(identifier) ? 1.5 : 1);
      if (parts.length > 1) for (const part of parts) terms.add(part, 0.5);
    }
  }
  for (const frame of frames) {
    if (frame.symbol) {
      found.add(frame.symbol);
      terms.add(frame.symbol.toLowerCase(), 3);
    }
  }
  for (const path of paths) {
    for (const token of codeTokens(path.replace(/\.[a-z]+$/, ""))) terms.add(token, 1);
  }
  return {
    text: original,
    cleaned: text,
    terms: terms.weights(),
    identifiers: [...found],
    paths: [...paths],
    frames,
  };
}
