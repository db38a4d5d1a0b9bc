/**
 * The built-in embedder: word vectors learned from the indexed code itself, so umbra has semantic search
 * with nothing to download and nothing leaving the machine.
 *
 * Training (count-based word embeddings, Levy, Goldberg & Dagan 2015):
 *  1. tokens of every chunk via `codeTokens` (identifiers and their camel/snake sub-words);
 *  2. vocabulary: the most frequent tokens seen at least `minCount` times;
 *  3. co-occurrence counts in a sliding window with linearly decaying integer weights
 *     (window − distance + 1), kept only for the upper triangle since they are symmetric;
 *  4. PPMI with context-distribution smoothing (α = 0.75), as a sparse CSR matrix;
 *  5. truncated SVD by randomized SVD (Halko, Martinsson & Tropp 2011): seeded Gaussian projection,
 *     power iterations, QR by modified Gram-Schmidt, then the small matrix B·Bᵀ diagonalised by Jacobi
 *     rotations;
 *  6. word vectors U·Σ^0.5, each scaled to unit length.
 * Every count is an integer and everything after counting runs in a canonical order, so the same
 * documents in any order give a bit-identical model and hash.
 *
 * A text's vector is the idf-weighted (sublinear tf) sum of its tokens' word vectors, L2-normalised.
 */
import { createHash } from "node:crypto";
import { codeTokens, identifiers, termFrequencies } from "../tokenize.js";
import { type Embedder, EmbeddingError } from "./embedder.js";
import { type CsrMatrix, randomizedSvd } from "./linalg.js";

export interface CodeModel {
  /** sha256 (hex) of the model's content: dimensions, vocabulary, vectors and idf. */
  hash: string;
  dimensions: number;
  vocabulary: string[];
  /** vocabulary.length × dimensions, row-major; each row has unit length (or is zero). */
  vectors: Float32Array;
  /** Inverse document frequency of each vocabulary token. */
  idf: Float32Array;
}

export interface TrainCodeModelOptions {
  /** Vector length (default 256). Components beyond the rank the corpus supports are zero. */
  dimensions?: number;
  /** Most tokens kept, most frequent first (default 20 000). */
  vocabularySize?: number;
  /** Least number of occurrences for a token to be kept (default 2). */
  minCount?: number;
  /** Tokens on each side that count as context (default 5). */
  window?: number;
  /** Seed of the random projection (default 1). */
  seed?: number;
  /** Power iterations of the randomized SVD (default 2). */
  powerIterations?: number;
  /** Extra columns of the random projection (default 10). */
  oversampling?: number;
  /** Told when each training phase ends, with its duration in ms (for progress and benchmarks). */
  onPhase?: (phase: "tokenize" | "count" | "ppmi" | "svd", ms: number) => void;
}

const CONTEXT_SMOOTHING = 0.75;
const SINGULAR_POWER = 0.5;
/** Cells of the dense block that counts co-occurrences of the most frequent tokens (64 MiB of Float64). */
const DENSE_CELLS = 8 * 1024 * 1024;
/** Distinct identifiers whose tokens are remembered while reading the corpus. */
const MEMO_IDENTIFIERS = 1 << 20;

// ---------------------------------------------------------------------------------------------------------
// Training

