import type { Embedder } from "../embed/index.js";
import type { LexicalStore } from "../store/lexical.js";
import type { VectorStore } from "../store/vectors.js";

/** Stores a search reads; opened by the caller for the lifetime of one or many searches. */
export interface SearchContext {
  root: string;
  lexical: LexicalStore;
  vectors: VectorStore | undefined;
  embedder: Embedder | undefined;
}
