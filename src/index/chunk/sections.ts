/**
 * The structure the splitter walks: a tree of line ranges. Syntax trees (see syntax.ts), markdown
 * headings and plain-text paragraphs are all presented this way, so one split-then-merge algorithm
 * serves every kind of file.
 */

export interface Section {
  /** First and last row (0-based, inclusive) that the section's own text occupies. */
  readonly start: number;
  readonly end: number;
  /** Symbol-path segments when the section is a definition (function, class, heading, …). */
  readonly name?: readonly string[];
  /** Glues to the section right below it (comments, decorators, attributes). */
  readonly attached: boolean;
  /** Children in source order; empty for a leaf. Built on demand: only oversized sections are opened. */
  kids(): readonly Section[];
  /** Rows of a definition's signature (first line to the line before its body); definitions only. */
  signature(): { start: number; end: number } | undefined;
}

const NO_KIDS: readonly Section[] = [];

/** A leaf range of lines. */
export function leaf(start: number, end: number): Section {
  return { start, end, attached: false, kids: () => NO_KIDS, signature: () => undefined };
}

/** A block of lines whose children are its single lines. */
function block(start: number, end: number): Section {
  return {
    start,
    end,
    attached: false,
    kids: () => {
      const out: Section[] = [];
      for (let row = start; row <= end; row++) out.push(leaf(row, row));
      return out;
    },
    signature: () => undefined,
  };
}

/**
 * Blocks of consecutive non-blank rows in [from, to]; rows marked in `keep` (fenced code) never end a
 * block even when blank.
 */
function blocks(blank: readonly boolean[], from: number, to: number, keep?: readonly boolean[]): Section[] {
  const out: Section[] = [];
  let row = from;
  while (row <= to) {
    if (blank[row] && !keep?.[row]) {
      row++;
      continue;
    }
    const start = row;
    while (row <= to && (!blank[row] || keep?.[row])) row++;
    out.push(block(start, row - 1));
  }
  return out;
}

/** Plain text: the whole file as a root whose children are paragraphs (blank-line separated). */
export function paragraphRoot(blank: readonly boolean[]): Section {
  const last = blank.length - 1;
  return {
    start: 0,
    end: last,
    attached: false,
    kids: () => blocks(blank, 0, last),
    signature: () => undefined,
  };
}

// ---------------------------------------------------------------------------------------------------
// Markdown

interface Heading {
  row: number;
  /** Last row of the heading: the row itself, or the underline of a setext heading. */
  last: number;
  level: number;
  title: string;
}

interface Node {
  heading?: Heading;
  start: number;
  end: number;
  children: Node[];
}

/**
 * `## Title ##`. The title is the shortest that leaves only a closing sequence and blanks, so it is empty
 * or ends in a character that is not a blank: it is read in steps of blanks and one such character, not
 * character by character (which read the blanks after each again: cubic in a long run of them).
 */
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+((?:[ \t]*[^ \t\n\r\u2028\u2029])*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

function cleanTitle(title: string): string {
  return title.replace(/\s+/g, " ").trim();
}

/** Rows inside fenced code blocks (fence lines included) and YAML/TOML front matter. */
function fencedRows(lines: readonly string[]): boolean[] {
  const fenced = new Array<boolean>(lines.length).fill(false);
  let row = 0;
  const first = lines[0]?.trim();
  if (first === "---" || first === "+++") {
    for (let end = 1; end < lines.length; end++) {
      const line = lines[end]?.trim();
      if (line === first || (first === "---" && line === "...")) {
        for (let r = 0; r <= end; r++) fenced[r] = true;
        row = end + 1;
        break;
      }
    }
  }
  let open: string | undefined;
  for (; row < lines.length; row++) {
    const line = lines[row] ?? "";
    const match = FENCE.exec(line);
    if (open === undefined) {
      if (match?.[1]) {
        open = match[1];
        fenced[row] = true;
      }
    } else {
      fenced[row] = true;
      const closing = match?.[1];
      if (closing && closing[0] === open[0] && closing.length >= open.length && line.trim() === closing) {
        open = undefined;
      }
    }
  }
  return fenced;
}

function headings(
  lines: readonly string[],
  blank: readonly boolean[],
  fenced: readonly boolean[],
): Heading[] {
  const out: Heading[] = [];
  for (let row = 0; row < lines.length; row++) {
    if (fenced[row] || blank[row]) continue;
    const line = lines[row] ?? "";
    // ATX cannot match a line separator, and looking for one way around it was quadratic
    const atx = /[\n\r\u2028\u2029]/.test(line) ? null : ATX.exec(line);
    if (atx?.[1]) {
      out.push({ row, last: row, level: atx[1].length, title: cleanTitle(atx[2] ?? "") });
      continue;
    }
    // Setext: a single-line paragraph underlined with === (level 1) or --- (level 2).
    const next = lines[row + 1];
    if (next === undefined || fenced[row + 1] || !(row === 0 || blank[row - 1])) continue;
    const underline = SETEXT.exec(next);
    if (!underline?.[1] || SETEXT.test(line) || /^\s{0,3}([-*+>|]|\d+[.)])(\s|$)/.test(line)) continue;
    out.push({ row, last: row + 1, level: underline[1][0] === "=" ? 1 : 2, title: cleanTitle(line) });
    row++;
  }
  return out;
}

function markdownSection(node: Node, blank: readonly boolean[], fenced: readonly boolean[]): Section {
  const heading = node.heading;
  const name = heading?.title ? [heading.title] : undefined;
  return {
    start: node.start,
    end: node.end,
    attached: false,
    ...(name ? { name } : {}),
    kids: () => {
      const out: Section[] = [];
      let row = node.start;
      if (heading) {
        out.push(leaf(heading.row, heading.last));
        row = heading.last + 1;
      }
      const bodyEnd = (node.children[0]?.start ?? node.end + 1) - 1;
      out.push(...blocks(blank, row, bodyEnd, fenced));
      for (const child of node.children) out.push(markdownSection(child, blank, fenced));
      return out;
    },
    signature: () => (heading ? { start: heading.row, end: heading.last } : undefined),
  };
}

/**
 * Markdown: sections by headings (a section is its heading, its body and its sub-sections), outside
 * fenced code and front matter. A section's name is its heading text, so nested headings form the
 * symbol path ("Install > From source"). Bodies split into paragraphs, paragraphs into lines.
 */
export function markdownRoot(lines: readonly string[], blank: readonly boolean[]): Section {
  const fenced = fencedRows(lines);
  const root: Node = { start: 0, end: lines.length - 1, children: [] };
  const stack: { node: Node; level: number }[] = [{ node: root, level: 0 }];
  for (const heading of headings(lines, blank, fenced)) {
    for (
      let top = stack[stack.length - 1];
      top && top.level >= heading.level;
      top = stack[stack.length - 1]
    ) {
      top.node.end = heading.row - 1;
      stack.pop();
    }
    const node: Node = { heading, start: heading.row, end: lines.length - 1, children: [] };
    stack[stack.length - 1]?.node.children.push(node);
    stack.push({ node, level: heading.level });
  }
  return markdownSection(root, blank, fenced);
}
