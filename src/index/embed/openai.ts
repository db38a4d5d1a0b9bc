/**
 * Embeddings from any server that speaks the OpenAI embeddings API: OpenAI itself, Ollama
 * (`http://127.0.0.1:11434/v1`), llama.cpp, vLLM, LM Studio, text-embeddings-inference...
 */
import { z } from "zod";
import { abortReason, type Embedder, EmbeddingError } from "./embedder.js";

export interface OpenAICompatibleOptions {
  /** API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** Expected vector length; discovered from the first response when absent. */
  dimensions?: number | undefined;
  /** Limit for one request, body included (default 60 000 ms). */
  timeoutMs?: number | undefined;
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof fetch | undefined;
}

const responseSchema = z.object({
  data: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      embedding: z.array(z.number()),
    }),
  ),
});

/** How much of an error body goes into a message. */
const BODY_EXCERPT = 300;

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > BODY_EXCERPT ? `${flat.slice(0, BODY_EXCERPT)}…` : flat;
}

export class OpenAICompatibleEmbedder implements Embedder {
  readonly id: string;
  readonly baseUrl: string;
  readonly model: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  #dimensions: number;
  #probe: Promise<number> | undefined;

  constructor(options: OpenAICompatibleOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.model = options.model;
    this.id = `openai:${this.baseUrl}:${this.model}`;
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#dimensions = options.dimensions ?? 0;
  }

  /** Vector length: as configured, else as discovered (0 until `init` or the first `embed`). */
  get dimensions(): number {
    return this.#dimensions;
  }

  /**
   * Learns the vector length with one small request, once, unless it was configured. Also a cheap check
   * that the server is reachable and the model exists.
   */
  init(signal?: AbortSignal): Promise<number> {
    if (this.#dimensions > 0) return Promise.resolve(this.#dimensions);
    if (!this.#probe) {
      this.#probe = this.embed(["dimension probe"], signal).then(
        () => this.#dimensions,
        (error: unknown) => {
          this.#probe = undefined;
          throw error;
        },
      );
    }
    return this.#probe;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const url = `${this.baseUrl}/embeddings`;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;

    let status = 0;
    let body: string;
    try {
      const response = await this.#fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.model, input: texts }),
        signal: combined,
      });
      status = response.status;
      body = await response.text();
      if (!response.ok) {
        throw new EmbeddingError(
          `POST ${url} failed: HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""}: ${excerpt(body) || "(empty body)"}`,
          { status, retryable: status === 408 || status === 429 || status >= 500 },
        );
      }
    } catch (error) {
      if (error instanceof EmbeddingError) throw error;
      if (signal?.aborted) throw abortReason(signal);
      if (timeout.aborted) {
        throw new EmbeddingError(`POST ${url} timed out after ${this.#timeoutMs} ms`, {
          cause: error,
          retryable: true,
        });
      }
      const reason = error instanceof Error ? describeNetworkError(error) : String(error);
      throw new EmbeddingError(`POST ${url} failed: ${reason}`, { cause: error, retryable: true });
    }
    return this.#parse(url, status, body, texts.length);
  }

  #parse(url: string, status: number, body: string, expected: number): Float32Array[] {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (error) {
      throw new EmbeddingError(
        `POST ${url} returned a body that is not JSON (HTTP ${status}): ${excerpt(body)}`,
        {
          cause: error,
          status,
        },
      );
    }
    const parsed = responseSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "unexpected shape";
      throw new EmbeddingError(
        `POST ${url} returned a malformed embeddings response (${where}): ${excerpt(body)}`,
        {
          status,
        },
      );
    }
    const { data } = parsed.data;
    if (data.length !== expected) {
      throw new EmbeddingError(`POST ${url} returned ${data.length} embeddings for ${expected} inputs`, {
        status,
      });
    }
    const out = new Array<Float32Array | undefined>(expected).fill(undefined);
    for (const item of data) {
      if (item.index >= expected || out[item.index] !== undefined) {
        throw new EmbeddingError(`POST ${url} returned a missing or repeated embedding index ${item.index}`, {
          status,
        });
      }
      out[item.index] = Float32Array.from(item.embedding);
    }
    const vectors = out as Float32Array[];
    const length = vectors[0]?.length ?? 0;
    if (length === 0) throw new EmbeddingError(`POST ${url} returned an empty embedding`, { status });
    for (const vector of vectors) {
      if (vector.length !== length) {
        throw new EmbeddingError(`POST ${url} returned embeddings of different lengths`, { status });
      }
    }
    if (this.#dimensions === 0) {
      this.#dimensions = length;
    } else if (length !== this.#dimensions) {
      throw new EmbeddingError(
        `${this.model} at ${this.baseUrl} returned ${length}-dimensional embeddings, expected ${this.#dimensions}`,
        { status },
      );
    }
    return vectors;
  }
}

/** "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND...). */
function describeNetworkError(error: Error): string {
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return `${error.message} (${code ? `${code}: ` : ""}${cause.message})`;
  }
  return error.message;
}
