import { z } from "zod";
import type { Location, LspHost } from "../../lsp/index.js";
import type { BranchFiles } from "../../shadow/index.js";
import { shownPath } from "../../workspace/errors.js";
import { refused } from "./files.js";
import { cleanPath, failure, type ToolContext, type ToolResult } from "./types.js";

export const positionSchema = z.object({
  path: z.string().min(1).describe("file path relative to the workspace root"),
  line: z.number().int().min(1).describe("1-based line where the symbol is"),
  symbol: z.string().optional().describe("the symbol's name on that line (used to find the column)"),
  column: z.number().int().min(1).optional().describe("1-based column; found from symbol when absent"),
});

export type PositionInput = z.infer<typeof positionSchema>;

function formatLocation(location: Location, lines: string[] | undefined): string {
  const text = lines?.[location.line - 1]?.trim();
  return `${shownPath(location.path)}:${location.line}:${location.column}${location.external ? " (outside the workspace)" : ""}${text ? `  ${text.slice(0, 160)}` : ""}`;
}

/** A position a tool named, resolved: the file's canonical path, the column, the host that serves it. */
export interface ResolvedPosition {
  path: string;
  position: { line: number; column: number };
  host: LspHost;
  source: BranchFiles;
}

/**
 * Resolves a position through the file door (the column found from the symbol's name when not given)
 * and finds the language server for it; a ToolResult saying why when it cannot.
 */
export async function resolvePosition(
  input: PositionInput,
  context: ToolContext,
  needsPosition = true,
): Promise<ResolvedPosition | ToolResult> {
  const asked = cleanPath(input.path, context.root);
  if (!asked) return failure(`${shownPath(input.path)} is not a file inside the workspace`);
  const source = await context.files();
  let path: string;
  let text: string | undefined;
  try {
    path = (await source.resolve(asked)).rel;
    text = (await source.read(path))?.toString("utf8");
  } catch (error) {
    return refused(error);
  }
  if (text === undefined) return failure(`${shownPath(path)} does not exist`);
  let column = input.column ?? 1;
  if (needsPosition) {
    const lineText = text.split("\n")[input.line - 1];
    if (lineText === undefined) return failure(`${shownPath(path)} has no line ${input.line}`);
    if (input.column === undefined) {
      if (!input.symbol) return failure("give the symbol's name (symbol) or its column");
      const at = new RegExp(
        `(?<![\\w$])${input.symbol.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w$])`,
      ).exec(lineText);
      if (!at)
        return failure(
          `${input.symbol} is not on line ${input.line} of ${shownPath(path)}: ${lineText.trim()}`,
        );
      column = at.index + 1;
    }
  }
  const host = await context.lsp();
  if (!host?.detect(context.root, path)) return failure(`no language server handles ${shownPath(path)}`);
  return { path, position: { line: input.line, column }, host, source };
}

/** Shared by definition and references: resolves the position, asks the server, formats locations. */
export async function navigate(
  input: PositionInput,
  context: ToolContext,
  what: string,
  ask: (host: LspHost, path: string, position: { line: number; column: number }) => Promise<Location[]>,
): Promise<ToolResult> {
  const resolved = await resolvePosition(input, context);
  if (!("host" in resolved)) return resolved;
  const { host, path, position, source } = resolved;
  let locations: Location[];
  try {
    locations = await ask(host, path, position);
  } catch (error) {
    return failure(`the language server failed: ${(error as Error).message.split("\n")[0]}`);
  }
  if (locations.length === 0) return { ok: true, output: `no ${what} found`, summary: `no ${what}` };
  const files = new Map<string, string[] | undefined>();
  for (const location of locations) {
    if (location.external || files.has(location.path)) continue;
    files.set(location.path, (await source.readText(location.path))?.split("\n"));
  }
  const shown = locations.slice(0, 50).map((l) => formatLocation(l, files.get(l.path)));
  if (locations.length > 50) shown.push(`[${locations.length - 50} more]`);
  return { ok: true, output: shown.join("\n"), summary: `${locations.length} ${what}` };
}