export function trainCodeModel(documents: Iterable<string>, options: TrainCodeModelOptions = {}): CodeModel {
  const dimensions = positiveInt(options.dimensions ?? 256, "dimensions");
  const vocabularyLimit = positiveInt(options.vocabularySize ?? 20_000, "vocabularySize");
  const minCount = Math.max(1, Math.floor(options.minCount ?? 2));
  const window = positiveInt(options.window ?? 5, "window");
  const seed = Math.floor(options.seed ?? 1) >>> 0;
  const powerIterations = Math.max(0, Math.floor(options.powerIterations ?? 2));
  const oversampling = Math.max(0, Math.floor(options.oversampling ?? 10));

  let clock = performance.now();
  const phase = (name: "tokenize" | "count" | "ppmi" | "svd"): void => {
    const now = performance.now();
    options.onPhase?.(name, now - clock);
    clock = now;
  };
  const corpus = readCorpus(documents);
  phase("tokenize");
  const { vocabulary, remap } = chooseVocabulary(corpus, vocabularyLimit, minCount);
  const size = vocabulary.length;

  const idf = new Float32Array(size);
  for (let p = 0; p < remap.length; p++) {
    const id = remap[p] as number;
    if (id >= 0) idf[id] = Math.log((corpus.documents + 1) / ((corpus.docFreq[p] as number) + 1)) + 1;
  }

  const vectors = new Float32Array(size * dimensions);
  if (size > 0) {
    const counts = countCooccurrences(corpus, remap, size, window);
    phase("count");
    const ppmi = buildPpmi(compactCounts(counts));
    phase("ppmi");
    const { u, sigma, rank } = randomizedSvd(ppmi, { rank: dimensions, oversampling, powerIterations, seed });
    phase("svd");
    // Word vectors U·Σ^p, each scaled to unit length.
    const weights = sigma.map((value) => value ** SINGULAR_POWER);
    const row = new Float64Array(rank);
    for (let i = 0; i < size; i++) {
      let norm = 0;
      for (let t = 0; t < rank; t++) {
        const value = (u[i * rank + t] as number) * (weights[t] as number);
        row[t] = value;
        norm += value * value;
      }
      const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let t = 0; t < rank; t++) vectors[i * dimensions + t] = (row[t] as number) * scale;
    }
  }
  return { hash: codeModelHash(dimensions, vocabulary, vectors, idf), dimensions, vocabulary, vectors, idf };
}

