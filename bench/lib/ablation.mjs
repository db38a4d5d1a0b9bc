// @ts-check
/**
 * What the in-process ablations share (bench/retrieval/ablation.mjs, bench/questions/ablation.mjs): the
 * built engine from dist/ and their command line, `[REPO_FILTER] [VARIANTS_JSON] [--show]`.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The indexer, index opener, search and configuration loader of the built dist/. */
export async function loadEngine() {
  const { indexWorkspace } = await import(join(ROOT, "dist", "index", "indexer.js"));
  const { openIndex } = await import(join(ROOT, "dist", "index", "open.js"));
  const { search } = await import(join(ROOT, "dist", "index", "search", "searcher.js"));
  const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
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
