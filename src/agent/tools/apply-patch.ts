import { z } from "zod";
import { applyPatch } from "../edit/index.js";
import { lintFeedback } from "./lint-feedback.js";
import { cleanPath, defineTool, failure } from "./types.js";

/** The paths a unified diff names (---/+++ headers, without a/ b/ prefixes). */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const line of patch.split("\n")) {
    const match = /^(?:---|\+\+\+) (\S+)/.exec(line);
    if (!match?.[1] || match[1] === "/dev/null") continue;
    paths.add(match[1].replace(/^[ab]\//, ""));
  }
  return [...paths];
}

export const applyPatchTool = defineTool({
  name: "apply_patch",
  description:
    "Apply a unified diff (as `git diff` prints it: ---/+++ headers with a/ and b/ prefixes, @@ hunks) to your branch; it may add (--- /dev/null), delete (+++ /dev/null) and change several files. Hunks whose line numbers or context drifted a little are still placed. All or nothing: if any file fails, nothing is applied and the failures are listed. The diagnostics it introduced are reported.",
  schema: z.object({ patch: z.string().min(1).describe("the unified diff") }),
  async run(input, context) {
    const contents = new Map<string, string | undefined>();
    for (const path of patchPaths(input.patch)) {
      const clean = cleanPath(path, context.root);
      if (!clean) return failure(`the patch names ${path}, which is outside the workspace`);
      contents.set(clean, await context.branch.readText(clean));
    }
    const result = applyPatch(input.patch, (path) => contents.get(cleanPath(path, context.root) ?? path));
    if (result.files.length === 0)
      return failure("the patch names no file; give a unified diff with ---/+++ headers");
    const report = result.files.map((file) => {
      const bad = file.hunks.filter((hunk) => !hunk.ok);
      const how = file.hunks
        .filter((hunk) => hunk.ok && hunk.stage && hunk.stage !== "exact")
        .map((hunk) => hunk.stage);
      return `${file.ok ? "ok" : "FAILED"} ${file.kind} ${file.path}${how.length ? ` (placed: ${how.join(", ")})` : ""}${file.message ? `: ${file.message}` : ""}${bad.map((hunk) => `\n  hunk${hunk.line ? ` at line ${hunk.line}` : ""}: ${hunk.message ?? "does not apply"}`).join("")}`;
    });
    if (!result.ok || result.files.some((file) => !file.ok)) {
      return {
        ok: false,
        output: `the patch was not applied (nothing changed):\n${report.join("\n")}`,
        summary: `patch failed: ${result.files
          .filter((f) => !f.ok)
          .map((f) => f.path)
          .join(", ")}`,
      };
    }
    const changed: string[] = [];
    for (const file of result.files) {
      const path = cleanPath(file.path, context.root);
      if (!path) return failure(`the patch names ${file.path}, which is outside the workspace`);
      if (file.kind === "deleted") context.branch.remove(path);
      else context.branch.write(path, file.text ?? "");
      changed.push(path);
    }
    const lint = await lintFeedback(
      context,
      changed.filter(
        (path) => result.files.find((f) => cleanPath(f.path, context.root) === path)?.kind !== "deleted",
      ),
    );
    return {
      ok: true,
      output: `applied:\n${report.join("\n")}\n${lint.text}`,
      summary: `patched ${changed.join(", ")}${lint.linted.length ? `; ${lint.errors} new error(s)` : ""}`,
      changed,
      lintErrors: lint.errors,
    };
  },
});
