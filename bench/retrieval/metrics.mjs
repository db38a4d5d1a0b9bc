// @ts-check
/** File-level retrieval metrics and the Markdown report of the retrieval benchmark. */

/**
 * Files in order of their first appearance in a hit list.
 * @param {readonly {path: string}[]} hits
 * @returns {string[]}
 */
export function foldToFiles(hits) {
  /** @type {Set<string>} */
  const seen = new Set();
  for (const hit of hits) seen.add(normalizePath(hit.path));
  return [...seen];
}

/** @param {string} p */
export function normalizePath(p) {
  return p.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
}

/**
 * 1-based rank of each gold file in a ranked file list, null where absent.
 * @param {readonly string[]} files
 * @param {readonly string[]} gold
 * @returns {(number | null)[]}
 */
export function goldRanks(files, gold) {
  /** @type {Map<string, number>} */
  const pos = new Map();
  files.forEach((f, i) => {
    if (!pos.has(f)) pos.set(f, i + 1);
  });
  return gold.map((g) => pos.get(g) ?? null);
}

/**
 * @typedef {object} TaskScore
 * @property {number} acc1 1 when every gold file is in the top 1
 * @property {number} acc5
 * @property {number} acc10
 * @property {number} rr reciprocal rank of the best-ranked gold file, 0 if none found
 * @property {number} recall5 fraction of gold files in the top 5
 */

/**
 * @param {readonly (number | null)[]} ranks the gold files' ranks
 * @returns {TaskScore}
 */
export function scoreTask(ranks) {
  const found = /** @type {number[]} */ (ranks.filter((r) => r !== null));
  const allWithin = (/** @type {number} */ k) =>
    ranks.length > 0 && found.length === ranks.length && found.every((r) => r <= k) ? 1 : 0;
  return {
    acc1: allWithin(1),
    acc5: allWithin(5),
    acc10: allWithin(10),
    rr: found.length ? 1 / Math.min(...found) : 0,
    recall5: ranks.length ? found.filter((r) => r <= 5).length / ranks.length : 0,
  };
}

/**
 * @typedef {object} Aggregate
 * @property {number} n tasks scored
 * @property {number} acc1
 * @property {number} acc5
 * @property {number} acc10
 * @property {number} mrr
 * @property {number} recall5
 */

/**
 * Mean of the task scores.
 * @param {readonly (readonly (number | null)[])[]} rankLists one per task
 * @returns {Aggregate}
 */
export function aggregate(rankLists) {
  const n = rankLists.length;
  const sum = { acc1: 0, acc5: 0, acc10: 0, rr: 0, recall5: 0 };
  for (const ranks of rankLists) {
    const s = scoreTask(ranks);
    sum.acc1 += s.acc1;
    sum.acc5 += s.acc5;
    sum.acc10 += s.acc10;
    sum.rr += s.rr;
    sum.recall5 += s.recall5;
  }
  const mean = (/** @type {number} */ x) => (n ? x / n : 0);
  return {
    n,
    acc1: mean(sum.acc1),
    acc5: mean(sum.acc5),
    acc10: mean(sum.acc10),
    mrr: mean(sum.rr),
    recall5: mean(sum.recall5),
  };
}

/**
 * Nearest-rank percentile; NaN for no values.
 * @param {readonly number[]} values
 * @param {number} p in [0, 100]
 */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return /** @type {number} */ (sorted[idx]);
}

/**
 * A Markdown table.
 * @param {readonly string[]} header
 * @param {readonly (readonly string[])[]} rows
 * @param {readonly ("l" | "r")[]} [align]
 */
export function markdownTable(header, rows, align = []) {
  const line = (/** @type {readonly string[]} */ cells) => `| ${cells.join(" | ")} |`;
  const sep = header.map((_, i) => (align[i] === "r" ? "---:" : "---"));
  return [line(header), line(sep), ...rows.map(line)].join("\n");
}
