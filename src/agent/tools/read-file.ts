import { z } from "zod";
import { shownPath } from "../../workspace/errors.js";
import { refused } from "./files.js";
import { cleanPath, defineTool, failure } from "./types.js";

const MAX_LINES = 400;
const MAX_CHARS = 40_000;
const MAX_LINE_CHARS = 2_000;
/** Larger files are not loaded at all. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

export const readFileTool = defineTool({
  name: "read_file",
  description: `Read a file of the workspace (your branch: your own edits included), with line numbers ("  12| text"). At most ${MAX_LINES} lines per call: give startLine/endLine for a range; a cut output says how to read the rest.`,
  schema: z.object({
    path: z.string().min(1).describe("file path relative to the workspace root"),
    startLine: z.number().int().min(1).optional().describe("first line to show (1-based)"),
    endLine: z.number().int().min(1).optional().describe("last line to show (inclusive)"),
  }),
  async run(input, context) {
    const clean = cleanPath(input.path, context.root);
    if (!clean) return failure(`${shownPath(input.path)} is not a file inside the workspace`);
    const path = shownPath(clean);
    const files = await context.files();
    let bytes: Buffer | undefined;
    try {
      if ((await files.resolve(clean)).kind === "dir") return failure(`${path} is a folder; use list_files`);
      bytes = await files.read(clean, { maxBytes: MAX_FILE_BYTES });
    } catch (error) {
      return refused(error);
    }
    if (bytes === undefined) return failure(`${path} does not exist`);
    if (bytes.subarray(0, 8000).includes(0))
      return failure(`${path} is a binary file (${bytes.length} bytes)`);
    const lines = bytes.toString("utf8").split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    const total = lines.length;
    const first = Math.min(input.startLine ?? 1, Math.max(total, 1));
    const wanted = Math.min(input.endLine ?? total, total);
    const out: string[] = [];
    let last = first - 1;
    let chars = 0;
    const width = String(Math.max(wanted, 1)).length;
    for (let n = first; n <= wanted && n - first < MAX_LINES; n++) {
      let text = lines[n - 1] ?? "";
      if (text.length > MAX_LINE_CHARS) text = `${text.slice(0, MAX_LINE_CHARS)} [line cut]`;
      if (chars + text.length > MAX_CHARS && out.length > 0) break;
      out.push(`${String(n).padStart(width)}| ${text}`);
      chars += text.length + width + 3;
      last = n;
    }
    if (total === 0 || (total === 1 && lines[0] === ""))
      return { ok: true, output: `(${path} is empty)`, summary: `${path}: empty` };
    let tail = "";
    if (last < wanted)
      tail = `\n[lines ${last + 1}-${wanted} not shown; call read_file with startLine ${last + 1} to read on]`;
    else if (wanted < total && input.endLine === undefined) tail = "";
    const header = `${path} (${total} lines), lines ${first}-${last}:`;
    return { ok: true, output: `${header}\n${out.join("\n")}${tail}`, summary: `${path}:${first}-${last}` };
  },
});
