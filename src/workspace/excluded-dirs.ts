/**
 * Folder names that hold generated, vendored or tool-private content, skipped wherever they appear.
 * `.git` is always skipped, even when a caller passes its own list.
 */
export const DEFAULT_EXCLUDED_DIRS: readonly string[] = Object.freeze([
  // version control
  ".git",
  ".hg",
  ".svn",
  ".jj",
  // JavaScript / TypeScript
  "node_modules",
  "bower_components",
  "jspm_packages",
  ".pnpm-store",
  ".yarn",
  ".next",
  ".nuxt",
  ".svelte-kit",
  ".angular",
  ".turbo",
  ".parcel-cache",
  ".expo",
  ".vercel",
  ".serverless",
  "coverage",
  ".nyc_output",
  // build output
  "dist",
  "build",
  "out",
  "target",
  // Python
  "__pycache__",
  ".venv",
  "venv",
  ".tox",
  ".nox",
  ".eggs",
  ".mypy_cache",
  ".pytest_cache",
  ".ruff_cache",
  ".ipynb_checkpoints",
  // other ecosystems
  "vendor",
  ".gradle",
  "Pods",
  "DerivedData",
  ".dart_tool",
  ".stack-work",
  "elm-stuff",
  "_build",
  ".terraform",
  ".bundle",
  // editors
  ".idea",
  ".vscode",
]);

/**
 * A test for folders to skip: a bare name matches at any depth, an entry with a slash matches that path
 * from the root. `.git` always matches.
 */
export function excludedDirMatcher(
  excludeDirs: readonly string[],
): (name: string, relPath: string) => boolean {
  const names = new Set<string>([".git"]);
  const paths = new Set<string>();
  for (const entry of excludeDirs) {
    const clean = entry.replace(/^\/+|\/+$/g, "");
    if (clean === "") continue;
    (clean.includes("/") ? paths : names).add(clean);
  }
  return (name, relPath) => names.has(name) || paths.has(relPath);
}
