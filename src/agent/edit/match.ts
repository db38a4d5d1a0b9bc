/**
 * The matcher behind `applyEdit` and `applyPatch`. A change is a list of operations over lines (keep, delete,
 * add); the kept and deleted lines form the block to find. Stages run from strict to tolerant and the first
 * stage with a match decides: one distinct outcome is applied, several are refused as ambiguous. Lines the
 * change keeps are copied from the file, not from the model's text, so drift in them never leaks into the
 * result; added lines are re-indented by the offset found between the block and the file.
 */
import {
  collapseWs,
  type Doc,
  type Eol,
  indentWidth,
  isBlank,
  type Line,
  leadingWs,
  renderIndent,
} from "./text.js";

export type MatchStage =
  | "exact"
  | "trailing-whitespace"
  | "indentation"
  | "whitespace"
  /** One context line missing from the block, or one extra line in it that the file lacks. */
  | "context-line";

export const LINE_STAGES: readonly MatchStage[] = [
  "exact",
  "trailing-whitespace",
  "indentation",
  "whitespace",
  "context-line",
];

export interface Op {
  kind: "keep" | "del" | "add";
  text: string;
  /** Line ending for an added line; the file's dominant one when absent. */
  eol?: Eol;
}

export interface Candidate {
  /** 0-based region [start, end) of file lines replaced. */
  start: number;
  end: number;
  /** For each searched line (keep/del ops in order), the file line it matched, or -1 when extra. */
  map: number[];
  tab: number;
}

export interface Placement {
  candidate: Candidate;
  lines: Line[];
}

export type LocateResult =
  | { kind: "found"; stage: MatchStage; placement: Placement; viaHint: boolean }
  | { kind: "ambiguous"; stage: MatchStage; placements: Placement[] }
  | { kind: "not-found" };

const TABS = [4, 8, 2];

type Norm = (s: string) => string;
const identity: Norm = (s) => s;
const trimEnd: Norm = (s) => s.trimEnd();
const trimBoth: Norm = (s) => s.trim();

class NormCache {
  private readonly cache = new Map<Norm, string[]>();
  constructor(private readonly lines: Line[]) {}
  get(norm: Norm): string[] {
    let arr = this.cache.get(norm);
    if (!arr) {
      arr = this.lines.map((l) => norm(l.text));
      this.cache.set(norm, arr);
    }
    return arr;
  }
}

function searchLines(ops: Op[]): string[] {
  return ops.filter((o) => o.kind !== "add").map((o) => o.text);
}

/** The tab width under which every non-blank line pair differs in indentation by one constant, if any. */
function consistentTab(file: Line[], search: string[], map: number[]): number | undefined {
  for (const tab of TABS) {
    let delta: number | undefined;
    let ok = true;
    for (let j = 0; j < search.length && ok; j++) {
      const fi = map[j] ?? -1;
      const s = search[j] ?? "";
      if (fi < 0 || isBlank(s)) continue;
      const f = file[fi]?.text ?? "";
      const d = indentWidth(leadingWs(f), tab) - indentWidth(leadingWs(s), tab);
      if (delta === undefined) delta = d;
      else if (d !== delta) ok = false;
    }
    if (ok) return tab;
  }
  return undefined;
}

function contiguous(start: number, n: number): number[] {
  return Array.from({ length: n }, (_, j) => start + j);
}

/**
 * Where `pattern` occurs in `lines` (overlapping occurrences too), by Knuth–Morris–Pratt: time ≤ lines +
 * pattern, where comparing at every start took lines × pattern (a long block against a long file whose
 * lines repeat).
 */
export function occurrences(lines: readonly string[], pattern: readonly string[]): number[] {
  const n = pattern.length;
  const found: number[] = [];
  if (n === 0) return found;
  // border[j]: the length of the longest proper prefix of pattern[0..j] that is also its suffix
  const border = new Array<number>(n).fill(0);
  for (let j = 1, k = 0; j < n; j++) {
    while (k > 0 && pattern[j] !== pattern[k]) k = border[k - 1] as number;
    if (pattern[j] === pattern[k]) k++;
    border[j] = k;
  }
  for (let i = 0, k = 0; i < lines.length; i++) {
    while (k > 0 && lines[i] !== pattern[k]) k = border[k - 1] as number;
    if (lines[i] === pattern[k]) k++;
    if (k === n) {
      found.push(i - n + 1);
      k = border[k - 1] as number;
    }
  }
  return found;
}

