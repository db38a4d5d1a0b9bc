import { z } from "zod";
import { DEFAULT_EXCLUDED_DIRS } from "../../workspace/excluded-dirs.js";
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
    const start = cleanPath(input.path, context.root);
    if (start === undefined) return failure(`${input.path} is outside the workspace`);
    const excluded = new Set([...(context.config.index.excludeDirs ?? DEFAULT_EXCLUDED_DIRS), ".git"]);
    const hidden = (await context.policy(false)).hiddenPaths;
    const isHidden = (rel: string) => {
      const abs = `${context.root}/${rel}`;
      return hidden.some((path) => abs === path || abs.startsWith(`${path}/`));
    };
    const out: string[] = [];
    let cut = false;
    const walk = async (dir: string, level: number): Promise<void> => {
      const entries = await context.branch.readdir(dir);
      if (!entries) return;
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (out.length >= MAX_ENTRIES) {
          cut = true;
          return;
        }
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (isHidden(rel)) continue;
        if (entry.kind === "dir") {
          if (excluded.has(entry.name)) continue;
          out.push(`${rel}/`);
          if (level < input.depth) await walk(rel, level + 1);
        } else out.push(rel);
      }
    };
    if (start !== "" && (await context.branch.kind(start)) !== "dir")
      return failure(`${start} is not a folder`);
    await walk(start, 1);
    if (cut) out.push(`[more than ${MAX_ENTRIES} entries; list a subfolder to see the rest]`);
    const where = start || ".";
    return {
      ok: true,
      output: out.length ? out.join("\n") : `(${where} is empty)`,
      summary: `${where}: ${out.length} entries`,
    };
  },
});
