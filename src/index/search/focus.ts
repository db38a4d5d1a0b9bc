/**
 * Reshaping a fused ranking of chunks for a question, without changing the order in which files first
 * appear (pure, no I/O): a question asks for one place, so the file that answers it best should show its
 * best definitions, not one chunk and then other files' weaker matches.
 *
 * - `orderWithinFiles`: each file's chunks are re-ordered by `weigh` × score while the file keeps its own
 *   scores (its best chunk's score goes to its best-fitting chunk, and so on down), so files rank as they
 *   did and only which chunk of a file stands where changes.
 * - `liftByFile`: each chunk gains `share` × its file's best score: the second and third chunks of a
 *   strong file come before a weak file's only match. A file's best chunk gains as much as its score
 *   grows, so files still first appear in the same order.
 */

export interface Scored {
  id: number;
  score: number;
}

/** The path of a chunk, undefined when it is unknown (such a chunk stays where it is, alone). */
export type PathOf = (id: number) => string | undefined;

function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || a.id - b.id;
}

/** `ranked` (best first) with each file's chunks re-ordered by `weigh(id)` × score; see the module comment. */
export function orderWithinFiles(
  ranked: readonly Scored[],
  pathOf: PathOf,
  weigh: (id: number) => number,
): Scored[] {
  const files = new Map<string, Scored[]>();
  const alone: Scored[] = [];
  for (const hit of ranked) {
    const path = pathOf(hit.id);
    const hits = path === undefined ? undefined : files.get(path);
    if (path === undefined) alone.push(hit);
    else if (hits) hits.push(hit);
    else files.set(path, [hit]);
  }
  const out = [...alone];
  for (const hits of files.values()) {
    const scores = hits.map((hit) => hit.score).sort((a, b) => b - a);
    const fitted = hits.map((hit) => ({ id: hit.id, score: hit.score * weigh(hit.id) })).sort(byScore);
    for (const [i, hit] of fitted.entries()) out.push({ id: hit.id, score: scores[i] ?? 0 });
  }
  return out.sort(byScore);
}

/** `ranked` (best first) with each chunk raised by `share` × its file's best score; see the module comment. */
export function liftByFile(ranked: readonly Scored[], pathOf: PathOf, share: number): Scored[] {
  const best = new Map<string, number>();
  for (const hit of ranked) {
    const path = pathOf(hit.id);
    if (path !== undefined) best.set(path, Math.max(best.get(path) ?? hit.score, hit.score));
  }
  return ranked
    .map(({ id, score }) => {
      const path = pathOf(id);
      return { id, score: score + share * (path === undefined ? score : (best.get(path) ?? 0)) };
    })
    .sort(byScore);
}