/** All candidates of one stage. */
function candidatesAt(doc: Doc, cache: NormCache, ops: Op[], stage: MatchStage): Candidate[] {
  const search = searchLines(ops);
  const n = search.length;
  const out: Candidate[] = [];
  if (n === 0) return out;
  if (stage === "context-line") {
    // Every searched line found (one file line between) beats one searched line left out.
    const missing = fuzzyCandidates(doc, cache, ops, search, "missing");
    if (missing.length > 0 || missing.blocked) return missing;
    const extra = fuzzyCandidates(doc, cache, ops, search, "extra");
    return extra.blocked ? [] : extra;
  }
  const norm =
    stage === "exact"
      ? identity
      : stage === "trailing-whitespace"
        ? trimEnd
        : stage === "indentation"
          ? trimBoth
          : collapseWs;
  const file = cache.get(norm);
  const s = search.map(norm);
  for (const p of occurrences(file, s)) {
    const map = contiguous(p, n);
    let tab = 4;
    if (stage === "indentation" || stage === "whitespace") {
      const t = consistentTab(doc.lines, search, map);
      if (t === undefined) continue;
      tab = t;
    }
    out.push({ start: p, end: p + n, map, tab });
  }
  return out;
}

/**
 * One line missing or extra, at the first point where the block stops matching. Only lines the change keeps
 * may be missing or extra, and a missing line may not sit where the change adds lines (its place among them
 * would be a guess). Compared with whitespace collapsed; at least three searched lines needed.
 */
function fuzzyCandidates(
  doc: Doc,
  cache: NormCache,
  ops: Op[],
  search: string[],
  which: "missing" | "extra",
): Candidate[] & { blocked?: boolean } {
  const n = search.length;
  const N = doc.lines.length;
  const out: Candidate[] & { blocked?: boolean } = [];
  if (n < 3) return out;
  const file = cache.get(collapseWs);
  const s = search.map(collapseWs);
  // For each searched line, whether it is kept, and whether lines are added right before it.
  const kept: boolean[] = [];
  const addsBefore: boolean[] = [];
  // A kept line with kept lines right before and after it in the change (it sits inside plain context).
  const inContext: boolean[] = [];
  let pendingAdd = false;
  for (const [k, op] of ops.entries()) {
    if (op.kind === "add") {
      pendingAdd = true;
      continue;
    }
    kept.push(op.kind === "keep");
    addsBefore.push(pendingAdd);
    inContext.push(op.kind === "keep" && ops[k - 1]?.kind === "keep" && ops[k + 1]?.kind === "keep");
    pendingAdd = false;
  }
  const nonBlank = s.filter((x) => x !== "").length;
  if (nonBlank < 3) return out;
  const matchesFrom = (j0: number, f0: number): boolean => {
    for (let j = j0, f = f0; j < n; j++, f++) if (f >= N || file[f] !== s[j]) return false;
    return true;
  };
  for (let p = 0; p < N; p++) {
    let a = 0;
    while (a < n && p + a < N && file[p + a] === s[a]) a++;
    if (a === n) continue; // a plain match, found by an earlier stage
    // Extra line in the block at a.
    if (which === "extra" && a > 0 && a < n - 1 && matchesFrom(a + 1, p + a)) {
      if (inContext[a]) {
        const map = [...contiguous(p, a), -1, ...Array.from({ length: n - a - 1 }, (_, k) => p + a + k)];
        out.push({ start: p, end: p + n - 1, map, tab: 4 });
      } else out.blocked = true;
    }
    // Line missing from the block before index a.
    if (
      which === "missing" &&
      a >= 1 &&
      a < n &&
      kept[a - 1] &&
      kept[a] &&
      !addsBefore[a] &&
      matchesFrom(a, p + a + 1)
    ) {
      const map = [...contiguous(p, a), ...Array.from({ length: n - a }, (_, k) => p + a + 1 + k)];
      out.push({ start: p, end: p + n + 1, map, tab: 4 });
    }
  }
  // Indentation must still shift by one constant: in Python it is meaning, not layout.
  const consistent = out.filter((c) => {
    if (c.end > N || c.start >= c.end) return false;
    const tab = consistentTab(doc.lines, search, c.map);
    if (tab === undefined) return false;
    c.tab = tab;
    return true;
  });
  if (out.blocked) Object.assign(consistent, { blocked: true });
  return consistent;
}

