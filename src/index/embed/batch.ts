/**
 * Embedding through the content-hash cache: look every chunk up first, embed only the misses in batches
 * bounded by count and by characters, and store each batch the moment it is done, so an interrupted run
 * (Ctrl-C, kill -9, a crash) resumes where it stopped.
 */
import type { CacheEntry } from "./cache.js";
import { abortReason, type Embedder, EmbeddingError } from "./embedder.js";

export interface EmbedItem {
  /** Content hash of the chunk: the cache key together with the embedder's id. */
  hash: string;
  text: string;
}

/** The part of `EmbeddingCache` that `embedCached` needs. */
export interface VectorCache {
  getMany(embedderId: string, hashes: Iterable<string>): Map<string, Float32Array>;
  putMany(embedderId: string, entries: Iterable<CacheEntry>): void;
}

export interface EmbedCachedOptions {
  /** Most texts in one `embed` call (default 64). */
  batchSize?: number;
  /** Most characters in one `embed` call (default 200 000); a longer single text goes alone. */
  maxBatchChars?: number;
  signal?: AbortSignal;
  /** Called with (items done, unique items); cache hits count as done from the start. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Attempts after the first for a failing request (default 3). A failing batch of several texts is
   * split in halves (after retrying it while its error is retryable); a single text that still fails
   * after `retries` more attempts stops the run with an EmbeddingError naming it (`hash`). Batches that
   * finished before stay cached.
   */
  retries?: number;
  /** First backoff delay in ms, doubled on each further attempt (default 500). */
  retryDelayMs?: number;
}

export interface EmbedCachedResult {
  /** A vector for every distinct hash of the input. */
  vectors: Map<string, Float32Array>;
  /** Distinct items that had to be embedded. */
  embedded: number;
  /** Distinct items found in the cache. */
  cached: number;
}

const MAX_BACKOFF_MS = 30_000;

/** Splits items into batches of at most `batchSize` texts and `maxBatchChars` characters, in order. */
export function planBatches(
  items: readonly EmbedItem[],
  batchSize: number,
  maxBatchChars: number,
): EmbedItem[][] {
  const batches: EmbedItem[][] = [];
  let current: EmbedItem[] = [];
  let chars = 0;
  for (const item of items) {
    const size = item.text.length;
    if (current.length > 0 && (current.length >= batchSize || chars + size > maxBatchChars)) {
      batches.push(current);
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export async function embedCached(
  embedder: Embedder,
  cache: VectorCache,
  items: readonly EmbedItem[],
  options: EmbedCachedOptions = {},
): Promise<EmbedCachedResult> {
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 64));
  const maxBatchChars = Math.max(1, options.maxBatchChars ?? 200_000);
  const retries = Math.max(0, Math.floor(options.retries ?? 3));
  const retryDelayMs = Math.max(0, options.retryDelayMs ?? 500);
  const { signal, onProgress } = options;
  signal?.throwIfAborted();

  const unique = new Map<string, string>();
  for (const item of items) if (!unique.has(item.hash)) unique.set(item.hash, item.text);
  const total = unique.size;

  const vectors = cache.getMany(embedder.id, unique.keys());
  for (const [hash, vector] of vectors) {
    // An entry of another length cannot belong to this embedder's output: embed it again.
    if (!unique.has(hash) || (embedder.dimensions > 0 && vector.length !== embedder.dimensions)) {
      vectors.delete(hash);
    }
  }
  const cached = vectors.size;
  let done = cached;
  let embedded = 0;
  onProgress?.(done, total);

  const misses: EmbedItem[] = [];
  for (const [hash, text] of unique) if (!vectors.has(hash)) misses.push({ hash, text });

  const backoff = (attempt: number): Promise<void> =>
    sleep(Math.min(MAX_BACKOFF_MS, retryDelayMs * 2 ** attempt) * (0.75 + Math.random() * 0.5), signal);

  const run = async (batch: EmbedItem[]): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      let result: Float32Array[];
      try {
        result = await raceAbort(
          embedder.embed(
            batch.map((item) => item.text),
            signal,
          ),
          signal,
        );
        checkVectors(result, batch.length, embedder.dimensions);
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal);
        const retryable = error instanceof EmbeddingError && error.retryable;
        if (batch.length > 1 && !(retryable && attempt < retries)) {
          // Isolate the text that fails: each half succeeds or splits again.
          const middle = Math.ceil(batch.length / 2);
          if (retryable) await backoff(attempt);
          await run(batch.slice(0, middle));
          await run(batch.slice(middle));
          return;
        }
        if (attempt < retries) {
          await backoff(attempt);
          continue;
        }
        const item = batch[0] as EmbedItem;
        const reason = error instanceof Error ? error.message : String(error);
        throw new EmbeddingError(
          `could not embed chunk ${item.hash} (${item.text.length} characters) with ${embedder.id} ` +
            `after ${attempt + 1} attempts: ${reason}`,
          {
            cause: error,
            retryable,
            hash: item.hash,
            ...(error instanceof EmbeddingError && error.status !== undefined
              ? { status: error.status }
              : {}),
          },
        );
      }
      const entries: CacheEntry[] = batch.map((item, i) => ({
        hash: item.hash,
        vector: result[i] as Float32Array,
      }));
      cache.putMany(embedder.id, entries);
      for (const entry of entries) vectors.set(entry.hash, entry.vector);
      embedded += batch.length;
      done += batch.length;
      onProgress?.(done, total);
      return;
    }
  };

  for (const batch of planBatches(misses, batchSize, maxBatchChars)) await run(batch);
  return { vectors, embedded, cached };
}

function checkVectors(
  vectors: unknown,
  expected: number,
  dimensions: number,
): asserts vectors is Float32Array[] {
  if (!Array.isArray(vectors) || vectors.length !== expected) {
    const got = Array.isArray(vectors) ? vectors.length : typeof vectors;
    throw new EmbeddingError(`embedder returned ${got} vectors for ${expected} texts`);
  }
  const length = dimensions > 0 ? dimensions : (vectors[0] as Float32Array | undefined)?.length;
  for (const vector of vectors) {
    if (!(vector instanceof Float32Array))
      throw new EmbeddingError("embedder returned a vector that is not a Float32Array");
    if (vector.length !== length) {
      throw new EmbeddingError(
        `embedder returned a vector of ${vector.length} dimensions, expected ${length}`,
      );
    }
    for (let i = 0; i < vector.length; i++) {
      if (!Number.isFinite(vector[i]))
        throw new EmbeddingError("embedder returned a vector with a non-finite value");
    }
  }
}

/** Settles like `promise`, or rejects with the signal's reason as soon as it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return raceAbort(
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => clearTimeout(timer), { once: true });
    }),
    signal,
  );
}
