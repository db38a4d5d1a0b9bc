/**
 * Reshaping a fused ranking of chunks by file (pure, no I/O). For a question, without changing the order
 * in which files first appear: a question asks for one place, so the file that answers it best should
 * show the definition that answers it, and its other chunks before other files' weaker matches.
 *
 * - `keepFileScores`: files score as one ranking has them while their chunks are ordered as another has
 *   them (the same legs, a file's vote in the file-level legs given to another of its chunks: the one
 *   whose name says what the question says), so choosing which chunk stands for a file never moves it.
 * - `liftByFile`: each chunk gains `share` × its file's best score: the second and third chunks of a
 *   strong file come before a weak file's only match. A file's best chunk gains as much as its score
 *   grows, so files still first appear in the same order.
 *
 * For a report, files may move: `supportByFile` counts a file's other matching chunks as evidence for it.
 */

import { byScore, type Scored } from "./fusion.js";

/** The path of a chunk, undefined when it is unknown (such a chunk stays where it is, alone). */
export type PathOf = (id: number) => string | undefined;

/**
 * The chunks of `chunks` (best first), each scaled by its file's best score in `files` over its file's
 * best score in `chunks`: files keep the scores (and so the order) `files` gives them, while which chunk
 * of a file comes first, and how far the others trail it, is as `chunks` has it. A chunk whose file
 * `files` does not rank keeps its score.
 */
export function keepFileScores(
  files: readonly Scored[],
  chunks: readonly Scored[],
  pathOf: PathOf,
): Scored[] {
  const bestOf = (ranked: readonly Scored[]) => {
    const best = new Map<string, number>();
    for (const { id, score } of ranked) {
      const path = pathOf(id);
      if (path !== undefined) best.set(path, Math.max(best.get(path) ?? score, score));
    }
    return best;
  };
  const target = bestOf(files);
  const own = bestOf(chunks);
  return chunks
    .map(({ id, score }) => {
      const path = pathOf(id);
      const to = path === undefined ? undefined : target.get(path);
      const from = path === undefined ? undefined : own.get(path);
      return { id, score: to !== undefined && from ? (score * to) / from : score };
    })
    .sort(byScore);
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

/**
 * `ranked` (best first) with each file's best chunk raised by `share` × the scores of the `count` chunks
 * of the file that follow it: a file several of whose chunks match a report comes before one with a
 * single match as strong. Only a file's first chunk moves, so within a file the order stays.
 */
export function supportByFile(
  ranked: readonly Scored[],
  pathOf: PathOf,
  share: number,
  count: number,
): Scored[] {
  const files = new Map<string, { best: number; following: number; gain: number }>();
  for (const { id, score } of ranked) {
    const path = pathOf(id);
    if (path === undefined) continue;
    const file = files.get(path);
    if (!file) files.set(path, { best: id, following: 0, gain: 0 });
    else if (file.following < count) {
      file.following++;
      file.gain += share * score;
    }
  }
  const gain = new Map([...files.values()].map((file) => [file.best, file.gain]));
  return ranked.map(({ id, score }) => ({ id, score: score + (gain.get(id) ?? 0) })).sort(byScore);
}
