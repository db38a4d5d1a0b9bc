/**
 * A local sentence-embedding model (ONNX, e.g. all-MiniLM-L6-v2 or bge-small exported for
 * transformers.js) run in-process through the optional package `@huggingface/transformers`. Models are
 * read from a local directory only; nothing is ever fetched from a hub.
 *
 * The directory holds what transformers.js expects: config.json, tokenizer.json (+ tokenizer_config.json)
 * and onnx/model.onnx (or model_quantized.onnx / model_fp16.onnx).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { type Embedder, EmbeddingError } from "./embedder.js";

export const TRANSFORMERS_PACKAGE = "@huggingface/transformers";
export const MISSING_TRANSFORMERS_MESSAGE = `the onnx embedder needs the optional package ${TRANSFORMERS_PACKAGE}: npm i ${TRANSFORMERS_PACKAGE}`;

export interface OnnxLocalOptions {
  /** Directory of the model. */
  dir: string;
  /** Weights to use: "fp32" → onnx/model.onnx, "q8" → model_quantized.onnx, "fp16" → model_fp16.onnx; default: the first present. */
  dtype?: "fp32" | "fp16" | "q8" | undefined;
  /** Loads a module by name (tests); default: dynamic `import()`. */
  importModule?: ((name: string) => Promise<unknown>) | undefined;
}

/** The part of transformers.js used here. */
interface Tensor {
  dims: readonly number[];
  data: ArrayLike<number>;
}
type FeatureExtractor = ((
  texts: string[],
  options: { pooling: "mean"; normalize: boolean },
) => Promise<Tensor>) & { dispose?: () => Promise<unknown> | unknown };
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline: (task: string, model: string, options: Record<string, unknown>) => Promise<FeatureExtractor>;
}

const WEIGHTS: Record<"fp32" | "fp16" | "q8", string> = {
  fp32: "model.onnx",
  q8: "model_quantized.onnx",
  fp16: "model_fp16.onnx",
};

function isTransformersModule(value: unknown): value is TransformersModule {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<TransformersModule>;
  return (
    typeof candidate.pipeline === "function" && typeof candidate.env === "object" && candidate.env !== null
  );
}