interface IndentStyle {
  /** Only spaces lead the file's indented lines, or only tabs; undefined when mixed or none. */
  only?: "spaces" | "tabs";
  /** The smallest step of space indentation seen (2, 4, 8), for turning tabs into spaces. */
  unit: number;
}

const styles = new WeakMap<Line[], IndentStyle>();

function indentStyle(lines: Line[]): IndentStyle {
  let style = styles.get(lines);
  if (style) return style;
  let tabs = 0;
  let spaces = 0;
  const widths = new Set<number>();
  for (const l of lines) {
    const c = l.text[0];
    if (c === "\t") tabs++;
    else if (c === " " && l.text.trim() !== "") {
      spaces++;
      widths.add(leadingWs(l.text).length);
    }
  }
  // Tabs become 4 columns unless the file's indentation is mostly in steps of 2 or 8.
  const share = (u: number) =>
    widths.size === 0 ? 0 : [...widths].filter((w) => w % u === 0).length / widths.size;
  const unit = share(8) >= 0.9 ? 8 : share(4) >= 0.5 ? 4 : share(2) >= 0.9 ? 2 : 4;
  style = { only: tabs > 0 && spaces === 0 ? "tabs" : spaces > 0 && tabs === 0 ? "spaces" : undefined, unit };
  styles.set(lines, style);
  return style;
}

/** Added lines follow the file's indentation character when the file uses only one. */
function fitStyle(text: string, style: IndentStyle): string {
  const ws = leadingWs(text);
  if (ws === "" || isBlank(text)) return text;
  if (style.only === "spaces" && ws.includes("\t")) {
    return " ".repeat(indentWidth(ws, style.unit)) + text.slice(ws.length);
  }
  if (style.only === "tabs" && ws.startsWith(" ") && !ws.includes("\t") && ws.length % style.unit === 0) {
    return "\t".repeat(ws.length / style.unit) + text.slice(ws.length);
  }
  return text;
}

function buildReindent(doc: Doc, search: string[], cand: Candidate): (text: string) => string {
  const style = indentStyle(doc.lines);
  const inner = reindentRaw(doc, search, cand);
  return (text) => fitStyle(inner(text), style);
}

