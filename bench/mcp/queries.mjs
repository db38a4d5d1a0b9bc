// @ts-check
/**
 * Query sets for the search-latency benchmarks (bench/speed section 4, bench/mcp), over the multi-repository
 * tree of bench/speed/prepare-big.sh (sympy, astropy, sphinx, xarray, pytest, flask, networkx, pylint).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** What an agent typically sends over MCP: an identifier, or a few words naming what it looks for. */
export const AGENT_QUERIES = [
  "separability_matrix",
  "lambdify",
  "pixel_to_world",
  "make_response",
  "pagerank",
  "LogCaptureFixture",
  "register_blueprint",
  "keep_attrs",
  "autodoc_typehints",
  "dijkstra_path",
  "apply_ufunc",
  "MonkeyPatch.setattr",
  "add_message",
  "Quantity.to_value",
  "where is the configuration file parsed",
  "convert units of a quantity",
  "read a FITS header",
  "simplify trigonometric expression",
  "shortest path between two nodes",
  "register a url rule on a blueprint",
  "interpolate a DataArray along a dimension",
  "collect tests from a python module",
  "unused import checker",
  "render autodoc signature of a class",
  "parse command line options pytest",
  "send a static file",
  "solve a system of linear equations",
  "open a netcdf dataset",
  "topological sort of a directed graph",
  "format a warning message with its location",
  "cache the result of a fixture",
  "sphinx build html output theme",
];

/** The 64 queries of the earlier runs: the first `n` whole issue texts of the dev set, then 4 short ones. */
export function issueQueries(n = 60) {
  const tasks = readFileSync(join(ROOT, "..", "shared", "eval", "swebench-dev.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return [
    ...tasks.slice(0, n).map((task) => /** @type {string} */ (task.problem_statement)),
    "where is the configuration file parsed",
    "separability_matrix",
    "convert units of a quantity",
    "read a FITS header",
  ];
}

/** The identifier `rg -l -w` is given for a query: its first word of six or more identifier characters. */
export function rgIdentifier(/** @type {string} */ query) {
  return (query.match(/[A-Za-z_][A-Za-z0-9_]{5,}/) ?? ["function"])[0];
}

/**
 * `rg -l -w IDENTIFIER DIR`, the baseline beside umbra's search: the number of files it lists. A baseline
 * that did not run (no ripgrep, a bad argument) throws instead of timing nothing.
 * @param {string} query
 * @param {string} dir
 */
export function rgFiles(query, dir) {
  const run = spawnSync("rg", ["-l", "-w", rgIdentifier(query), dir], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  // 0: matches, 1: none; anything else (or no process at all) is a failure
  if (run.error || (run.status !== 0 && run.status !== 1))
    throw new Error(`rg failed: ${run.error?.message ?? run.stderr.trim().split("\n")[0]}`);
  return run.stdout.split("\n").filter(Boolean).length;
}
