/** The region of a file most similar to a block that was not found, for a message a model can act on. */
import { collapseWs, type Line } from "./text.js";

export interface NearRegion {
  /** 0-based [start, end). */
  start: number;
  end: number;
  score: number;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(a: Map<string, number>, an: number, b: Map<string, number>, bn: number): number {
  if (an + bn === 0) return 1;
  let common = 0;
  for (const [g, c] of a) common += Math.min(c, b.get(g) ?? 0);
  return (2 * common) / (an + bn);
}

/** Up to `limit` non-overlapping regions of the block's length, most similar first. */
export function nearestRegions(lines: Line[], search: string[], limit = 2): NearRegion[] {
  const n = Math.max(1, search.length);
  const N = lines.length;
  if (N === 0 || search.length === 0) return [];
  const file = lines.map((l) => collapseWs(l.text));
  const s = search.map(collapseWs);
  const cheap = N * n > 3_000_000;
  const grams = new Map<string, { m: Map<string, number>; n: number }>();
  const gramOf = (t: string) => {
    let g = grams.get(t);
    if (!g) {
      const m = bigrams(t);
      g = { m, n: Math.max(0, t.length - 1) };
      grams.set(t, g);
    }
    return g;
  };
  const sim = (a: string, b: string): number => {
    if (a === b) return 1;
    if (cheap) return 0;
    const ga = gramOf(a);
    const gb = gramOf(b);
    return dice(ga.m, ga.n, gb.m, gb.n);
  };
  const span = Math.min(n, N);
  const scored: NearRegion[] = [];
  for (let p = 0; p + span <= N; p++) {
    let total = 0;
    for (let j = 0; j < span; j++) total += sim(s[j] ?? "", file[p + j] ?? "");
    scored.push({ start: p, end: p + span, score: total / n });
  }
  scored.sort((x, y) => y.score - x.score || x.start - y.start);
  const picked: NearRegion[] = [];
  for (const r of scored) {
    if (picked.length >= limit) break;
    const first = picked[0];
    if (first && r.score < first.score * 0.9) break;
    if (picked.some((q) => r.start < q.end && q.start < r.end)) continue;
    if (r.score <= 0) break;
    picked.push(r);
  }
  return picked;
}

/** Lines [start, end) of the file with 1-based numbers, long lines shortened. */
export function numbered(lines: Line[], start: number, end: number, maxLines = 40): string {
  const out: string[] = [];
  const last = Math.min(end, lines.length, start + maxLines);
  const width = String(last).length;
  for (let i = Math.max(0, start); i < last; i++) {
    const text = lines[i]?.text ?? "";
    const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    out.push(`${String(i + 1).padStart(width)}| ${shown}`);
  }
  if (end > last) out.push(`… (${end - last} more lines)`);
  return out.join("\n");
}

/** The first searched line that differs from the region, for the message. */
export function firstDifference(lines: Line[], search: string[], start: number): string | undefined {
  for (let j = 0; j < search.length; j++) {
    const f = lines[start + j]?.text;
    const s = search[j] ?? "";
    if (f === undefined) return `search line ${j + 1} (${JSON.stringify(s)}) runs past the end of the file`;
    if (f !== s) {
      return `search line ${j + 1} is ${JSON.stringify(s)} but file line ${start + j + 1} is ${JSON.stringify(f)}`;
    }
  }
  return undefined;
}