function positiveInt(value: number, name: string): number {
  const n = Math.floor(value);
  if (!Number.isFinite(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return n;
}

/** Growable Int32Array. */
class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
}

interface Corpus {
  /** Distinct tokens, indexed by provisional id (order of first appearance). */
  words: string[];
  counts: number[];
  docFreq: number[];
  /** All documents' tokens as provisional ids, back to back. */
  tokens: IntList;
  /** End offset in `tokens` of each document. */
  ends: IntList;
  documents: number;
}

function readCorpus(documents: Iterable<string>): Corpus {
  const ids = new Map<string, number>();
  const words: string[] = [];
  const counts: number[] = [];
  const docFreq: number[] = [];
  const lastDoc: number[] = [];
  const tokens = new IntList();
  const ends = new IntList();
  // codeTokens(text) is the concatenation of codeTokens(identifier) over the text's identifiers, so each
  // distinct identifier is split once: `expansions` maps it to an offset in `pool`, which holds the number
  // of its tokens followed by their ids. The memo is bounded; identifiers past the bound are split each time.
  const expansions = new Map<string, number>();
  const pool = new IntList();
  const tokenId = (token: string): number => {
    let id = ids.get(token);
    if (id === undefined) {
      id = words.length;
      ids.set(token, id);
      words.push(token);
      counts.push(0);
      docFreq.push(0);
      lastDoc.push(-1);
    }
    return id;
  };
  let doc = 0;
  for (const text of documents) {
    for (const identifier of identifiers(text)) {
      let start = expansions.get(identifier);
      let transient = false;
      if (start === undefined) {
        const parts = codeTokens(identifier);
        start = pool.length;
        pool.push(parts.length);
        for (const token of parts) pool.push(tokenId(token));
        if (expansions.size < MEMO_IDENTIFIERS) expansions.set(identifier, start);
        else transient = true;
      }
      const data = pool.data;
      const last = start + (data[start] as number);
      for (let k = start + 1; k <= last; k++) {
        const id = data[k] as number;
        counts[id] = (counts[id] as number) + 1;
        if (lastDoc[id] !== doc) {
          lastDoc[id] = doc;
          docFreq[id] = (docFreq[id] as number) + 1;
        }
        tokens.push(id);
      }
      if (transient) pool.length = start;
    }
    ends.push(tokens.length);
    doc++;
  }
  return { words, counts, docFreq, tokens, ends, documents: doc };
}

/** Most frequent tokens first, ties broken by the token itself: independent of document order. */
function chooseVocabulary(
  corpus: Corpus,
  limit: number,
  minCount: number,
): { vocabulary: string[]; remap: Int32Array } {
  const candidates: number[] = [];
  for (let id = 0; id < corpus.words.length; id++) {
    if ((corpus.counts[id] as number) >= minCount) candidates.push(id);
  }
  candidates.sort((a, b) => {
    const byCount = (corpus.counts[b] as number) - (corpus.counts[a] as number);
    if (byCount !== 0) return byCount;
    const wa = corpus.words[a] as string;
    const wb = corpus.words[b] as string;
    return wa < wb ? -1 : wa > wb ? 1 : 0;
  });
  const kept = candidates.slice(0, limit);
  const remap = new Int32Array(corpus.words.length).fill(-1);
  kept.forEach((provisional, id) => {
    remap[provisional] = id;
  });
  return { vocabulary: kept.map((id) => corpus.words[id] as string), remap };
}

/**
 * Upper-triangle co-occurrence counts (row < column). Rows of the most frequent tokens, which take most
 * updates, live in a dense block; the others in small open-addressing hash tables.
 */
interface Cooccurrences {
  size: number;
  denseRows: number;
  dense: Float64Array;
  keys: (Int32Array | undefined)[];
  values: (Float64Array | undefined)[];
  used: Int32Array;
}

function countCooccurrences(corpus: Corpus, remap: Int32Array, size: number, window: number): Cooccurrences {
  const denseRows = Math.min(size, Math.max(1, Math.floor(DENSE_CELLS / size)));
  const dense = new Float64Array(denseRows * size);
  const keys: (Int32Array | undefined)[] = new Array(size).fill(undefined);
  const values: (Float64Array | undefined)[] = new Array(size).fill(undefined);
  const used = new Int32Array(size);

  const addSparse = (row: number, column: number, weight: number): void => {
    let rowKeys = keys[row];
    let rowValues = values[row] as Float64Array;
    if (rowKeys === undefined || (used[row] as number) * 4 >= rowKeys.length * 3) {
      const grown = growTable(rowKeys, rowValues);
      rowKeys = grown.keys;
      rowValues = grown.values;
      keys[row] = rowKeys;
      values[row] = rowValues;
    }
    const mask = rowKeys.length - 1;
    const key = column + 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> 0;
    for (;;) {
      slot &= mask;
      const found = rowKeys[slot] as number;
      if (found === key) {
        rowValues[slot] = (rowValues[slot] as number) + weight;
        return;
      }
      if (found === 0) {
        rowKeys[slot] = key;
        rowValues[slot] = weight;
        used[row] = (used[row] as number) + 1;
        return;
      }
      slot++;
    }
  };

  const sequence = new IntList();
  const tokens = corpus.tokens.data;
  let start = 0;
  for (let d = 0; d < corpus.ends.length; d++) {
    const end = corpus.ends.data[d] as number;
    sequence.length = 0;
    for (let p = start; p < end; p++) {
      const id = remap[tokens[p] as number] as number;
      if (id >= 0) sequence.push(id);
    }
    start = end;
    const seq = sequence.data;
    const n = sequence.length;
    for (let i = 0; i < n; i++) {
      const a = seq[i] as number;
      const last = Math.min(n - 1, i + window);
      for (let j = i + 1; j <= last; j++) {
        const b = seq[j] as number;
        if (a === b) continue;
        const weight = window + 1 - (j - i);
        const row = Math.min(a, b);
        const column = Math.max(a, b);
        if (row < denseRows) {
          const cell = row * size + column;
          dense[cell] = (dense[cell] as number) + weight;
        } else {
          addSparse(row, column, weight);
        }
      }
    }
  }
  return { size, denseRows, dense, keys, values, used };
}

function growTable(
  keys: Int32Array | undefined,
  values: Float64Array | undefined,
): { keys: Int32Array; values: Float64Array } {
  const capacity = keys ? keys.length * 2 : 8;
  const nextKeys = new Int32Array(capacity);
  const nextValues = new Float64Array(capacity);
  if (keys && values) {
    const mask = capacity - 1;
    for (let s = 0; s < keys.length; s++) {
      const key = keys[s] as number;
      if (key === 0) continue;
      let slot = Math.imul(key, 0x9e3779b1) >>> 0;
      for (;;) {
        slot &= mask;
        if (nextKeys[slot] === 0) break;
        slot++;
      }
      nextKeys[slot] = key;
      nextValues[slot] = values[s] as number;
    }
  }
  return { keys: nextKeys, values: nextValues };
}

/** The upper triangle of the co-occurrence counts (row < column) as CSR, columns ascending. */
interface UpperCounts {
  size: number;
  rowStart: Int32Array;
  columnIndex: Int32Array;
  counts: Float64Array;
}

function compactCounts(counts: Cooccurrences): UpperCounts {
  const { size, denseRows, dense } = counts;
  const rowStart = new Int32Array(size + 1);
  for (let row = 0; row < size; row++) {
    let n = 0;
    if (row < denseRows) {
      const base = row * size;
      for (let column = row + 1; column < size; column++) if ((dense[base + column] as number) > 0) n++;
    } else {
      n = counts.used[row] as number;
    }
    rowStart[row + 1] = (rowStart[row] as number) + n;
  }
  const total = rowStart[size] as number;
  const columnIndex = new Int32Array(total);
  const values = new Float64Array(total);
  for (let row = 0; row < size; row++) {
    let at = rowStart[row] as number;
    if (row < denseRows) {
      const base = row * size;
      for (let column = row + 1; column < size; column++) {
        const count = dense[base + column] as number;
        if (count > 0) {
          columnIndex[at] = column;
          values[at++] = count;
        }
      }
      continue;
    }
    const keys = counts.keys[row];
    const table = counts.values[row];
    if (!keys || !table) continue;
    const start = at;
    for (let s = 0; s < keys.length; s++) {
      if (keys[s] !== 0) columnIndex[at++] = (keys[s] as number) - 1;
    }
    columnIndex.subarray(start, at).sort();
    // Look each count up again in the row's table, now in column order.
    const mask = keys.length - 1;
    for (let e = start; e < at; e++) {
      const key = (columnIndex[e] as number) + 1;
      let slot = Math.imul(key, 0x9e3779b1) >>> 0;
      for (;;) {
        slot &= mask;
        if (keys[slot] === key) break;
        slot++;
      }
      values[e] = table[slot] as number;
    }
  }
  return { size, rowStart, columnIndex, counts: values };
}

/** PPMI(w, c) = max(0, log(#(w,c) · Σ #(c')^α / (#(w) · #(c)^α))) over the symmetric counts. */
function buildPpmi(upper: UpperCounts): CsrMatrix {
  const { size, rowStart: upperStart, columnIndex: upperColumn, counts } = upper;
  const marginal = new Float64Array(size);
  for (let row = 0; row < size; row++) {
    const end = upperStart[row + 1] as number;
    for (let e = upperStart[row] as number; e < end; e++) {
      const count = counts[e] as number;
      const column = upperColumn[e] as number;
      marginal[row] = (marginal[row] as number) + count;
      marginal[column] = (marginal[column] as number) + count;
    }
  }
  const smoothed = new Float64Array(size);
  let smoothedTotal = 0;
  for (let i = 0; i < size; i++) {
    smoothed[i] = (marginal[i] as number) ** CONTEXT_SMOOTHING;
    smoothedTotal += smoothed[i] as number;
  }
  const ppmi = (word: number, context: number, count: number): number => {
    const value = Math.log(
      (count * smoothedTotal) / ((marginal[word] as number) * (smoothed[context] as number)),
    );
    return Math.max(value, 0);
  };

  // Both directions of each upper entry, computed once: forward = PPMI(row, column), backward = PPMI(column, row).
  const total = upperStart[size] as number;
  const forward = new Float32Array(total);
  const backward = new Float32Array(total);
  const perRow = new Int32Array(size);
  for (let row = 0; row < size; row++) {
    const end = upperStart[row + 1] as number;
    for (let e = upperStart[row] as number; e < end; e++) {
      const column = upperColumn[e] as number;
      const f = ppmi(row, column, counts[e] as number);
      const b = ppmi(column, row, counts[e] as number);
      forward[e] = f;
      backward[e] = b;
      if (f > 0) perRow[row] = (perRow[row] as number) + 1;
      if (b > 0) perRow[column] = (perRow[column] as number) + 1;
    }
  }
  const rowStart = new Int32Array(size + 1);
  for (let i = 0; i < size; i++) rowStart[i + 1] = (rowStart[i] as number) + (perRow[i] as number);
  const nonZeros = rowStart[size] as number;
  const columnIndex = new Int32Array(nonZeros);
  const values = new Float32Array(nonZeros);
  const next = rowStart.slice(0, size);
  // Rows come out sorted: entry (x, c) with c < x is placed while visiting row c, before row x's own.
  for (let row = 0; row < size; row++) {
    const end = upperStart[row + 1] as number;
    for (let e = upperStart[row] as number; e < end; e++) {
      const column = upperColumn[e] as number;
      const f = forward[e] as number;
      if (f > 0) {
        const at = next[row] as number;
        columnIndex[at] = column;
        values[at] = f;
        next[row] = at + 1;
      }
      const b = backward[e] as number;
      if (b > 0) {
        const at = next[column] as number;
        columnIndex[at] = row;
        values[at] = b;
        next[column] = at + 1;
      }
    }
  }
  return { rows: size, columns: size, rowStart, columnIndex, values };
}

// ---------------------------------------------------------------------------------------------------------
// Hash and serialization

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function float32Bytes(array: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  const out = Buffer.alloc(array.length * 4);
  for (let i = 0; i < array.length; i++) out.writeFloatLE(array[i] as number, i * 4);
  return out;
}

export function float32FromBytes(bytes: Uint8Array, length: number): Float32Array {
  const out = new Float32Array(length);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(bytes.subarray(0, length * 4));
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < length; i++) out[i] = view.getFloat32(i * 4, true);
  }
  return out;
}

