/**
 * The line model shared by `applyEdit` and `applyPatch`: a file is a list of lines, each with its own
 * terminator, so that untouched lines come back byte for byte (mixed endings, a missing final newline and
 * a byte order mark included).
 */

export type Eol = "\r\n" | "\n" | "";

export interface Line {
  text: string;
  eol: Eol;
}

export interface Doc {
  bom: boolean;
  lines: Line[];
  /** The dominant line ending, used for lines the edit introduces. */
  eol: "\r\n" | "\n";
}

const BOM = "\uFEFF";

export function parseDoc(original: string): Doc {
  const bom = original.startsWith(BOM);
  const body = bom ? original.slice(1) : original;
  const lines: Line[] = [];
  let crlf = 0;
  let lf = 0;
  let pos = 0;
  while (pos < body.length) {
    const idx = body.indexOf("\n", pos);
    if (idx === -1) {
      lines.push({ text: body.slice(pos), eol: "" });
      break;
    }
    if (idx > pos && body.charCodeAt(idx - 1) === 13) {
      lines.push({ text: body.slice(pos, idx - 1), eol: "\r\n" });
      crlf++;
    } else {
      lines.push({ text: body.slice(pos, idx), eol: "\n" });
      lf++;
    }
    pos = idx + 1;
  }
  return { bom, lines, eol: crlf > lf ? "\r\n" : "\n" };
}

export function renderDoc(doc: Doc): string {
  let out = doc.bom ? BOM : "";
  for (const line of doc.lines) out += line.text + line.eol;
  return out;
}

/** Splits a model-written block into lines: any line ending accepted, one trailing newline dropped. */
export function splitBlock(block: string): string[] {
  let s = block.startsWith(BOM) ? block.slice(1) : block;
  s = s.replace(/\r\n/g, "\n");
  if (s === "") return [];
  if (s.endsWith("\n")) s = s.slice(0, -1);
  return s.split("\n");
}

/** Rewrites every line ending of `text` to `eol`. */
export function withEol(text: string, eol: "\r\n" | "\n"): string {
  const lf = text.replace(/\r\n/g, "\n");
  return eol === "\n" ? lf : lf.replace(/\n/g, "\r\n");
}

export function leadingWs(s: string): string {
  const m = /^[ \t]*/.exec(s);
  return m ? m[0] : "";
}

export function isBlank(s: string): boolean {
  return s.trim() === "";
}

/** Width of leading whitespace in columns, tabs advancing to the next multiple of `tab`. */
export function indentWidth(ws: string, tab: number): number {
  let w = 0;
  for (const ch of ws) w = ch === "\t" ? (Math.floor(w / tab) + 1) * tab : w + 1;
  return w;
}

export function renderIndent(width: number, tabs: boolean, tab: number): string {
  if (width <= 0) return "";
  if (!tabs) return " ".repeat(width);
  return "\t".repeat(Math.floor(width / tab)) + " ".repeat(width % tab);
}

export function collapseWs(s: string): string {
  return s.trim().replace(/\s+/g, " ");
}

/** 1-based line number of the character at `index`. */
export function lineAt(text: string, index: number): number {
  let n = 1;
  let pos = text.indexOf("\n");
  while (pos !== -1 && pos < index) {
    n++;
    pos = text.indexOf("\n", pos + 1);
  }
  return n;
}
