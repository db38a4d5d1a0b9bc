import { z } from "zod";
import { search } from "../../index/search/searcher.js";
import { globSchema } from "../../workspace/glob.js";
import { defineTool, failure } from "./types.js";

export const searchCodeTool = defineTool({
  name: "search_code",
  description:
    "Search the codebase: hybrid search (identifiers, file paths, stack traces and plain-language descriptions all work) over an index of the user's folder. Returns file:line ranges with the enclosing symbol, best first; read them with read_file. Results marked [stale] changed since indexing.",
  schema: z.object({
    query: z
      .string()
      .min(1)
      .describe("what to look for: words, identifiers, an error message or a stack trace"),
    limit: z.number().int().min(1).max(30).default(8),
    path: globSchema.optional().describe("only paths matching this glob, e.g. 'src/**/*.ts' or '*.py'"),
  }),
  async run(input, context) {
    let index: Awaited<ReturnType<typeof context.searchIndex>>;
    try {
      index = await context.searchIndex();
    } catch (error) {
      return failure(`search is unavailable: ${(error as Error).message.split("\n")[0]}`);
    }
    const hits = await search(index, input.query, {
      limit: input.limit,
      ...(input.path ? { pathGlob: input.path } : {}),
    });
    if (hits.length === 0) return { ok: true, output: "no results", summary: "no results" };
    const lines = hits.map(
      (hit) =>
        `${hit.path}:${hit.startLine}-${hit.endLine}${hit.symbol ? `  ${hit.symbol}` : ""}${hit.stale ? "  [stale]" : ""}`,
    );
    return { ok: true, output: lines.join("\n"), summary: `${hits.length} hits, first ${lines[0]}` };
  },
});
