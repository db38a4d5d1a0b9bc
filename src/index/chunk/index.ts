export {
  CHUNKER_VERSION,
  type Chunk,
  type ChunkOptions,
  chunkFile,
  DEFAULT_MAX_TOKENS,
  lineChunks,
  parseBudgetMs,
} from "./chunker.js";
export { detectLanguage, SUPPORTED_LANGUAGES } from "./languages.js";
export { loadParsers } from "./parser.js";
export { estimateTokens } from "./tokens.js";
