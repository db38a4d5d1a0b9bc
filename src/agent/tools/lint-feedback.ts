import type { Diag } from "../../lsp/index.js";
import { shownPath } from "../../workspace/errors.js";
import type { ToolContext } from "./types.js";

function line(diag: Diag): string {
  const code = diag.code ? ` ${diag.code}` : "";
  return `${shownPath(diag.path)}:${diag.line}:${diag.column}: ${diag.severity}${code}: ${diag.message.split("\n")[0]}`;
}

export interface LintFeedback {
  text: string;
  errors: number;
  /** Files that were linted (those a language server handles). */
  linted: string[];
  /** The diagnostics introduced, in the files and in the files that use them. */
  introduced: Diag[];
  /** Why a file's list may be incomplete (the server could not load the project, did not settle). */
  partialReasons: string[];
}

/**
 * The diagnostics that the branch's changes to `paths` introduced (compared with the user's folder),
 * also in files that use them. Files no language server handles are left out; a server that fails is
 * reported in the text, not thrown. The servers read the branch through the file door (context.files()),
 * so a hidden file, or one behind a link out of the workspace, never reaches them through a changed file.
 */
export async function lintFeedback(context: ToolContext, paths: readonly string[]): Promise<LintFeedback> {
  const host = await context.lsp();
  if (!host)
    return {
      text: "Lints: no language server is available.",
      errors: 0,
      linted: [],
      introduced: [],
      partialReasons: [],
    };
  const files = await context.files();
  const lines: string[] = [];
  const linted: string[] = [];
  const all: Diag[] = [];
  const partialReasons: string[] = [];
  let errors = 0;
  for (const path of paths) {
    if (!host.detect(context.root, path)) continue;
    if ((await files.readText(path)) === undefined) continue;
    linted.push(path);
    try {
      const result = await host.lint(files, path);
      const introduced = [...result.introduced, ...result.otherFiles.flatMap((file) => file.introduced)];
      errors += introduced.filter((diag) => diag.severity === "error").length;
      for (const diag of introduced) lines.push(line(diag));
      all.push(...introduced);
      partialReasons.push(...result.partialReasons.map((reason) => `${path}: ${reason}`));
      if (result.partial)
        lines.push(`(${path}: the list may be incomplete: ${result.partialReasons.join("; ")})`);
      if (result.skippedFiles.length > 0)
        lines.push(
          `(${path}: ${result.skippedFiles.length} file(s) that import it were not checked: ${result.skippedFiles.slice(0, 5).join(", ")}${result.skippedFiles.length > 5 ? ", …" : ""})`,
        );
    } catch (error) {
      const why = `the language server failed: ${(error as Error).message.split("\n")[0]}`;
      lines.push(`(${path}: ${why})`);
      partialReasons.push(`${path}: ${why}`);
    }
  }
  if (linted.length === 0)
    return {
      text: "Lints: no language server handles these files.",
      errors: 0,
      linted,
      introduced: all,
      partialReasons,
    };
  const head =
    lines.length === 0
      ? `Lints: no new problems in ${linted.join(", ")}.`
      : `Lints: problems introduced by your changes (${errors} error(s)):`;
  return { text: [head, ...lines].join("\n"), errors, linted, introduced: all, partialReasons };
}
