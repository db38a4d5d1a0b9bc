import { z } from "zod";
import type { DirEntry } from "../../shadow/index.js";
import { FileAccessError, shownPath } from "../../workspace/errors.js";
import { DEFAULT_EXCLUDED_DIRS } from "../../workspace/excluded-dirs.js";
import { refused } from "./files.js";
import { cleanPath, defineTool, failure } from "./types.js";

const MAX_ENTRIES = 500;

export const listFilesTool = defineTool({
  name: "list_files",
  description:
    "List files and folders of the workspace (your branch of it), as paths relative to the workspace root. Folders end in '/'. Generated and vendored folders (node_modules, dist, .git, …) are left out.",
  schema: z.object({
    path: z.string().default("").describe("folder relative to the workspace root; '' for the root"),
    depth: z.number().int().min(1).max(6).default(3).describe("how many folder levels to descend"),
  }),
  async run(input, context) {
    const asked = cleanPath(input.path, context.root);
    if (asked === undefined) return failure(`${shownPath(input.path)} is outside the workspace`);
    const excluded = new Set([...(context.config.index.excludeDirs ?? DEFAULT_EXCLUDED_DIRS), ".git"]);
    const files = await context.files();
    const out: string[] = [];
    let cut = false;
    // names are shown escaped: a name holding a newline or a terminal escape cannot fake entries
    const walk = async (dir: string, level: number): Promise<void> => {
      let entries: DirEntry[] | undefined;
      try {
        entries = await files.list(dir);
      } catch (error) {
        if (error instanceof FileAccessError) return;
        throw error;
      }
      for (const entry of entries ?? []) {
        if (out.length >= MAX_ENTRIES) {
          cut = true;
          return;
        }
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.kind === "dir") {
          if (excluded.has(entry.name)) continue;
          out.push(`${shownPath(rel)}/`);
          if (level < input.depth) await walk(rel, level + 1);
        } else out.push(shownPath(rel));
      }
    };
    let start: string;
    try {
      const found = asked === "" ? { rel: "", kind: "dir" } : await files.resolve(asked);
      if (found.kind !== "dir") return failure(`${shownPath(asked)} is not a folder`);
      start = found.rel;
    } catch (error) {
      return refused(error);
    }
    await walk(start, 1);
    if (cut) out.push(`[more than ${MAX_ENTRIES} entries; list a subfolder to see the rest]`);
    const where = shownPath(start) || ".";
    return {
      ok: true,
      output: out.length ? out.join("\n") : `(${where} is empty)`,
      summary: `${where}: ${out.length} entries`,
    };
  },
});
