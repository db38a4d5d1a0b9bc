// @ts-check
/**
 * The question set of the questions benchmark: its shape, and the check that every answer names a
 * real definition at the pinned commit (so the set cannot rot silently). See bench/questions/README.md.
 */
import { readFile } from "node:fs/promises";

/** @typedef {"python" | "typescript" | "go"} Language */

/**
 * @typedef {object} RepoPin
 * @property {string} commit 40 hex digits
 * @property {Language} language the repository's main language
 */

/**
 * One implementing function: a file, the symbol's qualified name and its 1-based inclusive line range.
 * @typedef {object} Answer
 * @property {string} path
 * @property {string} symbol e.g. `SecureCookieSessionInterface.save_session`, `Engine.ServeHTTP`
 * @property {[number, number]} lines
 */

/**
 * @typedef {object} Question
 * @property {string} id
 * @property {string} repo owner/name, a key of `repos`
 * @property {string} question
 * @property {Answer[]} answers any one of them answers the question
 */

/**
 * @typedef {object} QuestionSet
 * @property {string} description
 * @property {Record<string, RepoPin>} repos
 * @property {Question[]} questions
 */

const LANGUAGES = new Set(["python", "typescript", "go"]);
const SYMBOL = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/**
 * Read and validate a question set; throws one error listing every problem of shape.
 * @param {string} file
 * @returns {Promise<QuestionSet>}
 */
export async function loadSet(file) {
  /** @type {unknown} */
  const raw = JSON.parse(await readFile(file, "utf8"));
  const problems = shapeProblems(raw);
  if (problems.length) throw new Error(`${file}: ${problems.length} problems:\n  ${problems.join("\n  ")}`);
  return /** @type {QuestionSet} */ (raw);
}

/**
 * Everything wrong with the shape of a would-be question set (empty when none).
 * @param {unknown} raw
 * @returns {string[]}
 */
export function shapeProblems(raw) {
  /** @type {string[]} */
  const out = [];
  if (!isRecord(raw)) return ["not a JSON object"];
  if (typeof raw.description !== "string") out.push("description: not a string");
  const repos = isRecord(raw.repos) ? raw.repos : {};
  if (!isRecord(raw.repos)) out.push("repos: not an object");
  for (const [name, pin] of Object.entries(repos)) {
    if (!/^[\w.-]+\/[\w.-]+$/.test(name)) out.push(`repos.${name}: not owner/name`);
    if (!isRecord(pin) || typeof pin.commit !== "string" || !/^[0-9a-f]{40}$/.test(pin.commit))
      out.push(`repos.${name}.commit: not 40 lower-case hex digits`);
    if (!isRecord(pin) || typeof pin.language !== "string" || !LANGUAGES.has(pin.language))
      out.push(`repos.${name}.language: not one of ${[...LANGUAGES].join(", ")}`);
  }
  if (!Array.isArray(raw.questions)) return [...out, "questions: not an array"];
  /** @type {Set<string>} */
  const ids = new Set();
  /** @type {Set<string>} */
  const texts = new Set();
  for (const [i, q] of raw.questions.entries()) {
    const at = `questions[${i}]`;
    if (!isRecord(q)) {
      out.push(`${at}: not an object`);
      continue;
    }
    if (typeof q.id !== "string" || !q.id) out.push(`${at}.id: not a string`);
    else if (ids.has(q.id)) out.push(`${at}.id: ${q.id} twice`);
    else ids.add(q.id);
    if (typeof q.repo !== "string" || !(q.repo in repos)) out.push(`${at}.repo: not a key of repos`);
    if (typeof q.question !== "string" || !q.question.trim()) out.push(`${at}.question: empty`);
    else if (texts.has(q.question)) out.push(`${at}.question: asked twice`);
    else texts.add(q.question);
    if (!Array.isArray(q.answers) || q.answers.length === 0) {
      out.push(`${at}.answers: none`);
      continue;
    }
    for (const [j, a] of q.answers.entries()) {
      const aat = `${at}.answers[${j}]`;
      if (!isRecord(a)) {
        out.push(`${aat}: not an object`);
        continue;
      }
      if (typeof a.path !== "string" || !a.path || a.path.startsWith("/") || a.path.includes(".."))
        out.push(`${aat}.path: not a relative path`);
      if (typeof a.symbol !== "string" || !SYMBOL.test(a.symbol))
        out.push(`${aat}.symbol: not a dotted name`);
      const l = a.lines;
      if (
        !Array.isArray(l) ||
        l.length !== 2 ||
        !l.every((x) => Number.isInteger(x) && x >= 1) ||
        /** @type {number} */ (l[0]) > /** @type {number} */ (l[1])
      )
        out.push(`${aat}.lines: not [start, end] with 1 <= start <= end`);
    }
  }
  return out;
}

