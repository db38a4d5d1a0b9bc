// @ts-check
/**
 * Plain Okapi BM25 over whole files: the baseline of the retrieval benchmark.
 *
 * Deliberately naive: lower-cased words split on non-word characters, no identifier
 * splitting, no stemming, no stop words. Per-file statistics are cached by git blob hash,
 * so a file is read and tokenized once however many commits contain it.
 */
import { open } from "node:fs/promises";
import { join } from "node:path";

/** Files larger than this are not indexed (the product's limit too). */
export const MAX_FILE_BYTES = 1024 * 1024;
/** A NUL byte in this many leading bytes marks a file as binary (git's heuristic). */
const BINARY_SNIFF_BYTES = 8000;
const WORD = /[\p{L}\p{N}_]+/gu;

/** Test code, whatever the repository: a test directory, or a test module by its name. */
const TEST_DIR = new Set(["test", "tests", "testing"]);
/** @param {string} path */
export function isTestPath(path) {
  const parts = path.split("/");
  const base = parts[parts.length - 1] ?? "";
  return (
    parts.slice(0, -1).some((d) => TEST_DIR.has(d)) ||
    /^test_.*\.pyi?$/.test(base) ||
    /_tests?\.pyi?$/.test(base) ||
    base === "conftest.py"
  );
}

/** Extensions of programming languages, for the code-files baseline. */
const CODE_EXTENSION = /\.(?:pyi?|pyx|[cm]?[jt]sx?|go|rs|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift)$/;
/** Documentation and example folders. */
const DOC_DIR = new Set(["doc", "docs", "example", "examples"]);

/**
 * A code file, as a baseline that knows no more than file names would keep it: a programming language's
 * extension, outside test code and documentation or example folders.
 * @param {string} path
 */
export function isCodeFile(path) {
  return (
    CODE_EXTENSION.test(path) &&
    !isTestPath(path) &&
    !path
      .split("/")
      .slice(0, -1)
      .some((d) => DOC_DIR.has(d))
  );
}

/**
 * Lower-cased words, split on every non-word character.
 * @param {string} text
 * @returns {string[]}
 */
export function tokenize(text) {
  return text.toLowerCase().match(WORD) ?? [];
}

/**
 * Term statistics of one document: term ids sorted ascending, with their counts.
 * @typedef {object} DocStats
 * @property {number} length number of tokens
 * @property {Uint32Array} terms
 * @property {Uint32Array} counts
 */

/**
 * @typedef {object} Doc
 * @property {string} path
 * @property {DocStats} stats
 */

/** Why a file is not a document. @typedef {"binary" | "too-large" | "unreadable"} SkipReason */

export class Bm25Corpus {
  /** @type {Map<string, number>} term -> id */
  vocab = new Map();
  /** @type {Map<string, DocStats | SkipReason>} blob hash -> stats, or why it was skipped */
  blobs = new Map();
  cacheHits = 0;
  cacheMisses = 0;

  /**
   * The documents of a checkout.
   * @param {string} root the checkout
   * @param {readonly {path: string, blob: string}[]} entries its tracked files
   * @returns {Promise<{docs: Doc[], skipped: Map<string, SkipReason>}>}
   */
  async documents(root, entries) {
    /** @type {Doc[]} */
    const docs = [];
    /** @type {Map<string, SkipReason>} */
    const skipped = new Map();
    for (const { path, blob } of entries) {
      let stats = this.blobs.get(blob);
      if (stats === undefined) {
        this.cacheMisses++;
        stats = await this.#load(join(root, path));
        this.blobs.set(blob, stats);
      } else {
        this.cacheHits++;
      }
      if (typeof stats === "string") skipped.set(path, stats);
      else docs.push({ path, stats });
    }
    return { docs, skipped };
  }

  /**
   * Rank documents for a query; only documents sharing a term with it are returned, best first.
   * @param {readonly Doc[]} docs
   * @param {string} query
   * @param {{k1?: number, b?: number}} [params]
   * @returns {{path: string, score: number}[]}
   */
  rank(docs, query, params = {}) {
    const k1 = params.k1 ?? 1.2;
    const b = params.b ?? 0.75;
    const n = docs.length;
    if (n === 0) return [];
    /** @type {Map<number, number>} term id -> frequency in the query */
    const qtf = new Map();
    for (const token of tokenize(query)) {
      const id = this.vocab.get(token);
      if (id !== undefined) qtf.set(id, (qtf.get(id) ?? 0) + 1);
    }
    const qterms = [...qtf.keys()].sort((x, y) => x - y);
    if (qterms.length === 0) return [];

    let totalLength = 0;
    for (const d of docs) totalLength += d.stats.length;
    const avgdl = totalLength / n || 1;

    // tf[i * qterms.length + j] = count of query term j in doc i
    const tf = new Uint32Array(n * qterms.length);
    const df = new Uint32Array(qterms.length);
    docs.forEach((d, i) => {
      const { terms, counts } = d.stats;
      let lo = 0;
      for (let j = 0; j < qterms.length; j++) {
        const pos = lowerBound(terms, /** @type {number} */ (qterms[j]), lo);
        lo = pos;
        if (pos < terms.length && terms[pos] === qterms[j]) {
          tf[i * qterms.length + j] = /** @type {number} */ (counts[pos]);
          df[j] = /** @type {number} */ (df[j]) + 1;
        }
      }
    });
    const weight = qterms.map((t, j) => {
      const dfj = /** @type {number} */ (df[j]);
      const idf = Math.log(1 + (n - dfj + 0.5) / (dfj + 0.5));
      return idf * /** @type {number} */ (qtf.get(t));
    });

    /** @type {{path: string, score: number}[]} */
    const scored = [];
    docs.forEach((d, i) => {
      const norm = k1 * (1 - b + (b * d.stats.length) / avgdl);
      let score = 0;
      for (let j = 0; j < qterms.length; j++) {
        const f = /** @type {number} */ (tf[i * qterms.length + j]);
        if (f > 0) score += ((weight[j] ?? 0) * f * (k1 + 1)) / (f + norm);
      }
      if (score > 0) scored.push({ path: d.path, score });
    });
    scored.sort((x, y) => y.score - x.score || (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
    return scored;
  }

  /**
   * Read and tokenize one file.
   * @param {string} file
   * @returns {Promise<DocStats | SkipReason>}
   */
  async #load(file) {
    let buf;
    try {
      const fh = await open(file, "r");
      try {
        const { size } = await fh.stat();
        if (size > MAX_FILE_BYTES) return "too-large";
        buf = await fh.readFile();
      } finally {
        await fh.close();
      }
    } catch {
      return "unreadable";
    }
    if (buf.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return "binary";
    return this.stats(buf.toString("utf8"));
  }

  /**
   * Term statistics of a text.
   * @param {string} text
   * @returns {DocStats}
   */
  stats(text) {
    const tokens = tokenize(text);
    /** @type {Map<number, number>} */
    const counts = new Map();
    for (const token of tokens) {
      let id = this.vocab.get(token);
      if (id === undefined) {
        id = this.vocab.size;
        this.vocab.set(token, id);
      }
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const terms = Uint32Array.from(counts.keys()).sort();
    return { length: tokens.length, terms, counts: terms.map((t) => /** @type {number} */ (counts.get(t))) };
  }
}

/**
 * First index >= from whose value is >= x, in an ascending array.
 * @param {Uint32Array} arr
 * @param {number} x
 * @param {number} from
 */
function lowerBound(arr, x, from) {
  let lo = from;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (/** @type {number} */ (arr[mid]) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