function reindentRaw(doc: Doc, search: string[], cand: Candidate): (text: string) => string {
  const pairs: [string, string][] = [];
  for (let j = 0; j < search.length; j++) {
    const fi = cand.map[j] ?? -1;
    const s = search[j] ?? "";
    const f = fi >= 0 ? (doc.lines[fi]?.text ?? "") : "";
    if (fi < 0 || isBlank(s) || isBlank(f)) continue;
    pairs.push([leadingWs(s), leadingWs(f)]);
  }
  if (pairs.every(([s, f]) => s === f)) return (t) => t;
  const map = new Map<string, string | null>();
  for (const [s, f] of pairs) {
    const prev = map.get(s);
    if (prev === undefined) map.set(s, f);
    else if (prev !== f) map.set(s, null);
  }
  const tab = cand.tab;
  const counts = new Map<number, number>();
  for (const [s, f] of pairs) {
    const d = indentWidth(f, tab) - indentWidth(s, tab);
    counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  let delta = 0;
  let best = -1;
  for (const [d, c] of counts) {
    if (c > best) {
      best = c;
      delta = d;
    }
  }
  let tabs = pairs.some(([, f]) => f.startsWith("\t"));
  if (!pairs.some(([, f]) => f !== "")) tabs = doc.lines.some((l) => l.text.startsWith("\t"));
  return (text) => {
    if (isBlank(text)) return text;
    const ws = leadingWs(text);
    const mapped = map.get(ws);
    if (mapped !== undefined && mapped !== null) return mapped + text.slice(ws.length);
    return renderIndent(indentWidth(ws, tab) + delta, tabs, tab) + text.slice(ws.length);
  };
}

/** The lines that replace the candidate's region. */
export function buildRegion(doc: Doc, ops: Op[], cand: Candidate): Line[] {
  const search = searchLines(ops);
  const reindent = buildReindent(doc, search, cand);
  const F = doc.lines;
  const out: Line[] = [];
  let ptr = cand.start;
  let sj = 0;
  // An added line that replaces a deleted one takes its line ending (files with mixed endings).
  let freed: Eol[] = [];
  for (const op of ops) {
    if (op.kind === "add") {
      out.push({ text: reindent(op.text), eol: op.eol ?? freed.shift() ?? doc.eol });
      continue;
    }
    const fi = cand.map[sj++] ?? -1;
    if (fi < 0) continue;
    while (ptr < fi) {
      const line = F[ptr++];
      if (line) out.push({ ...line });
    }
    const line = F[fi];
    if (op.kind === "keep" && line) {
      out.push({ ...line });
      freed = [];
    } else if (line) freed.push(line.eol);
    ptr = fi + 1;
  }
  while (ptr < cand.end) {
    const line = F[ptr++];
    if (line) out.push({ ...line });
  }
  for (let i = 0; i < out.length - 1; i++) {
    const line = out[i];
    if (line && line.eol === "") line.eol = doc.eol;
  }
  const last = out[out.length - 1];
  const fileLast = F[F.length - 1];
  if (last && cand.end === F.length && fileLast) last.eol = fileLast.eol;
  return out;
}

export interface LocateOptions {
  /** 0-based line where the block is expected; breaks a tie only when exactly one candidate starts there. */
  hint?: number;
  /** Only candidates starting at or after this line, when there are any. */
  notBefore?: number;
  stages?: readonly MatchStage[];
}

/** Places of an edit compared for the same outcome at most (past them it is ambiguous anyway). */
const MAX_COMPARED_PLACEMENTS = 100;

export function locate(doc: Doc, ops: Op[], options: LocateOptions = {}): LocateResult {
  const cache = new NormCache(doc.lines);
  for (const stage of options.stages ?? LINE_STAGES) {
    let cands = candidatesAt(doc, cache, ops, stage);
    if (cands.length === 0) continue;
    if (options.notBefore !== undefined) {
      const nb = options.notBefore;
      const after = cands.filter((c) => c.start >= nb);
      if (after.length > 0) cands = after;
    }
    const placements: Placement[] = [];
    for (const c of cands) {
      const lines = buildRegion(doc, ops, c);
      // Two places whose outcome is the same file are not a choice (past a hundred the edit is ambiguous
      // whatever they are: the rest are counted, not compared, which took places² for a repetitive file).
      const dup =
        placements.length < MAX_COMPARED_PLACEMENTS &&
        placements.some(
          (p) =>
            p.candidate.start - c.start === p.candidate.end - c.end &&
            sameRegionOutcome(doc, p, { candidate: c, lines }),
        );
      if (!dup) placements.push({ candidate: c, lines });
    }
    const only = placements[0];
    if (placements.length === 1 && only) return { kind: "found", stage, placement: only, viaHint: false };
    if (options.hint !== undefined) {
      const at = placements.filter((p) => p.candidate.start === options.hint);
      const one = at[0];
      if (at.length === 1 && one) return { kind: "found", stage, placement: one, viaHint: true };
    }
    return { kind: "ambiguous", stage, placements };
  }
  return { kind: "not-found" };
}

/**
 * Whether two placements with regions of equal length produce the same file: the lines from the first
 * region's start to the last one's end compared one by one as each placement would leave them, up to the
 * first that differs (building both, a search block that matches every few lines of a long file took
 * hours: places × places × lines).
 */
function sameRegionOutcome(doc: Doc, a: Placement, b: Placement): boolean {
  if (a.lines.length !== b.lines.length) return false;
  const lo = Math.min(a.candidate.start, b.candidate.start);
  const hi = Math.max(a.candidate.end, b.candidate.end);
  const lineOf = (p: Placement, i: number): Line | undefined => {
    const before = p.candidate.start - lo;
    if (i < before) return doc.lines[lo + i];
    if (i < before + p.lines.length) return p.lines[i - before];
    return doc.lines[p.candidate.end + i - before - p.lines.length];
  };
  const length = hi - lo - (a.candidate.end - a.candidate.start) + a.lines.length;
  for (let i = 0; i < length; i++) {
    const x = lineOf(a, i);
    const y = lineOf(b, i);
    if (!x || !y || x.text !== y.text || x.eol !== y.eol) return false;
  }
  return true;
}

/** Replaces the candidate's region in place. */
export function spliceDoc(doc: Doc, placement: Placement): void {
  const { start, end } = placement.candidate;
  doc.lines.splice(start, end - start, ...placement.lines);
}
