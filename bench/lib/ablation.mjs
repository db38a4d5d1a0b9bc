// @ts-check
/**
 * What the in-process ablations share (bench/retrieval/ablation.mjs, bench/questions/ablation.mjs): the
 * built engine from dist/ and their command line, `[REPO_FILTER] [VARIANTS_JSON] [--show]`.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The indexer, index opener, search and configuration loader of the built dist/, or of the build in
 * $ABLATION_DIST (a scratch build of an experiment, e.g. `npx tsc -p tsconfig.build.json --outDir
 * bench/.work/dist-x`: inside the repository, so its imports find node_modules).
 */
export async function loadEngine() {
  const dist = resolve(process.env.ABLATION_DIST ?? join(ROOT, "dist"));
  const { indexWorkspace } = await import(join(dist, "index", "indexer.js"));
  const { openIndex } = await import(join(dist, "index", "open.js"));
  const { search } = await import(join(dist, "index", "search", "searcher.js"));
  const { loadConfig } = await import(join(dist, "config", "config.js"));
  return { indexWorkspace, openIndex, search, loadConfig };
}

/**
 * The repository filter, the variants (a name → search() options) and `--show`.
 * @param {string} defaultVariants JSON used when none is given
 */
export function ablationArgs(defaultVariants) {
  const args = process.argv.slice(2).filter((a) => a !== "--show");
  /** @type {Record<string, Record<string, unknown>>} */
  const variants = JSON.parse(args[1] ?? defaultVariants);
  return { repoFilter: args[0] ?? "", variants, show: process.argv.includes("--show") };
}
