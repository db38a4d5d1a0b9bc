// @ts-check
/** The umbra CLI as the benchmarks drive it, and their shared option and results-file helpers. */
import { readFile } from "node:fs/promises";
import { exists } from "./checkout.mjs";
import { runShell } from "./proc.mjs";

/**
 * A hit of `umbra search --json`.
 * @typedef {object} SearchHit
 * @property {string} path
 * @property {number} startLine
 * @property {number} endLine
 * @property {string} [symbol]
 * @property {boolean} [stale]
 */

/**
 * Check that an umbra command line answers before a benchmark spends time on checkouts.
 * @param {string} cmd e.g. `node dist/cli/main.js`
 * @param {string} cwd where it runs
 */
export async function preflightUmbra(cmd, cwd) {
  const res = await runShell(cmd, ["search", "--help"], { cwd });
  if (res.code !== 0) {
    const why = (res.stderr || res.stdout).trim().split("\n").slice(-5).join("\n");
    throw new Error(
      `umbra CLI not usable: \`${cmd} search --help\` exited ${res.code}:\n${why}\n` +
        '(build it with `npm run build`, pass --umbra "CMD", or run the baseline alone with --no-umbra)',
    );
  }
}

/**
 * The hits printed by `umbra search --json`, or why there are none.
 * @param {string} stdout
 * @returns {{hits: SearchHit[]} | {error: string}}
 */
export function parseSearchJson(stdout) {
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return { error: `search printed no JSON: ${stdout.slice(0, 200)}` };
  }
  if (!Array.isArray(parsed) || !parsed.every(isHit))
    return {
      error: `search JSON is not an array of {path, startLine, endLine, ...}: ${stdout.slice(0, 200)}`,
    };
  return { hits: parsed };
}

/**
 * @param {unknown} x
 * @returns {x is SearchHit}
 */
function isHit(x) {
  if (typeof x !== "object" || x === null) return false;
  const h = /** @type {Record<string, unknown>} */ (x);
  return typeof h.path === "string" && typeof h.startLine === "number" && typeof h.endLine === "number";
}

/**
 * A positive integer option, undefined when absent; `fail` is called with the message otherwise.
 * @param {string | undefined} s
 * @param {string} name the option, without its dashes
 * @param {(msg: string) => never} fail
 */
export function positiveInt(s, name, fail) {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} wants a positive integer, got ${JSON.stringify(s)}`);
  return n;
}

/**
 * The rows of an input file (tasks, issue threads), one JSON object a line, blank lines skipped. A line
 * that is not one, or that `isRow` refuses, stops the run with `file:line: not <what>`.
 * @param {string} file
 * @param {(row: Record<string, unknown>) => boolean} [isRow]
 * @param {string} [what] what a row is, for the message
 * @returns {Promise<Record<string, unknown>[]>}
 */
export async function readRows(file, isRow = () => true, what = "a JSON object") {
  /** @type {Record<string, unknown>[]} */
  const rows = [];
  (await readFile(file, "utf8")).split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    /** @type {unknown} */
    let row;
    try {
      row = JSON.parse(line);
    } catch {
      row = undefined;
    }
    const object = typeof row === "object" && row !== null && !Array.isArray(row);
    if (!object || !isRow(/** @type {Record<string, unknown>} */ (row)))
      throw new Error(`${file}:${i + 1}: not ${what}`);
    rows.push(/** @type {Record<string, unknown>} */ (row));
  });
  return rows;
}

/**
 * The records of a results file, one JSON value a line; a line cut short by an interrupted run is
 * skipped (its work simply runs again). No file: no records.
 * @param {string} file
 * @returns {Promise<unknown[]>}
 */
export async function readJsonl(file) {
  if (!(await exists(file))) return [];
  /** @type {unknown[]} */
  const records = [];
  for (const line of (await readFile(file, "utf8")).split("\n")) {
    if (!line.trim()) continue;
    try {
      records.push(JSON.parse(line));
    } catch {
      // cut short
    }
  }
  return records;
}
