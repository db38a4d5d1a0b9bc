/** BM25's inverse document frequency of a term that `df` of `documents` documents hold (pure). */
export function bm25Idf(documents: number, df: number): number {
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
}
