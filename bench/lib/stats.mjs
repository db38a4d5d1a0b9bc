// @ts-check
/** Summaries of timed runs shared by the bench scripts. */

/** The median of `xs` (NaN when empty). */
export function median(/** @type {number[]} */ xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** One row per variant: its name and the median, min and max of its times (ms). */
export function timeRows(/** @type {Record<string, number[]>} */ times) {
  return Object.entries(times).map(([name, list]) => ({
    name,
    medianMs: median(list),
    minMs: Math.min(...list),
    maxMs: Math.max(...list),
  }));
}
