/**
 * A stored code model opened for embedding queries (a search), without reading it whole: its header,
 * vocabulary and idf are read at open (~100 KB of a model of several MB) and each query reads only the
 * vector rows of its own tokens. Its content hash (which names the embedder, and with it the vectors in
 * the index) is checked over the whole file only when the file is not the one last checked: a stamp next
 * to it (`<model>.verified`, 0600, in the data directory) holds the file's identity (device, inode, size,
 * modification and change times in ns) and hash from the last full check. Any write, replacement or
 * metadata change of the model alters that identity, so it is checked whole again; a stamp that is
 * missing, unreadable or of another file is rewritten after that check. The indexer stamps the model it
 * learned or read whole, so the first search after `umbra index` is a fast one too.
 */
import {
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { PRIVATE_FILE } from "../../config/private.js";
import { codeTokens, termFrequencies } from "../tokenize.js";
import {
  type CodeModel,
  CodeModelEmbedder,
  type CodeModelLayout,
  deserializeCodeModel,
  embedTerms,
  float32FromBytes,
  readCodeModelLayout,
} from "./code-model.js";
import { type Embedder, EmbeddingError } from "./embedder.js";

/** What identifies one version of a file on disk. */
interface FileIdentity {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

function identityOf(fd: number): FileIdentity {
  const info = fstatSync(fd, { bigint: true });
  return {
    dev: String(info.dev),
    ino: String(info.ino),
    size: String(info.size),
    mtimeNs: String(info.mtimeNs),
    ctimeNs: String(info.ctimeNs),
  };
}

function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

/** Up to `length` bytes at `offset` of an open file (fewer at its end). */
function readAt(fd: number, offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, out, done, length - done, offset + done);
    if (n === 0) break;
    done += n;
  }
  return out.subarray(0, done);
}

/** The stamp's identity and hash, when it is a readable stamp; anything else counts as no stamp. */
function readStamp(file: string): (FileIdentity & { hash: string }) | undefined {
  try {
    const raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const fields = ["dev", "ino", "size", "mtimeNs", "ctimeNs", "hash"] as const;
    if (!fields.every((field) => typeof raw[field] === "string")) return undefined;
    return raw as unknown as FileIdentity & { hash: string };
  } catch {
    return undefined;
  }
}

/** Best effort: without a stamp the next open checks the whole model again, which is only slower. */
function writeStamp(file: string, identity: FileIdentity, hash: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify({ ...identity, hash })}\n`, { mode: PRIVATE_FILE });
    renameSync(temp, file);
  } catch {
    // a read-only or full data directory: searching still works
    rmSync(temp, { force: true });
  }
}

/** The query-side embedder of a model file whose header, vocabulary and idf were read at open. */
class StoredCodeModelEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly #index = new Map<string, number>();

  constructor(
    private readonly file: string,
    private readonly identity: FileIdentity,
    private readonly layout: CodeModelLayout,
    private readonly idf: Float32Array,
  ) {
    this.id = `umbra-code-ppmi-svd-${layout.hash.slice(0, 16)}`;
    this.dimensions = layout.dimensions;
    layout.vocabulary.forEach((token, i) => {
      this.#index.set(token, i);
    });
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    const fd = openSync(this.file, "r");
    try {
      // the rows must come from the file whose header was read: a re-index may have replaced it since
      if (!sameIdentity(identityOf(fd), this.identity))
        throw new EmbeddingError("the code model changed since the index was opened; search again");
      return texts.map((text) => this.embedText(fd, text));
    } finally {
      closeSync(fd);
    }
  }

  /** The same arithmetic as CodeModelEmbedder.embedText, over the rows of the text's own tokens. */
  private embedText(fd: number, text: string): Float32Array {
    const terms = termFrequencies(codeTokens(text));
    const dims = this.dimensions;
    const local = new Map<string, number>();
    const known = [...terms.keys()].filter((token) => this.#index.has(token));
    const vectors = new Float32Array(known.length * dims);
    const idf = new Float32Array(known.length);
    known.forEach((token, row) => {
      const id = this.#index.get(token) as number;
      const bytes = readAt(fd, this.layout.vectorsOffset + id * dims * 4, dims * 4);
      if (bytes.length !== dims * 4) throw new EmbeddingError("the code model is truncated; run umbra index");
      vectors.set(float32FromBytes(bytes, dims), row * dims);
      idf[row] = this.idf[id] as number;
      local.set(token, row);
    });
    return embedTerms(terms, dims, local, { vectors, idf });
  }
}

/** Runs `read` with `file` open and its identity; undefined when there is no such file. */
function withModelFile<T>(file: string, read: (fd: number, identity: FileIdentity) => T): T | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return read(fd, identityOf(fd));
  } finally {
    closeSync(fd);
  }
}

const stampOf = (file: string): string => `${file}.verified`;

/** The whole model of an open file, hash-checked; the stamp then says this file was checked. */
function readChecked(file: string, fd: number, identity: FileIdentity): CodeModel {
  const model = deserializeCodeModel(readAt(fd, 0, Number(identity.size)));
  writeStamp(stampOf(file), identity, model.hash);
  return model;
}

/**
 * The model stored in `file`, read whole and hash-checked (as the indexer uses it); undefined when there
 * is none. A model whose structure or hash is wrong is an EmbeddingError.
 */
export function readCodeModelChecked(file: string): CodeModel | undefined {
  return withModelFile(file, (fd, identity) => readChecked(file, fd, identity));
}

/** Records that `file` holds the model of `hash`, just written (its header says so), as checked. */
export function stampWrittenCodeModel(file: string, hash: string): void {
  withModelFile(file, (fd, identity) => {
    const layout = readCodeModelLayout((offset, length) => readAt(fd, offset, length), Number(identity.size));
    if (layout.hash === hash) writeStamp(stampOf(file), identity, hash);
  });
}

/**
 * The embedder of the code model stored in `file`, for queries; undefined when there is no such file. A
 * model whose structure or (when checked) hash is wrong is an EmbeddingError.
 */
export function openStoredCodeModel(file: string): Embedder | undefined {
  return withModelFile(file, (fd, identity) => {
    const stamp = readStamp(stampOf(file));
    const layout = readCodeModelLayout((offset, length) => readAt(fd, offset, length), Number(identity.size));
    // not the file last checked: check it whole (and embed with it, as it is read already)
    if (!stamp || !sameIdentity(stamp, identity) || stamp.hash !== layout.hash)
      return new CodeModelEmbedder(readChecked(file, fd, identity));
    const count = layout.vocabulary.length;
    const idf = float32FromBytes(readAt(fd, layout.idfOffset, count * 4), count);
    return new StoredCodeModelEmbedder(file, identity, layout, idf);
  });
}
