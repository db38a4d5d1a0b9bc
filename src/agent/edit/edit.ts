/** Search/replace edits: exact first, then line-based stages that tolerate whitespace and indentation drift. */
import { diffLines } from "../../workspace/line-diff.js";
import {
  buildRegion,
  type Candidate,
  LINE_STAGES,
  locate,
  type MatchStage,
  type Op,
  type Placement,
} from "./match.js";
import { firstDifference, nearestRegions, numbered } from "./nearest.js";
import { type Doc, type Line, lineAt, parseDoc, renderDoc, splitBlock, withEol } from "./text.js";

export interface EditCandidate {
  startLine: number;
  endLine: number;
  preview: string;
}

export type EditResult =
  | { ok: true; text: string; stage: MatchStage; startLine: number; endLine: number; count?: number }
  | {
      ok: false;
      reason: "not-found" | "ambiguous" | "empty-search";
      message: string;
      candidates?: EditCandidate[];
    };

export interface EditOptions {
  /** Replace every occurrence instead of refusing when the search text occurs more than once. */
  replaceAll?: boolean;
}

const BOM = "\uFEFF";
const MAX_LISTED = 5;

/** Ops turning the search lines into the replacement lines; equal lines are kept. */
export function opsFor(search: string[], replace: string[]): Op[] {
  const ops: Op[] = [];
  for (const { kind, lines } of diffLines(search, replace))
    for (const text of lines) ops.push({ kind, text });
  return ops;
}

function preview(lines: Line[], start: number, end: number): string {
  return numbered(lines, start, Math.min(end, start + 6));
}

export function applyEdit(
  original: string,
  search: string,
  replace: string,
  options: EditOptions = {},
): EditResult {
  const searchBody = search.startsWith(BOM) ? search.slice(1) : search;
  if (searchBody === "") {
    return {
      ok: false,
      reason: "empty-search",
      message:
        "The search text is empty. Give the exact lines to replace (copied from the file), or write the whole file instead.",
    };
  }
  const doc = parseDoc(original);
  const searchLines = splitBlock(searchBody);
  const replaceLines = splitBlock(replace);
  const exact = exactStage(original, doc, searchBody, replace, options, searchLines, replaceLines);
  if (exact) return exact;

  if (searchLines.every((l) => l.trim() === "")) {
    return {
      ok: false,
      reason: "not-found",
      message:
        "The search text (only blank lines) was not found exactly; add a non-blank line from the file to it.",
    };
  }
  const ops = opsFor(searchLines, replaceLines);
  const stages = options.replaceAll ? LINE_STAGES.filter((s) => s !== "context-line") : LINE_STAGES;
  if (options.replaceAll) return replaceAllLines(doc, ops, stages, searchLines);
  const found = locate(doc, ops, { stages });
  if (found.kind === "found") return finish(doc, found.placement, found.stage);
  if (found.kind === "ambiguous")
    return ambiguous(
      doc,
      found.placements.map((p) => p.candidate),
      found.stage,
    );
  return notFound(doc, searchLines);
}

function finish(doc: Doc, placement: Placement, stage: MatchStage): EditResult {
  const { start, end } = placement.candidate;
  const lines = placement.lines;
  doc.lines.splice(start, end - start, ...lines);
  const startLine = start + 1;
  return {
    ok: true,
    text: renderDoc(doc),
    stage,
    startLine,
    endLine: Math.max(startLine, start + lines.length),
  };
}

function exactStage(
  original: string,
  doc: Doc,
  search: string,
  replace: string,
  options: EditOptions,
  searchLines: string[],
  replaceLines: string[],
): EditResult | undefined {
  const bom = original.startsWith(BOM) ? BOM : "";
  const body = bom ? original.slice(1) : original;
  let s = withEol(search, doc.eol);
  let r = withEol(replace.startsWith(BOM) ? replace.slice(1) : replace, doc.eol);
  if (!body.includes(s) && body.includes(search)) {
    // A file with mixed line endings: the text as given.
    s = search;
    r = replace;
  }
  const hits: number[] = [];
  for (let i = body.indexOf(s); i !== -1; i = body.indexOf(s, i + 1)) hits.push(i);
  if (hits.length === 0) return undefined;
  if (hits.length > 1 && !options.replaceAll) {
    const cands = hits.map((h) => {
      const startLine = lineAt(body, h);
      return { start: startLine - 1, end: lineAt(body, h + Math.max(0, s.length - 1)), map: [], tab: 4 };
    });
    return ambiguous(doc, cands, "exact");
  }
  const first = hits[0] ?? 0;
  const wholeLines =
    (first === 0 || body[first - 1] === "\n") && (s.endsWith("\n") || first + s.length === body.length);
  if (wholeLines && !options.replaceAll) {
    // Whole lines: through the line model, so that added lines follow the file's endings and indentation.
    const start = lineAt(body, first) - 1;
    const cand: Candidate = { start, end: start + searchLines.length, map: [], tab: 4 };
    cand.map = searchLines.map((_, j) => start + j);
    const ops = opsFor(searchLines, replaceLines);
    if (searchLines.every((l, j) => doc.lines[start + j]?.text === l)) {
      return finish(doc, { candidate: cand, lines: buildRegion(doc, ops, cand) }, "exact");
    }
  }
  const parts = options.replaceAll ? body.split(s) : [body.slice(0, first), body.slice(first + s.length)];
  const text = bom + parts.join(r);
  const startLine = lineAt(body, first);
  const rLines = r.endsWith("\n") ? r.split("\n").length - 1 : r.split("\n").length;
  const result: EditResult = {
    ok: true,
    text,
    stage: "exact",
    startLine,
    endLine: Math.max(startLine, startLine + rLines - 1),
  };
  if (options.replaceAll) result.count = parts.length - 1;
  return result;
}

