// @ts-check
/**
 * Query sets for the search-latency benchmarks (bench/speed section 4, bench/mcp), over the multi-repository
 * tree of bench/speed/prepare-big.sh (sympy, astropy, sphinx, xarray, pytest, flask, networkx, pylint).
 */
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
