/**
 * The embedding provider contract shared by every backend (the built-in code model, OpenAI-compatible
 * HTTP servers, local ONNX models) and by the content-hash cache.
 */

export interface Embedder {
  /**
   * Stable identity of the model and every setting that changes its output. It is the embedding cache's
   * key: two embedders with the same id must produce the same vectors for the same text.
   */
  readonly id: string;
  /** Length of every vector `embed` returns (0 while a remote embedder has not discovered it yet). */
  readonly dimensions: number;
  /** One vector per text, in the order of `texts`. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export interface EmbeddingErrorOptions {
  cause?: unknown;
  /** True when trying the same request again later may succeed (HTTP 429/5xx, timeouts, lost connections). */
  retryable?: boolean;
  /** HTTP status code, when the error came from an HTTP response. */
  status?: number;
  /** Content hash of the item that could not be embedded, when one item is to blame. */
  hash?: string;
}

/** Any failure to produce embeddings. */
export class EmbeddingError extends Error {
  override readonly name = "EmbeddingError";
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly hash: string | undefined;

  constructor(message: string, options: EmbeddingErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? false;
    this.status = options.status;
    this.hash = options.hash;
  }
}

/** True when `error` says the work was cancelled through an AbortSignal (as opposed to failing). */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

/** The reason an aborted signal carries, as something throwable. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}
