// @ts-check
/** Scores of the questions benchmark: file- and symbol-level ranks of the answers in a hit list. */

/**
 * A search hit, as `umbra search --json` prints it (lines 1-based, inclusive).
 * @typedef {object} Hit
 * @property {string} path
 * @property {number} startLine
 * @property {number} endLine
 */

/** @typedef {import("./set.mjs").Answer} Answer */

/**
 * 1-based rank of the first answer file in a ranked file list, null when none is there.
 * @param {readonly string[]} files
 * @param {readonly Answer[]} answers
 * @returns {number | null}
 */
export function fileRank(files, answers) {
  const gold = new Set(answers.map((a) => a.path));
  const i = files.findIndex((f) => gold.has(f));
  return i < 0 ? null : i + 1;
}

/**
 * 1-based rank of the first hit that lies in an answer file and overlaps that answer's line range,
 * null when no hit does.
 * @param {readonly Hit[]} hits
 * @param {readonly Answer[]} answers
 * @returns {number | null}
 */
export function symbolRank(hits, answers) {
  const i = hits.findIndex((h) =>
    answers.some((a) => a.path === h.path && h.startLine <= a.lines[1] && h.endLine >= a.lines[0]),
  );
  return i < 0 ? null : i + 1;
}

/**
 * @typedef {object} Ranks
 * @property {number | null} file rank of the first answer file among the files (hits folded to files)
 * @property {number | null} [symbol] rank of the first hit on an answer function; absent for a file-level system
 */

/**
 * @typedef {object} Aggregate
 * @property {number} n questions
 * @property {number} file1 share with an answer file first
 * @property {number} file5 share with an answer file in the top 5 files
 * @property {number} mrr mean of 1 / file rank (0 when absent)
 * @property {number | null} symbol1 share with a hit on an answer function first; null for file-level systems
 * @property {number | null} symbol5 share with a hit on an answer function among the first 5 hits
 */

/**
 * @param {readonly Ranks[]} ranks one per question
 * @returns {Aggregate}
 */
export function aggregate(ranks) {
  const n = ranks.length;
  const share = (/** @type {(r: Ranks) => boolean} */ f) => (n ? ranks.filter(f).length / n : 0);
  const within = (/** @type {number | null | undefined} */ r, /** @type {number} */ k) =>
    r !== null && r !== undefined && r <= k;
  const symbolLevel = n > 0 && ranks.every((r) => r.symbol !== undefined);
  return {
    n,
    file1: share((r) => within(r.file, 1)),
    file5: share((r) => within(r.file, 5)),
    mrr: n ? ranks.reduce((s, r) => s + (r.file ? 1 / r.file : 0), 0) / n : 0,
    symbol1: symbolLevel ? share((r) => within(r.symbol, 1)) : null,
    symbol5: symbolLevel ? share((r) => within(r.symbol, 5)) : null,
  };
}

/** @typedef {"code" | "test" | "docs" | "other"} FileKind */

export const CODE_EXTENSIONS = [".py", ".go", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const DOC_EXTENSIONS = [".md", ".mdx", ".rst", ".txt", ".adoc"];

/**
 * What a file is, by its path: code (by extension), a test (code under a test folder or named as a
 * test), docs (Markdown, reStructuredText, plain text), or other.
 * @param {string} path
 * @returns {FileKind}
 */
export function fileKind(path) {
  const lower = path.toLowerCase();
  const base = lower.slice(lower.lastIndexOf("/") + 1);
  if (DOC_EXTENSIONS.some((e) => base.endsWith(e))) return "docs";
  if (!CODE_EXTENSIONS.some((e) => base.endsWith(e))) return "other";
  const dirs = lower.split("/").slice(0, -1);
  const testDir = dirs.some((d) => ["test", "tests", "__tests__", "testdata", "testing", "spec"].includes(d));
  const testName =
    /^(test_.*\.py|.*_test\.(py|go)|conftest\.py)$/.test(base) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(base);
  return testDir || testName ? "test" : "code";
}
