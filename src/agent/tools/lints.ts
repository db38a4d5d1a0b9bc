import { z } from "zod";
import { shownPath } from "../../workspace/errors.js";
import { refused } from "./files.js";
import { lintFeedback } from "./lint-feedback.js";
import { cleanPath, defineTool, failure, type ToolContext, type ToolResult } from "./types.js";

/** The files a lints call covers: the one named (checked through the door), else every file the branch changed. */
export async function lintTargets(
  path: string | undefined,
  context: ToolContext,
): Promise<string[] | ToolResult> {
  if (path) {
    const clean = cleanPath(path, context.root);
    if (!clean) return failure(`${shownPath(path)} is not a file inside the workspace`);
    try {
      const found = await (await context.files()).resolve(clean);
      if (found.kind === undefined) return failure(`${shownPath(clean)} does not exist`);
      if (found.kind !== "file") return failure(`${shownPath(found.rel)} is not a regular file`);
      return [found.rel];
    } catch (error) {
      return refused(error);
    }
  }
  const changes = await (await context.files()).changes();
  return changes.filter((c) => c.kind !== "deleted").map((c) => c.path);
}

export const lintsTool = defineTool({
  name: "lints",
  description:
    "Diagnostics (type errors, undefined names, …) that your changes introduced, from the language servers (TypeScript/JavaScript, Python, Go, C/C++), compared with the user's unchanged folder, including problems in files that use the changed ones. Without a path: every file you changed. (Edits report this automatically.)",
  schema: z.object({ path: z.string().optional().describe("one file; default: every file you changed") }),
  async run(input, context) {
    const paths = await lintTargets(input.path, context);
    if (!Array.isArray(paths)) return paths;
    if (paths.length === 0)
      return { ok: true, output: "Lints: you have not changed any file yet.", summary: "no changes" };
    const lint = await lintFeedback(context, paths);
    return {
      ok: true,
      output: lint.text,
      summary: lint.linted.length
        ? `${lint.errors} new error(s) in ${lint.linted.join(", ")}`
        : "no language server",
      lintErrors: lint.errors,
    };
  },
});