/** Loads transformers.js, turning "not installed" into the documented EmbeddingError. */
export async function loadTransformers(
  importModule: (name: string) => Promise<unknown> = (name) => import(name),
): Promise<TransformersModule> {
  let loaded: unknown;
  try {
    loaded = await importModule(TRANSFORMERS_PACKAGE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const message = error instanceof Error ? error.message : String(error);
    if (
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      message.includes(TRANSFORMERS_PACKAGE)
    ) {
      throw new EmbeddingError(MISSING_TRANSFORMERS_MESSAGE, { cause: error });
    }
    throw new EmbeddingError(`could not load ${TRANSFORMERS_PACKAGE}: ${message}`, { cause: error });
  }
  // An ES module namespace, or a CommonJS module under `default`.
  const candidate = isTransformersModule(loaded)
    ? loaded
    : (loaded as { default?: unknown } | undefined)?.default;
  if (!isTransformersModule(candidate)) {
    throw new EmbeddingError(`${TRANSFORMERS_PACKAGE} does not export pipeline and env as expected`);
  }
  return candidate;
}

export class OnnxLocalEmbedder implements Embedder {
  readonly id: string;
  readonly dir: string;
  readonly #dtype: "fp32" | "fp16" | "q8" | undefined;
  readonly #importModule: ((name: string) => Promise<unknown>) | undefined;
  #dimensions: number;
  #extractor: Promise<FeatureExtractor> | undefined;

  /** A ready embedder: the package is loaded and the model opened. */
  static async create(options: OnnxLocalOptions): Promise<OnnxLocalEmbedder> {
    const embedder = new OnnxLocalEmbedder(options);
    await embedder.init();
    return embedder;
  }

  constructor(options: OnnxLocalOptions) {
    this.dir = resolve(options.dir);
    this.#importModule = options.importModule;
    this.#dtype = options.dtype ?? this.#presentDtype();
    const config = this.#readConfig();
    this.#dimensions = configDimensions(config.json);
    // Identity: what the model computes, not where it lives, so copies of one model share cache entries.
    const fingerprint = createHash("sha256").update(config.text);
    for (const file of [
      "tokenizer.json",
      "tokenizer_config.json",
      join("onnx", WEIGHTS[this.#dtype ?? "fp32"]),
    ]) {
      try {
        fingerprint.update(`\n${file}:${statSync(join(this.dir, file)).size}`);
      } catch {
        fingerprint.update(`\n${file}:-`);
      }
    }
    fingerprint.update("\npooling=mean;normalize=true");
    this.id = `onnx:${basename(this.dir)}:${this.#dtype ?? "fp32"}:${fingerprint.digest("hex").slice(0, 16)}`;
  }

  /** 0 until known: from config.json (hidden_size) or from the first output. */
  get dimensions(): number {
    return this.#dimensions;
  }

  /** Loads transformers.js and opens the model (once). */
  async init(): Promise<void> {
    if (!this.#extractor) {
      this.#extractor = this.#open();
      this.#extractor.catch(() => {
        this.#extractor = undefined;
      });
    }
    await this.#extractor;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    await this.init();
    const extractor = await (this.#extractor as Promise<FeatureExtractor>);
    signal?.throwIfAborted();
    let output: Tensor;
    try {
      output = await extractor(texts, { pooling: "mean", normalize: true });
    } catch (error) {
      throw new EmbeddingError(`onnx model ${this.dir} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const [count, width] = output.dims;
    if (output.dims.length !== 2 || count !== texts.length || !width) {
      throw new EmbeddingError(
        `onnx model ${this.dir} returned a tensor of shape [${output.dims.join(", ")}]`,
      );
    }
    if (this.#dimensions === 0) this.#dimensions = width;
    if (width !== this.#dimensions) {
      throw new EmbeddingError(
        `onnx model ${this.dir} returned ${width} dimensions, expected ${this.#dimensions}`,
      );
    }
    const vectors: Float32Array[] = [];
    for (let i = 0; i < count; i++) {
      const vector = new Float32Array(width);
      for (let d = 0; d < width; d++) vector[d] = output.data[i * width + d] as number;
      vectors.push(vector);
    }
    return vectors;
  }

  /** Frees the ONNX session. */
  async close(): Promise<void> {
    const extractor = this.#extractor;
    this.#extractor = undefined;
    if (extractor) await (await extractor.catch(() => undefined))?.dispose?.();
  }

  async #open(): Promise<FeatureExtractor> {
    const transformers = await loadTransformers(this.#importModule);
    if (!existsSync(join(this.dir, "config.json"))) {
      throw new EmbeddingError(`no ONNX model in ${this.dir}: config.json is missing`);
    }
    if (!this.#dtype) {
      throw new EmbeddingError(
        `no ONNX weights in ${join(this.dir, "onnx")}: expected ${Object.values(WEIGHTS).join(", ")}`,
      );
    }
    // Local files only: never reach a model hub.
    transformers.env.allowRemoteModels = false;
    transformers.env.allowLocalModels = true;
    transformers.env.localModelPath = dirname(this.dir) + sep;
    try {
      return await transformers.pipeline("feature-extraction", basename(this.dir), {
        local_files_only: true,
        dtype: this.#dtype,
      });
    } catch (error) {
      throw new EmbeddingError(`could not open the onnx model in ${this.dir}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  #presentDtype(): "fp32" | "fp16" | "q8" | undefined {
    for (const dtype of ["fp32", "q8", "fp16"] as const) {
      if (existsSync(join(this.dir, "onnx", WEIGHTS[dtype]))) return dtype;
    }
    return undefined;
  }

  #readConfig(): { text: string; json: unknown } {
    try {
      const text = readFileSync(join(this.dir, "config.json"), "utf8");
      return { text, json: JSON.parse(text) };
    } catch {
      return { text: `path:${this.dir}`, json: undefined };
    }
  }
}

function configDimensions(config: unknown): number {
  if (typeof config !== "object" || config === null) return 0;
  const record = config as Record<string, unknown>;
  for (const key of ["hidden_size", "d_model", "dim", "n_embd"]) {
    const value = record[key];
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  }
  return 0;
}
