import type {
  Diagnostic,
  DocumentSymbol,
  Hover,
  LocationLink,
  Location as LspLocation,
  MarkedString,
  MarkupContent,
  Range,
  SymbolInformation,
  WorkspaceSymbol,
} from "vscode-languageserver-protocol";
import type { Diag, HoverResult, Location, Position, Severity, SymbolInfo } from "./types.js";
import type { UriMapper } from "./uris.js";

const SEVERITIES: Record<number, Severity> = { 1: "error", 2: "warning", 3: "information", 4: "hint" };

/** LSP SymbolKind numbers in words. */
const SYMBOL_KINDS = [
  "",
  "file",
  "module",
  "namespace",
  "package",
  "class",
  "method",
  "property",
  "field",
  "constructor",
  "enum",
  "interface",
  "function",
  "variable",
  "constant",
  "string",
  "number",
  "boolean",
  "array",
  "object",
  "key",
  "null",
  "enum member",
  "struct",
  "event",
  "operator",
  "type parameter",
];

export function symbolKindName(kind: number): string {
  return SYMBOL_KINDS[kind] ?? `kind ${kind}`;
}

/** An LSP diagnostic of the file at `path` as a 1-based Diag. */
export function toDiag(path: string, diagnostic: Diagnostic): Diag {
  const { start, end } = diagnostic.range;
  const diag: Diag = {
    path,
    line: start.line + 1,
    column: start.character + 1,
    endLine: end.line + 1,
    endColumn: end.character + 1,
    severity: SEVERITIES[diagnostic.severity ?? 1] ?? "error",
    message: typeof diagnostic.message === "string" ? diagnostic.message : diagnostic.message.value,
  };
  if (diagnostic.code !== undefined && diagnostic.code !== null) diag.code = String(diagnostic.code);
  if (diagnostic.source) diag.source = diagnostic.source;
  return diag;
}

/** Sorts diagnostics by line, column, message. */
export function sortDiags(diags: Diag[]): Diag[] {
  return diags.sort((a, b) => a.line - b.line || a.column - b.column || a.message.localeCompare(b.message));
}

export function toLspPosition(position: Position): { line: number; character: number } {
  if (
    !Number.isInteger(position.line) ||
    position.line < 1 ||
    !Number.isInteger(position.column) ||
    position.column < 1
  ) {
    throw new RangeError(`positions are 1-based: got line ${position.line}, column ${position.column}`);
  }
  return { line: position.line - 1, character: position.column - 1 };
}

function rangeFields(range: Range): Omit<Location, "path" | "external"> {
  return {
    line: range.start.line + 1,
    column: range.start.character + 1,
    endLine: range.end.line + 1,
    endColumn: range.end.character + 1,
  };
}

export function toLocation(uris: UriMapper, uri: string, range: Range): Location {
  return { ...uris.toPath(uri), ...rangeFields(range) };
}

/** Definition/references answers (Location, Location[], LocationLink[] or null) as Locations. */
export function toLocations(
  uris: UriMapper,
  result: LspLocation | LspLocation[] | LocationLink[] | null | undefined,
): Location[] {
  if (!result) return [];
  const list: (LspLocation | LocationLink)[] = Array.isArray(result) ? result : [result];
  return list.map((item) =>
    "targetUri" in item
      ? toLocation(uris, item.targetUri, item.targetSelectionRange ?? item.targetRange)
      : toLocation(uris, item.uri, item.range),
  );
}

function markedText(content: MarkedString | MarkupContent): string {
  if (typeof content === "string") return content;
  if ("kind" in content) return content.value;
  return `\`\`\`${content.language}\n${content.value}\n\`\`\``;
}

export function toHover(hover: Hover | null | undefined): HoverResult | null {
  if (!hover) return null;
  const contents = Array.isArray(hover.contents) ? hover.contents : [hover.contents];
  const text = contents
    .map(markedText)
    .filter((part) => part.trim() !== "")
    .join("\n\n");
  if (text === "") return null;
  return hover.range ? { text, range: rangeFields(hover.range) } : { text };
}

/** documentSymbol answers (a DocumentSymbol tree or flat SymbolInformation) as a flat list in order. */
export function toDocumentSymbols(
  uris: UriMapper,
  uri: string,
  result: DocumentSymbol[] | SymbolInformation[] | null | undefined,
): SymbolInfo[] {
  if (!result) return [];
  const out: SymbolInfo[] = [];
  const walk = (symbols: DocumentSymbol[], container: string | undefined): void => {
    for (const symbol of symbols) {
      const info: SymbolInfo = {
        name: symbol.name,
        kind: symbolKindName(symbol.kind),
        location: toLocation(uris, uri, symbol.selectionRange ?? symbol.range),
      };
      if (container) info.container = container;
      if (symbol.detail) info.detail = symbol.detail;
      out.push(info);
      if (symbol.children) walk(symbol.children, container ? `${container}.${symbol.name}` : symbol.name);
    }
  };
  for (const item of result) {
    if ("location" in item) out.push(fromSymbolInformation(uris, item));
    else walk([item], undefined);
  }
  return out;
}

function fromSymbolInformation(uris: UriMapper, item: SymbolInformation | WorkspaceSymbol): SymbolInfo {
  const location =
    "range" in item.location
      ? toLocation(uris, item.location.uri, item.location.range)
      : { ...uris.toPath(item.location.uri), line: 1, column: 1, endLine: 1, endColumn: 1 };
  const info: SymbolInfo = { name: item.name, kind: symbolKindName(item.kind), location };
  if (item.containerName) info.container = item.containerName;
  return info;
}

export function toWorkspaceSymbols(
  uris: UriMapper,
  result: SymbolInformation[] | WorkspaceSymbol[] | null | undefined,
): SymbolInfo[] {
  return (result ?? []).map((item) => fromSymbolInformation(uris, item));
}