function replaceAllLines(
  doc: Doc,
  ops: Op[],
  stages: readonly MatchStage[],
  searchLines: string[],
): EditResult {
  for (const stage of stages) {
    const found = locate(doc, ops, { stages: [stage] });
    if (found.kind === "not-found") continue;
    const placements = found.kind === "found" ? [found.placement] : found.placements;
    // Non-overlapping, first come first served, applied bottom-up so earlier indices stay valid.
    const chosen: Placement[] = [];
    let lastEnd = -1;
    for (const p of [...placements].sort((a, b) => a.candidate.start - b.candidate.start)) {
      if (p.candidate.start >= lastEnd) {
        chosen.push(p);
        lastEnd = p.candidate.end;
      }
    }
    for (const p of [...chosen].reverse()) {
      doc.lines.splice(p.candidate.start, p.candidate.end - p.candidate.start, ...p.lines);
    }
    const firstP = chosen[0];
    const startLine = (firstP?.candidate.start ?? 0) + 1;
    return {
      ok: true,
      text: renderDoc(doc),
      stage,
      startLine,
      endLine: Math.max(startLine, startLine + (firstP?.lines.length ?? 1) - 1),
      count: chosen.length,
    };
  }
  return notFound(doc, searchLines);
}

function ambiguous(doc: Doc, cands: Candidate[], stage: MatchStage): EditResult {
  const candidates = cands.map((c) => ({
    startLine: c.start + 1,
    endLine: Math.max(c.start + 1, c.end),
    preview: preview(doc.lines, c.start, c.end),
  }));
  const listed = candidates
    .slice(0, MAX_LISTED)
    .map((c) => `lines ${c.startLine}-${c.endLine}:\n${c.preview}`)
    .join("\n\n");
  const more =
    candidates.length > MAX_LISTED ? `\n\n… and ${candidates.length - MAX_LISTED} more places` : "";
  const how = stage === "exact" ? "exactly" : `when compared with ${stage} tolerance`;
  return {
    ok: false,
    reason: "ambiguous",
    message:
      `The search text matches ${candidates.length} places ${how}, so nothing was changed. ` +
      `Add surrounding lines to the search text so that it matches only one place, or set replaceAll.\n\n${listed}${more}`,
    candidates,
  };
}

export function notFoundMessage(
  lines: Line[],
  search: string[],
  what: string,
): {
  message: string;
  candidates: EditCandidate[];
} {
  const near = nearestRegions(lines, search);
  const candidates = near.map((r) => ({
    startLine: r.start + 1,
    endLine: Math.max(r.start + 1, r.end),
    preview: numbered(lines, r.start, r.end),
  }));
  const tried =
    "exactly, ignoring trailing whitespace, ignoring indentation, ignoring all whitespace differences, or with one context line missing or extra";
  let message = `${what} was not found in the file (compared ${tried}), so nothing was changed.`;
  const best = near[0];
  if (best) {
    message += ` The most similar region is lines ${best.start + 1}-${best.end} (${Math.round(best.score * 100)}% similar):\n${numbered(lines, best.start, best.end)}`;
    const diff = firstDifference(lines, search, best.start);
    if (diff) message += `\nFirst difference: ${diff}.`;
    for (const other of near.slice(1))
      message += `\nAnother similar region: lines ${other.start + 1}-${other.end}.`;
    message += "\nCopy the lines exactly as they are in the file now (read it again if unsure) and retry.";
  } else {
    message += " The file is empty or nothing in it resembles the search text; read the file again.";
  }
  return { message, candidates };
}

function notFound(doc: Doc, searchLines: string[]): EditResult {
  const { message, candidates } = notFoundMessage(doc.lines, searchLines, "The search text");
  return { ok: false, reason: "not-found", message, candidates };
}
