/** A chunk id with its score in a ranking. */
export interface Scored {
  id: number;
  score: number;
}

/** Best score first; equal scores by id, so that a ranking never depends on the order it was built in. */
export function byScore(a: Scored, b: Scored): number {
  return b.score - a.score || a.id - b.id;
}

/** One ranked list from one retrieval leg, best first. */
export interface RankedList {
  name: string;
  weight: number;
  ids: readonly number[];
}

/**
 * Reciprocal-rank fusion: each leg adds `weight / (k + rank)` for every id it ranks. Robust to the legs'
 * incomparable score scales; k = 60 is the usual constant.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], k = 60): Scored[] {
  const scores = new Map<number, number>();
  for (const list of lists) {
    list.ids.forEach((id, index) => {
      scores.set(id, (scores.get(id) ?? 0) + list.weight / (k + index + 1));
    });
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort(byScore);
}
