import { z } from "zod";
import { shownPath } from "../../workspace/errors.js";
import { applyEdit } from "../edit/index.js";
import { refused } from "./files.js";
import { lintFeedback } from "./lint-feedback.js";
import { cleanPath, defineTool, failure } from "./types.js";

export const editTool = defineTool({
  name: "edit",
  description:
    "Edit a file in your branch: replace the text `search` (copied from read_file output without the line-number prefix; include enough lines to be unique) with `replace`. Small differences in indentation or whitespace are tolerated and reported. An empty `search` on a file that does not exist creates it with `replace`. After the edit, the diagnostics it introduced are reported (lints).",
  schema: z.object({
    path: z.string().min(1).describe("file path relative to the workspace root"),
    search: z.string().describe("the exact text to replace ('' only to create a new file)"),
    replace: z.string().describe("the new text"),
    replaceAll: z.boolean().default(false).describe("replace every occurrence instead of requiring one"),
  }),
  async run(input, context) {
    const asked = cleanPath(input.path, context.root);
    if (!asked) return failure(`${shownPath(input.path)} is not a file inside the workspace`);
    const files = await context.files();
    let original: string | undefined;
    let target: string;
    try {
      // checked before anything of the file is read, so that no refused file is quoted
      target = await files.writable(asked);
      original = (await files.read(target))?.toString("utf8");
    } catch (error) {
      return refused(error);
    }
    const path = shownPath(target);
    let text: string;
    let where: string;
    if (original === undefined) {
      if (input.search !== "")
        return failure(
          `${path} does not exist; to create it, call edit with an empty search and the whole content as replace`,
        );
      text = input.replace;
      where = `created ${path}`;
    } else {
      const result = applyEdit(original, input.search, input.replace, { replaceAll: input.replaceAll });
      if (!result.ok) {
        const candidates = (result.candidates ?? [])
          .slice(0, 3)
          .map((c) => `  lines ${c.startLine}-${c.endLine}:\n${c.preview}`)
          .join("\n");
        return {
          ok: false,
          output: `edit of ${path} failed (${result.reason}): ${result.message}${candidates ? `\nclosest candidates:\n${candidates}` : ""}\nRead the file again and copy the search text exactly.`,
          summary: `${path}: ${result.reason}`,
        };
      }
      if (result.text === original) return failure(`the edit does not change ${path}`);
      text = result.text;
      where = `edited ${path} lines ${result.startLine}-${result.endLine} (match: ${result.stage})`;
    }
    try {
      await files.write(target, text);
    } catch (error) {
      return refused(error);
    }
    const lint = await lintFeedback(context, [target]);
    return {
      ok: true,
      output: `${where}\n${lint.text}`,
      summary: `${where}${lint.linted.length ? `; ${lint.errors} new error(s)` : ""}`,
      changed: [target],
      lintErrors: lint.errors,
    };
  },
});