/** @param {unknown} x @returns {x is Record<string, unknown>} */
function isRecord(x) {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** @param {string} s */
function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Whether a line defines `name` (a function, method, class, type or named function value).
 * @param {string} line
 * @param {string} name
 * @param {Language} lang
 */
export function definesName(line, name, lang) {
  const n = escapeRe(name);
  if (lang === "python") return new RegExp(`^\\s*(async\\s+def|def|class)\\s+${n}\\b`).test(line);
  if (lang === "go")
    return new RegExp(`^(func\\s+(\\([^)]*\\)\\s*)?${n}\\s*[[(]|type\\s+${n}\\b)`).test(line);
  return (
    new RegExp(`\\b(function\\s*\\*?|class|interface|type|const|let|var)\\s+${n}\\b`).test(line) ||
    new RegExp(
      `^\\s*((export|public|private|protected|static|async|readonly|override|get|set)\\s+)*#?${n}\\s*(<.*>)?\\s*(\\(|<|=|:|\\?:)`,
    ).test(line)
  );
}

/**
 * 1-based last line of the definition that starts at `start` (1-based): for Python the indented block
 * after the signature, for brace languages the line that closes the first block opened. Null when the
 * end cannot be found.
 * @param {readonly string[]} lines the file
 * @param {number} start
 * @param {Language} lang
 * @returns {number | null}
 */
export function definitionEnd(lines, start, lang) {
  return lang === "python" ? pythonBlockEnd(lines, start) : braceBlockEnd(lines, start, lang === "go");
}

/**
 * @param {readonly string[]} lines
 * @param {number} start
 */
function pythonBlockEnd(lines, start) {
  const indent = (/** @type {string} */ s) => s.match(/^\s*/)?.[0].length ?? 0;
  const base = indent(lines[start - 1] ?? "");
  // The signature may span lines (its closing parenthesis can sit at the def's own indentation).
  let depth = 0;
  let i = start - 1;
  for (; i < lines.length; i++) {
    const code = (lines[i] ?? "").replace(/#.*$/, "");
    for (const ch of code) {
      if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) depth--;
    }
    if (depth <= 0 && /:\s*$/.test(code)) break;
  }
  let last = i + 1;
  for (let j = i + 1; j < lines.length; j++) {
    const line = lines[j] ?? "";
    if (!line.trim()) continue;
    if (indent(line) <= base) break;
    last = j + 1;
  }
  return last;
}

/**
 * The block of a brace language: the first `{` outside parentheses opens it and its `}` ends it. A
 * value defined by a call (`const f = make(async () => { ... })`) ends where the call's parentheses close.
 * Strings, template literals and comments are skipped (Go's backquoted strings are raw).
 * @param {readonly string[]} lines
 * @param {number} start
 * @param {boolean} rawBackquotes
 */
function braceBlockEnd(lines, start, rawBackquotes) {
  let braces = 0;
  let parens = 0;
  /** @type {number | null} brace depth outside the block, once it is open */
  let outside = null;
  let braceInCall = false;
  /** @type {string[]} the quotes, template literals and `${` we are in */
  const ctx = [];
  let blockComment = false;
  for (let i = start - 1; i < lines.length; i++) {
    const line = lines[i] ?? "";
    for (let k = 0; k < line.length; k++) {
      const ch = line[k];
      const top = ctx[ctx.length - 1];
      if (blockComment) {
        if (ch === "*" && line[k + 1] === "/") {
          blockComment = false;
          k++;
        }
      } else if (top === '"' || top === "'" || top === "`") {
        if (ch === "\\" && !(top === "`" && rawBackquotes)) k++;
        else if (ch === top) ctx.pop();
        else if (top === "`" && !rawBackquotes && ch === "$" && line[k + 1] === "{") {
          ctx.push("${");
          k++;
        }
      } else if (ch === "/" && line[k + 1] === "/") break;
      else if (ch === "/" && line[k + 1] === "*") {
        blockComment = true;
        k++;
      } else if (ch === '"' || ch === "'" || ch === "`") ctx.push(ch);
      else if (ch === "}" && top === "${") ctx.pop();
      else if (ch === "(") parens++;
      else if (ch === ")") parens--;
      else if (ch === "{") {
        // `{}` in a signature is a type (`T extends {}`), not the body.
        if (outside === null && line[k + 1] === "}") k++;
        else if (outside === null && parens === 0) outside = braces;
        else if (outside === null) braceInCall = true;
        if (line[k] === "{") braces++;
      } else if (ch === "}") {
        braces--;
        if (outside !== null && braces === outside) return i + 1;
      }
    }
    // Quoted strings end with their line; template literals may go on.
    while (ctx.length && (ctx[ctx.length - 1] === '"' || ctx[ctx.length - 1] === "'")) ctx.pop();
    if (outside === null && braceInCall && parens === 0) return i + 1;
  }
  return null;
}

/**
 * What is wrong with one answer against the file's text at the pinned commit (null when right):
 * the range must start at a definition of the symbol's last name and end where that definition ends.
 * @param {Answer} answer
 * @param {string | null} text the file at the pinned commit, null when absent
 * @param {Language} lang
 * @returns {string | null}
 */
export function answerProblem(answer, text, lang) {
  if (text === null) return `${answer.path}: no such file at the pinned commit`;
  const lines = text.split("\n");
  const [start, end] = answer.lines;
  const name = /** @type {string} */ (answer.symbol.split(".").pop());
  const first = lines[start - 1];
  if (first === undefined || end > lines.length)
    return `${answer.path}:${start}-${end}: past the end of the file`;
  if (!definesName(first, name, lang))
    return `${answer.path}:${start}: does not define ${name}: ${JSON.stringify(first.trim())}`;
  const real = definitionEnd(lines, start, lang);
  if (real !== end) return `${answer.path}:${start}-${end}: the definition of ${name} ends at line ${real}`;
  const owner = answer.symbol.split(".").slice(-2, -1)[0];
  if (owner !== undefined && !isMemberOf(lines, start, end, owner, lang))
    return `${answer.path}:${start}: ${name} is not a member of ${owner}`;
  return null;
}

/**
 * Whether the definition at `start`..`end` belongs to `owner`: a Go method whose receiver is `owner`,
 * or a definition inside the block of an enclosing (less indented) definition of `owner`.
 * @param {readonly string[]} lines
 * @param {number} start
 * @param {number} end
 * @param {string} owner
 * @param {Language} lang
 */
function isMemberOf(lines, start, end, owner, lang) {
  const first = lines[start - 1] ?? "";
  if (lang === "go") return new RegExp(`^func\\s*\\(\\s*\\w*\\s*\\*?${escapeRe(owner)}\\b`).test(first);
  const indent = (/** @type {string} */ s) => s.match(/^\s*/)?.[0].length ?? 0;
  for (let i = start - 1; i >= 1; i--) {
    const line = lines[i - 1] ?? "";
    if (line.trim() && indent(line) < indent(first) && definesName(line, owner, lang))
      return (definitionEnd(lines, i, lang) ?? 0) >= end;
  }
  return false;
}

/**
 * Lines that define `name` in a file (1-based), with where each definition ends: for writing answers.
 * @param {string} text
 * @param {string} name
 * @param {Language} lang
 * @returns {{start: number, end: number | null, line: string}[]}
 */
export function findDefinitions(text, name, lang) {
  const lines = text.split("\n");
  return lines.flatMap((line, i) =>
    definesName(line, name, lang)
      ? [{ start: i + 1, end: definitionEnd(lines, i + 1, lang), line: line.trim() }]
      : [],
  );
}
