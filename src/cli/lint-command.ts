import { readFile, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type { Command } from "commander";
import { accessRulesFor } from "../agent/tools/files.js";
import { branchLauncher } from "../lsp/branch-launcher.js";
import { LspHost } from "../lsp/index.js";
import type { Diag, LintResult } from "../lsp/types.js";
import { fork, gc } from "../shadow/index.js";
import { FileAccessError, shownPath } from "../workspace/errors.js";
import { onRunningEngine } from "./engine-use.js";
import { UsageError } from "./errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { configFor, printJson, readStdin } from "./shared.js";

interface LintFlags {
  root?: string;
  content?: string;
  json?: boolean;
}

/** FILE as a workspace-relative path: taken relative to the current directory, else to the root. */
async function relativeToRoot(root: string, file: string): Promise<string> {
  for (const candidate of [resolve(file), resolve(root, file)]) {
    const rel = relative(root, candidate);
    if (rel && !rel.startsWith("..") && !isAbsolute(rel)) return rel.split("\\").join("/");
  }
  throw new UsageError(`${file} is not inside the workspace ${root}`);
}

async function contentOf(flag: string | undefined): Promise<string | undefined> {
  if (flag === undefined) return undefined;
  if (flag === "-") return readStdin();
  try {
    return await readFile(flag, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --content ${flag}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}

function formatDiag(diag: Diag, introduced: boolean): string {
  const code = diag.code ? ` ${diag.source ? `${diag.source} ` : ""}${diag.code}` : "";
  return `${shownPath(diag.path)}:${diag.line}:${diag.column}: ${diag.severity}${code}: ${diag.message.split("\n")[0]}${introduced ? "  [introduced]" : ""}`;
}

const sameDiag = (a: Diag, b: Diag) =>
  a.line === b.line && a.column === b.column && a.message === b.message && a.severity === b.severity;

/** Human-readable report: every diagnostic of the file, introduced ones marked, then other files. */
export function formatLint(result: LintResult): string {
  const lines = result.diagnostics.map((diag) =>
    formatDiag(
      diag,
      result.introduced.some((other) => sameDiag(diag, other)),
    ),
  );
  for (const other of result.otherFiles)
    for (const diag of other.introduced) lines.push(formatDiag(diag, true));
  const otherCount = result.otherFiles.reduce((n, file) => n + file.introduced.length, 0);
  lines.push(
    `${result.diagnostics.length} diagnostic(s) in ${shownPath(result.path)}, ${result.introduced.length} introduced` +
      (otherCount > 0 ? `; ${otherCount} introduced in ${result.otherFiles.length} other file(s)` : "") +
      ` (${result.language}, ${Math.round(result.elapsedMs)} ms)`,
  );
  if (result.checkedFiles.length > 0 || result.skippedFiles.length > 0) {
    const skipped = result.skippedFiles;
    lines.push(
      `checked ${result.checkedFiles.length} other file(s)` +
        (skipped.length > 0
          ? `; skipped ${skipped.length} importer(s) past the limit: ${skipped.slice(0, 5).map(shownPath).join(", ")}${skipped.length > 5 ? ", …" : ""}`
          : ""),
    );
  }
  for (const reason of result.partialReasons) lines.push(`partial: ${reason}`);
  return `${lines.join("\n")}\n`;
}

/** Exit status when no error was found but the result is partial: not a clean success (see README). */
export const PARTIAL_EXIT_CODE = 3;

/** Errors that fail the command: those the content introduced, or every error when linting as it is. */
export function failingErrors(result: LintResult, withContent: boolean): number {
  const errors = (diags: readonly Diag[]) => diags.filter((diag) => diag.severity === "error").length;
  if (!withContent) return errors(result.diagnostics);
  return errors(result.introduced) + result.otherFiles.reduce((n, file) => n + errors(file.introduced), 0);
}

/** Prints the result and sets the exit status, whether the engine or this process linted. */
function report(result: LintResult, json: boolean, withContent: boolean): void {
  if (json) printJson(result);
  else process.stdout.write(formatLint(result));
  if (failingErrors(result, withContent) > 0) process.exitCode = 1;
  else if (result.partial) process.exitCode = PARTIAL_EXIT_CODE;
}

export function registerLint(program: Command): void {
  program
    .command("lint")
    .description(
      "diagnostics of FILE from its language server, as if it held --content (nothing is written); exit 1 when errors are found (with --content: errors it introduced), 3 when none were but the result is partial (the server could not load the project, or did not settle in time)",
    )
    .argument("<file>", "the file to lint (relative to the current directory or to --root)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--content <path>", "lint FILE as if it held this file's content; - reads it from stdin")
    .option(
      "--json",
      "print the result as JSON: {path, language, diagnostics, introduced, otherFiles, checkedFiles, skippedFiles, partial, partialReasons, ...}",
    )
    .action(async (file: string, flags: LintFlags) => {
      const root = await commandRoot(flags.root);
      const rel = await relativeToRoot(root, file);
      const content = await contentOf(flags.content);
      if (content === undefined) {
        const info = await stat(resolve(root, rel)).catch(() => undefined);
        if (!info?.isFile())
          throw new UsageError(`${rel} does not exist in ${root} (give --content to lint a new file)`);
      }
      const config = configFor(root);
      const served = await onRunningEngine("lint", "lint", {
        root,
        path: rel,
        ...(content === undefined ? {} : { content }),
      });
      if (served) return report(served, flags.json === true, content !== undefined);
      // Branches left behind by crashed runs go once they are old enough (shadow.gcAfterHours).
      await gc(root).catch(() => undefined);
      const branch = await fork(root);
      let host: LspHost | undefined;
      try {
        const { launcher, policy, warnings } = await branchLauncher(branch, config);
        for (const warning of warnings) process.stderr.write(`umbra: ${warning}\n`);
        host = new LspHost({ config: config.lsp, launcher });
        if (!host.detect(root, rel)) throw new UsageError(`no language server handles ${rel}`);
        // The server reads the branch through the file door: no link out of the workspace, no hidden file.
        const files = branch.files(accessRulesFor(policy, root));
        const target = await files.resolve(rel).catch((error: unknown) => {
          throw error instanceof FileAccessError ? new UsageError(error.message) : error;
        });
        const result = await host.lint(files, target.rel, content === undefined ? {} : { content });
        report(result, flags.json === true, content !== undefined);
      } finally {
        await host?.shutdown();
        await branch.discard();
      }
    });
}
