export { embedCached, type EmbedCachedOptions, type EmbedCachedResult, type EmbedItem } from "./batch.js";
export { EmbeddingCache } from "./cache.js";
export {
  type CodeModel,
  CodeModelEmbedder,
  deserializeCodeModel,
  serializeCodeModel,
  trainCodeModel,
} from "./code-model.js";
export { type Embedder, EmbeddingError } from "./embedder.js";
