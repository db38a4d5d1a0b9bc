import type { QueryIntent } from "./intent.js";

/** What a file is for, judged from its path: implementation code, tests, docs, or configuration and data. */
export type FileRole = "source" | "test" | "docs" | "config";

const SOURCE_EXTENSIONS = new Set([
  "ts",
  "tsx",
  "mts",
  "cts",
  "js",
  "jsx",
  "mjs",
  "cjs",
  "py",
  "pyi",
  "pyx",
  "go",
  "rs",
  "java",
  "kt",
  "scala",
  "c",
  "h",
  "cc",
  "cpp",
  "cxx",
  "hpp",
  "hh",
  "hxx",
  "cs",
  "rb",
  "php",
  "swift",
  "m",
  "mm",
  "lua",
  "sh",
  "vue",
  "svelte",
]);
const DOC_EXTENSIONS = new Set(["md", "mdx", "rst", "txt", "adoc", "markdown"]);
/**
 * Tests and what serves them: test folders (`tests/`, trio's `_tests/`, Django's `js_tests/`) and files,
 * benchmarks (`bench/`, `benchmarks/`), performance measurements.
 */
const TEST_PATH =
  /(^|\/)(tests?|testing|[a-z0-9]*[-_]tests?|__tests__|spec|specs|e2e|benchmarks?|bench|perf|perf[-_]measures)\/|(^|\/)(test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.(test|spec)\.[a-z]+|conftest\.py)$/;
/** The project's own tooling at its root: release, maintenance and CI scripts, nox sessions. */
const TOOLING_PATH = /^(scripts?|tools|build_tools|maint_tools|dev_?tools)\/|^noxfile\.py$/;
/**
 * Documentation, and the scripts of a gallery: `examples/` anywhere, and at the root matplotlib's
 * `tutorials/`, `plot_types/` and `galleries/` (an app's own `src/tutorial/` is code).
 */
const DOC_PATH = /(^|\/)(docs?|documentation|examples?)\/|^(tutorials|plot_types|galleries|gallery)\//;
const CHANGELOG =
  /(^|\/)(CHANGES|CHANGELOG|HISTORY|NEWS|RELEASE[_-]?NOTES|AUTHORS|CONTRIBUTORS|LICENSE|COPYING)[^/]*$/i;
/**
 * Configuration and data: dot-folders (`.github`, `.devcontainer`, `.vscode`, …), CI folders, and gettext
 * message catalogs (`locale/da/LC_MESSAGES/sphinx.js`: translations, generated).
 */
const CONFIG_PATH = /(^|\/)(\.[^/]+|ci|LC_MESSAGES)\//;
/**
 * Copies of other projects (`vendor/`, pip's `_vendor/`, `third_party/`, scikit-learn's `externals/`, …)
 * and built assets; and Python packages copied into a top package's `packages/` (requests 2.x's
 * `requests/packages/urllib3/`: for Python only, where a JavaScript monorepo's `web/packages/ui/` is code).
 */
const VENDORED_PATH =
  /(^|\/)(static|_?vendor|_?vendored|third_party|thirdparty|externals?|extern|assets)\/|[.-]min\.js$|^[^/]+\/packages\/[^/]+\/.*\.pyi?$/;

export function fileRole(path: string): FileRole {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const extension = name.includes(".") ? (name.split(".").pop() ?? "").toLowerCase() : "";
  if (CHANGELOG.test(path)) return "docs";
  if (CONFIG_PATH.test(path) || VENDORED_PATH.test(path)) return "config";
  if (SOURCE_EXTENSIONS.has(extension)) {
    if (TEST_PATH.test(path) || TOOLING_PATH.test(path)) return "test";
    if (DOC_PATH.test(path)) return "docs";
    return "source";
  }
  if (DOC_EXTENSIONS.has(extension) || DOC_PATH.test(path)) return "docs";
  return "config";
}

/**
 * How much a hit in a file of each role counts, relative to implementation code. An agent (or a person)
 * asking where something happens wants the code that does it; tests, docs and configuration that merely
 * mention the same words come after it unless nothing else matches.
 */
export const CODE_FIRST_PRIOR: Record<FileRole, number> = { source: 1, test: 0.2, docs: 0.1, config: 0.1 };

/**
 * The prior a query's ranking takes: code first for a question (tests or docs alike with code when it asks
 * about them) and for a descriptive report or trace; none for a name or a path, which want exactly where
 * they occur.
 */
export function priorFor(
  intent: QueryIntent,
  descriptive: boolean,
  base: Record<FileRole, number> = CODE_FIRST_PRIOR,
): Record<FileRole, number> | undefined {
  if (intent.kind === "question") {
    if (intent.about === "docs") return { ...base, docs: base.source };
    if (intent.about === "tests") return { ...base, test: base.source };
    return base;
  }
  return (intent.kind === "report" || intent.kind === "trace") && descriptive ? base : undefined;
}
