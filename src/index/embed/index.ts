/**
 * Embedding providers and the machine-wide embedding cache.
 *
 *   const cache = new EmbeddingCache({ onWarning });
 *   const embedder = createEmbedder({ provider: "code-model" }, { codeModel: trainCodeModel(chunkTexts) });
 *   const { vectors } = await embedCached(embedder, cache, chunks.map((c) => ({ hash: c.hash, text: c.text })));
 */
import { type CodeModel, CodeModelEmbedder } from "./code-model.js";
import { type Embedder, EmbeddingError } from "./embedder.js";
import { OnnxLocalEmbedder } from "./onnx.js";
import { OpenAICompatibleEmbedder } from "./openai.js";

export {
  type EmbedCachedOptions,
  type EmbedCachedResult,
  type EmbedItem,
  embedCached,
  planBatches,
  raceAbort,
  type VectorCache,
} from "./batch.js";
export {
  CACHE_FILE_NAME,
  type CacheEntry,
  decodeVector,
  EmbeddingCache,
  type EmbeddingCacheOptions,
  encodeVector,
} from "./cache.js";
export {
  type CodeModel,
  CodeModelEmbedder,
  codeModelHash,
  deserializeCodeModel,
  serializeCodeModel,
  type TrainCodeModelOptions,
  trainCodeModel,
} from "./code-model.js";
export { type Embedder, EmbeddingError, isAbortError } from "./embedder.js";
export { MISSING_TRANSFORMERS_MESSAGE, OnnxLocalEmbedder, type OnnxLocalOptions } from "./onnx.js";
export { OpenAICompatibleEmbedder, type OpenAICompatibleOptions } from "./openai.js";

export type EmbedderConfig =
  | { provider: "code-model" }
  | {
      provider: "openai";
      baseUrl: string;
      model: string;
      apiKey?: string | undefined;
      dimensions?: number | undefined;
      timeoutMs?: number | undefined;
    }
  | { provider: "onnx"; dir: string };

export interface CreateEmbedderDeps {
  /** The learned model, required by the "code-model" provider (train it with `trainCodeModel`). */
  codeModel?: CodeModel | undefined;
  /** Replaces global fetch for the "openai" provider. */
  fetch?: typeof fetch | undefined;
}

/**
 * The embedder a configuration names. Remote and ONNX embedders are returned unopened: call their
 * `init()` to learn the dimensions / load the model up front, or let the first `embed` do it.
 */
export function createEmbedder(config: EmbedderConfig, deps: CreateEmbedderDeps = {}): Embedder {
  switch (config.provider) {
    case "code-model":
      if (!deps.codeModel) {
        throw new EmbeddingError(
          "the code-model embedder needs a trained model: createEmbedder(config, { codeModel })",
        );
      }
      return new CodeModelEmbedder(deps.codeModel);
    case "openai":
      return new OpenAICompatibleEmbedder({
        baseUrl: config.baseUrl,
        model: config.model,
        apiKey: config.apiKey,
        dimensions: config.dimensions,
        timeoutMs: config.timeoutMs,
        fetch: deps.fetch,
      });
    case "onnx":
      return new OnnxLocalEmbedder({ dir: config.dir });
    default: {
      const provider = (config as { provider?: unknown }).provider;
      throw new EmbeddingError(`unknown embedding provider ${String(provider)}`);
    }
  }
}
