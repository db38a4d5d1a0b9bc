import { rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { EmbedderConfig } from "../config/config.js";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
// Straight from the modules, not the embed/ index: that one loads every provider.
import { CodeModelEmbedder, serializeCodeModel } from "./embed/code-model.js";
import { type Embedder, EmbeddingError } from "./embed/embedder.js";
import {
  openStoredCodeModel,
  readCodeModelChecked,
  stampWrittenCodeModel,
} from "./embed/stored-code-model.js";

export class NotIndexedError extends Error {
  override name = "NotIndexedError";
}

export interface OpenEmbedderOptions {
  /** Where the workspace's learned code model is kept. */
  modelFile: string;
  env: NodeJS.ProcessEnv;
  /** Chunk texts to learn the code model from when none exists yet; absent when only searching. */
  trainingChunks?: () => Promise<string[]>;
  /** Stops learning the code model (or a remote embedder's probe) at once. */
  signal?: AbortSignal;
}

/** The stored code model for embedding queries (whatever its vector size: the index was built with it). */
function openForQueries(modelFile: string): Embedder {
  let embedder: Embedder | undefined;
  try {
    embedder = openStoredCodeModel(modelFile);
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error; // e.g. a data directory that cannot be read
    throw new NotIndexedError(`the code model is unreadable (${error.message}); run umbra index`);
  }
  if (!embedder) throw new NotIndexedError("this workspace has no index yet; run `umbra index` first");
  return embedder;
}

/** The configured embedder; the built-in code model is loaded, or learned from the workspace on first use. */
export async function openEmbedder(config: EmbedderConfig, options: OpenEmbedderOptions): Promise<Embedder> {
  switch (config.provider) {
    case "openai": {
      // Remote and ONNX providers are loaded only when configured, keeping start-up light.
      const { OpenAICompatibleEmbedder } = await import("./embed/openai.js");
      const apiKey = options.env[config.apiKeyEnv];
      const embedder = new OpenAICompatibleEmbedder({
        baseUrl: config.baseUrl,
        model: config.model,
        ...(apiKey ? { apiKey } : {}),
        ...(config.dimensions ? { dimensions: config.dimensions } : {}),
      });
      await embedder.init(options.signal);
      return embedder;
    }
    case "onnx": {
      const { OnnxLocalEmbedder } = await import("./embed/onnx.js");
      return OnnxLocalEmbedder.create({ dir: config.dir });
    }
    case "code-model": {
      if (!options.trainingChunks) return openForQueries(options.modelFile);
      try {
        const model = readCodeModelChecked(options.modelFile);
        if (model?.dimensions === config.dimensions) return new CodeModelEmbedder(model);
      } catch (error) {
        if (!(error instanceof EmbeddingError)) throw error;
        // unreadable: learned again below
      }
      const documents = await options.trainingChunks();
      // the training thread's module (and worker_threads) only when a model is learned, never to search
      const { trainCodeModelOffThread } = await import("./embed/train.js");
      const model = await trainCodeModelOffThread(
        { documents, dimensions: config.dimensions },
        options.signal,
      );
      await privateDir(dirname(options.modelFile));
      const temp = `${options.modelFile}.${process.pid}.tmp`;
      await writeFile(temp, serializeCodeModel(model), { mode: PRIVATE_FILE });
      await rename(temp, options.modelFile);
      stampWrittenCodeModel(options.modelFile, model.hash);
      return new CodeModelEmbedder(model);
    }
  }
}