/** sha256 (hex) of a model's content. */
export function codeModelHash(
  dimensions: number,
  vocabulary: readonly string[],
  vectors: Float32Array,
  idf: Float32Array,
): string {
  return createHash("sha256")
    .update(`umbra-code-model/1\n${dimensions}\n${vocabulary.length}\n`)
    .update(vocabulary.join("\n"))
    .update("\n")
    .update(float32Bytes(vectors))
    .update(float32Bytes(idf))
    .digest("hex");
}

const MAGIC = Buffer.from("UMBRACM1", "latin1");

/**
 * Compact binary form: "UMBRACM1", u32 LE header length, JSON header {format, hash, dimensions,
 * vocabularySize}, u32 LE vocabulary length, vocabulary joined by "\n" (UTF-8), zero padding to a multiple
 * of 4, vectors (Float32 LE), idf (Float32 LE).
 */
export function serializeCodeModel(model: CodeModel): Uint8Array {
  const header = Buffer.from(
    JSON.stringify({
      format: 1,
      hash: model.hash,
      dimensions: model.dimensions,
      vocabularySize: model.vocabulary.length,
    }),
    "utf8",
  );
  const vocabulary = Buffer.from(model.vocabulary.join("\n"), "utf8");
  const headerLength = Buffer.alloc(4);
  headerLength.writeUInt32LE(header.length);
  const vocabularyLength = Buffer.alloc(4);
  vocabularyLength.writeUInt32LE(vocabulary.length);
  const prefix = MAGIC.length + 4 + header.length + 4 + vocabulary.length;
  const padding = Buffer.alloc((4 - (prefix % 4)) % 4);
  return Buffer.concat([
    MAGIC,
    headerLength,
    header,
    vocabularyLength,
    vocabulary,
    padding,
    float32Bytes(model.vectors),
    float32Bytes(model.idf),
  ]);
}

