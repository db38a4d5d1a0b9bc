import type { Command } from "commander";
import type { SearchHit } from "../engine/api.js";
import { openIndex } from "../index/open.js";
import { search } from "../index/search/searcher.js";
import { shownPath } from "../workspace/errors.js";
import { compileGlob, GlobError } from "../workspace/glob.js";
import { readIfRegular } from "../workspace/rooted.js";
import { hardLinksToHidden } from "../workspace/scan.js";
import { onRunningEngine } from "./engine-use.js";
import { UsageError } from "./errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { configFor, printJson, readStdin } from "./shared.js";

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new UsageError(`--limit must be a whole number from 1 to 10000, got ${value}`);
  return limit;
}

/** A --path glob, read now so that a bad one is a usage error (workspace/glob.ts). */
function parseGlob(value: string): string {
  try {
    compileGlob(value);
  } catch (error) {
    if (error instanceof GlobError) throw new UsageError(`--path: ${error.message}`);
    throw error;
  }
  return value;
}

type Hit = Pick<SearchHit, "path" | "startLine" | "endLine" | "score" | "symbol" | "defines" | "stale">;

/** The hits as `umbra search` prints them, whether the engine or this process searched. */
async function printHits(root: string, hits: readonly Hit[], json: boolean): Promise<void> {
  if (json) {
    printJson(
      hits.map(({ path, startLine, endLine, score, symbol, defines, stale }) => ({
        path,
        startLine,
        endLine,
        score,
        // the engine leaves out an empty symbol (and empty defines); the index has "" for a chunk without one
        symbol: symbol ?? "",
        defines: defines ?? [],
        stale,
      })),
    );
    return;
  }
  if (hits.length === 0) process.stdout.write("no results\n");
  // a file that became another name (a hard link) of a hidden file since it was indexed
  const links = await hardLinksToHidden(
    root,
    hits.map((hit) => hit.path),
  );
  for (const hit of hits) {
    if (links.has(hit.path)) continue;
    const where = `${shownPath(hit.path)}:${hit.startLine}-${hit.endLine}`;
    const flags = `${hit.symbol ? `  ${hit.symbol}` : ""}${hit.stale ? "  [stale]" : ""}`;
    process.stdout.write(`${where}${flags}\n`);
    // never through a link: the file may have become one to something outside since it was indexed
    const text = (await readIfRegular(root, hit.path))?.toString("utf8") ?? "";
    const lines = text.split("\n").slice(hit.startLine - 1, Math.min(hit.endLine, hit.startLine + 3));
    for (const line of lines) process.stdout.write(`    ${line.slice(0, 160)}\n`);
  }
}

export function registerSearch(program: Command): void {
  program
    .command("search")
    .description("hybrid search (lexical + vector + exact) over the index; `-` reads the query from stdin")
    .argument("<query...>", "the query, or - for stdin")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--limit <k>", "number of results", parseLimit, 10)
    .option("--path <glob>", "only paths matching this glob (`src/**/*.ts`; `*.py` at any depth)", parseGlob)
    .option("--lang <language>", "only this language (e.g. python, typescript)")
    .option("--json", "print a JSON array of {path, startLine, endLine, score, symbol, defines, stale}")
    .action(
      async (
        words: string[],
        options: { root?: string; limit: number; path?: string; lang?: string; json?: boolean },
      ) => {
        const query = words.length === 1 && words[0] === "-" ? await readStdin() : words.join(" ");
        if (!query.trim()) throw new UsageError("the query is empty");
        const root = await commandRoot(options.root);
        const config = configFor(root);
        const filters = {
          ...(options.path ? { path: options.path } : {}),
          ...(options.lang ? { lang: options.lang } : {}),
        };
        const served = await onRunningEngine("search", "search", {
          root,
          query,
          limit: options.limit,
          ...filters,
        });
        if (served) return printHits(root, served.hits, options.json === true);
        const index = await openIndex(root, config);
        try {
          const hits = await search(index, query, {
            limit: options.limit,
            ...(options.path ? { pathGlob: options.path } : {}),
            ...(options.lang ? { language: options.lang } : {}),
          });
          await printHits(index.root, hits, options.json === true);
        } finally {
          index.close();
        }
      },
    );
}
