/**
 * A branch's unified diff (as src/shadow/diff.ts writes it: git's headers, 3 lines of context) read
 * into files and hunks, numbered from 1 per file as the engine's per-hunk accept numbers them. Pure.
 */

export interface DiffLine {
  kind: "context" | "add" | "remove" | "note";
  text: string;
  /** The line's number in the base (context, remove) and in the branch (context, add). */
  oldLine?: number;
  newLine?: number;
}

export interface Hunk {
  /** 1-based, as `accept` takes it. */
  number: number;
  header: string;
  oldStart: number;
  newStart: number;
  lines: DiffLine[];
  added: number;
  removed: number;
}

export interface DiffFile {
  path: string;
  /** The lines before the first hunk other than the ---/+++ ones (new file mode, rename from, Binary files ...). */
  notes: string[];
  hunks: Hunk[];
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", '"': '"', "\\": "\\", r: "\r" };

/** A path as git writes it: bare, or in double quotes with C escapes (octal bytes are UTF-8). */
export function unquotePath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const char = body[i] ?? "";
    if (char !== "\\") {
      bytes.push(...new TextEncoder().encode(char));
      continue;
    }
    const next = body[i + 1] ?? "";
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(...new TextEncoder().encode(ESCAPES[next] ?? next));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** The path of a `--- a/x` / `+++ b/x` line (git's trailing tab dropped); undefined for /dev/null. */
function sidePath(line: string): string | undefined {
  const name = line.slice(4).replace(/\t$/, "");
  if (name === "/dev/null") return undefined;
  const unquoted = unquotePath(name);
  return unquoted.replace(/^[ab]\//, "");
}

/** The path named by `diff --git a/x b/x` when both sides are the same bare name. */
function gitLinePath(line: string): string {
  const rest = line.slice("diff --git ".length);
  if (rest.startsWith('"')) {
    const end = rest.indexOf('" ', 1);
    return unquotePath(rest.slice(0, end + 1)).replace(/^a\//, "");
  }
  const half = (rest.length - 1) / 2;
  return rest.slice(0, half).replace(/^a\//, "");
}

const HUNK_HEADER = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let hunk: Hunk | undefined;
  let oldLine = 0;
  let newLine = 0;
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("diff --git ")) {
      file = { path: gitLinePath(line), notes: [], hunks: [] };
      files.push(file);
      hunk = undefined;
      continue;
    }
    if (!file) continue;
    const header = HUNK_HEADER.exec(line);
    if (header) {
      oldLine = Number(header[1]);
      newLine = Number(header[2]);
      hunk = {
        number: file.hunks.length + 1,
        header: line,
        oldStart: oldLine,
        newStart: newLine,
        lines: [],
        added: 0,
        removed: 0,
      };
      file.hunks.push(hunk);
      continue;
    }
    if (!hunk) {
      if (line.startsWith("--- ") || line.startsWith("+++ ")) {
        const path = sidePath(line);
        if (path !== undefined) file.path = path;
      } else if (!line.startsWith("index ")) file.notes.push(line);
      continue;
    }
    if (line.startsWith("+")) {
      hunk.lines.push({ kind: "add", text: line.slice(1), newLine: newLine++ });
      hunk.added++;
    } else if (line.startsWith("-")) {
      hunk.lines.push({ kind: "remove", text: line.slice(1), oldLine: oldLine++ });
      hunk.removed++;
    } else if (line.startsWith("\\")) hunk.lines.push({ kind: "note", text: line });
    else hunk.lines.push({ kind: "context", text: line.slice(1), oldLine: oldLine++, newLine: newLine++ });
  }
  return files;
}