/** Where the parts of a stored model lie, from its header; the vectors and idf are not read yet. */
export interface CodeModelLayout {
  /** The hash the header claims (checked only against the whole content). */
  hash: string;
  dimensions: number;
  vocabulary: string[];
  /** Byte offset of the vectors (vocabulary.length × dimensions Float32 LE), then of the idf. */
  vectorsOffset: number;
  idfOffset: number;
}

/**
 * The layout of a model written by `serializeCodeModel` of `totalBytes` bytes, reading only its header and
 * vocabulary through `bytesAt` (which may return fewer bytes at the end of the file); the structure is
 * checked, the hash is not.
 */
export function readCodeModelLayout(
  bytesAt: (offset: number, length: number) => Buffer,
  totalBytes: number,
): CodeModelLayout {
  const fail = (why: string): never => {
    throw new EmbeddingError(`not a valid umbra code model: ${why}`);
  };
  const head = bytesAt(0, MAGIC.length + 4);
  if (totalBytes < MAGIC.length + 8 || !head.subarray(0, MAGIC.length).equals(MAGIC)) fail("bad magic");
  let offset = MAGIC.length;
  const headerLength = head.readUInt32LE(offset);
  offset += 4;
  if (offset + headerLength + 4 > totalBytes) fail("truncated header");
  const headerBytes = bytesAt(offset, headerLength + 4);
  let header: unknown;
  try {
    header = JSON.parse(headerBytes.subarray(0, headerLength).toString("utf8"));
  } catch {
    fail("unreadable header");
  }
  offset += headerLength;
  const { format, hash, dimensions, vocabularySize } = (header ?? {}) as Record<string, unknown>;
  if (format !== 1) fail(`unknown format ${String(format)}`);
  if (typeof hash !== "string" || !Number.isInteger(dimensions) || !Number.isInteger(vocabularySize)) {
    fail("bad header");
  }
  const dims = dimensions as number;
  const size = vocabularySize as number;
  const vocabularyLength = headerBytes.readUInt32LE(headerLength);
  offset += 4;
  if (offset + vocabularyLength > totalBytes) fail("truncated vocabulary");
  const text = bytesAt(offset, vocabularyLength).toString("utf8");
  const vocabulary = size === 0 ? [] : text.split("\n");
  if (vocabulary.length !== size) fail("vocabulary size does not match the header");
  offset += vocabularyLength;
  offset += (4 - (offset % 4)) % 4;
  const expected = offset + (size * dims + size) * 4;
  if (totalBytes !== expected) fail(`expected ${expected} bytes, got ${totalBytes}`);
  return {
    hash: hash as string,
    dimensions: dims,
    vocabulary,
    vectorsOffset: offset,
    idfOffset: offset + size * dims * 4,
  };
}

