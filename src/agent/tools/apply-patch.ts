import { z } from "zod";
import { shownPath } from "../../workspace/errors.js";
import { applyPatch } from "../edit/index.js";
import { refused } from "./files.js";
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
    const files = await context.files();
    const contents = new Map<string, string | undefined>();
    for (const path of patchPaths(input.patch)) {
      const clean = cleanPath(path, context.root);
      if (!clean) return failure(`the patch names ${shownPath(path)}, which is outside the workspace`);
      try {
        contents.set(clean, (await files.read(clean))?.toString("utf8"));
      } catch (error) {
        return refused(error);
      }
    }
    const result = applyPatch(input.patch, (path) => contents.get(cleanPath(path, context.root) ?? path));
    if (result.files.length === 0)
      return failure("the patch names no file; give a unified diff with ---/+++ headers");
    const report = result.files.map((file) => {
      const bad = file.hunks.filter((hunk) => !hunk.ok);
      const how = file.hunks
        .filter((hunk) => hunk.ok && hunk.stage && hunk.stage !== "exact")
        .map((hunk) => hunk.stage);
      return `${file.ok ? "ok" : "FAILED"} ${file.kind} ${shownPath(file.path)}${how.length ? ` (placed: ${how.join(", ")})` : ""}${file.message ? `: ${file.message}` : ""}${bad.map((hunk) => `\n  hunk${hunk.line ? ` at line ${hunk.line}` : ""}: ${hunk.message ?? "does not apply"}`).join("")}`;
    });
    if (!result.ok || result.files.some((file) => !file.ok)) {
      return {
        ok: false,
        output: `the patch was not applied (nothing changed):\n${report.join("\n")}`,
        summary: `patch failed: ${result.files
          .filter((f) => !f.ok)
          .map((f) => shownPath(f.path))
          .join(", ")}`,
      };
    }
    // every target is checked (hidden, protected, links out) before anything is written: all or nothing
    const steps: { path: string; text: string | undefined }[] = [];
    for (const file of result.files) {
      const path = cleanPath(file.path, context.root);
      if (!path) return failure(`the patch names ${shownPath(file.path)}, which is outside the workspace`);
      try {
        if (file.kind === "deleted") steps.push({ path: await files.removable(path), text: undefined });
        else steps.push({ path: await files.writable(path), text: file.text ?? "" });
      } catch (error) {
        return refused(error);
      }
    }
    const changed: string[] = [];
    for (const step of steps) {
      try {
        if (step.text === undefined) await files.remove(step.path);
        else await files.write(step.path, step.text);
      } catch (error) {
        return refused(error);
      }
      changed.push(step.path);
    }
    const lint = await lintFeedback(
      context,
      steps.filter((step) => step.text !== undefined).map((step) => step.path),
    );
    return {
      ok: true,
      output: `applied:\n${report.join("\n")}\n${lint.text}`,
      summary: `patched ${changed.map(shownPath).join(", ")}${lint.linted.length ? `; ${lint.errors} new error(s)` : ""}`,
      changed,
      lintErrors: lint.errors,
    };
  },
});