/** Reads a model written by `serializeCodeModel`, checking its structure and its hash. */
export function deserializeCodeModel(bytes: Uint8Array): CodeModel {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const layout = readCodeModelLayout((offset, length) => data.subarray(offset, offset + length), data.length);
  const { dimensions, vocabulary } = layout;
  const vectors = float32FromBytes(data.subarray(layout.vectorsOffset), vocabulary.length * dimensions);
  const idf = float32FromBytes(data.subarray(layout.idfOffset), vocabulary.length);
  const actual = codeModelHash(dimensions, vocabulary, vectors, idf);
  if (actual !== layout.hash)
    throw new EmbeddingError("not a valid umbra code model: content does not match its hash");
  return { hash: actual, dimensions, vocabulary, vectors, idf };
}

// ---------------------------------------------------------------------------------------------------------
// Embedding

export class CodeModelEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly model: CodeModel;
  readonly #index = new Map<string, number>();

  constructor(model: CodeModel) {
    if (model.vectors.length !== model.vocabulary.length * model.dimensions) {
      throw new EmbeddingError("code model vectors do not match its vocabulary and dimensions");
    }
    this.model = model;
    this.id = `umbra-code-ppmi-svd-${model.hash.slice(0, 16)}`;
    this.dimensions = model.dimensions;
    model.vocabulary.forEach((token, i) => {
      this.#index.set(token, i);
    });
  }

  /** The vector of one text (or query): idf-weighted sublinear-tf sum of word vectors, unit length. */
  embedText(text: string): Float32Array {
    return embedTerms(termFrequencies(codeTokens(text)), this.dimensions, this.#index, this.model);
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    return texts.map((text) => this.embedText(text));
  }

  /** The vector of a token, if it is in the vocabulary (a view into the model). */
  wordVector(token: string): Float32Array | undefined {
    const id = this.#index.get(token);
    if (id === undefined) return undefined;
    return this.model.vectors.subarray(id * this.dimensions, (id + 1) * this.dimensions);
  }
}

/**
 * A text's vector from its term frequencies: the idf-weighted (sublinear tf) sum of the word vectors of
 * the terms in `index` (term → row of `rows.vectors` and `rows.idf`), L2-normalised; zero when none is.
 */
export function embedTerms(
  terms: ReadonlyMap<string, number>,
  dims: number,
  index: ReadonlyMap<string, number>,
  rows: { vectors: Float32Array; idf: Float32Array },
): Float32Array {
  const sum = new Float64Array(dims);
  const { vectors, idf } = rows;
  let any = false;
  for (const [token, tf] of terms) {
    const id = index.get(token);
    if (id === undefined) continue;
    const weight = (1 + Math.log(tf)) * (idf[id] as number);
    const base = id * dims;
    for (let d = 0; d < dims; d++) sum[d] = (sum[d] as number) + weight * (vectors[base + d] as number);
    any = true;
  }
  const out = new Float32Array(dims);
  if (!any) return out;
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += (sum[d] as number) ** 2;
  if (norm === 0) return out;
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < dims; d++) out[d] = (sum[d] as number) * scale;
  return out;
}
