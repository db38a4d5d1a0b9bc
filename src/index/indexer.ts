import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { UmbraConfig } from "../config/config.js";
import { embeddingCacheDir, workspaceDir } from "../config/paths.js";
import {
  type ChangeSet,
  CorruptStateError,
  diffFiles,
  indexableFiles,
  loadSnapshot,
  type SkippedEntry,
  type Snapshot,
  saveSnapshot,
  scanWorkspace,
  sha256Hex,
  skippedForIndex,
  takeSnapshot,
} from "../workspace/index.js";
import { resolveRoot } from "../workspace/root.js";
import { CHUNKER_VERSION, type Chunk, chunkFile, detectLanguage, loadParsers } from "./chunk/index.js";
import { type Embedder, EmbeddingCache, embedCached, raceAbort } from "./embed/index.js";
import { openEmbedder } from "./embedders.js";
import { type IndexLayout, indexLayout } from "./layout.js";
import { acquireLock } from "./lock.js";
import { loadOrCreateSecret, PathMasker } from "./mask.js";
import { isCorruptionError } from "./sqlite-errors.js";
import { CorruptIndexError, type FileRow, LexicalStore, type NewChunk } from "./store/lexical.js";
import { type VectorRow, VectorStore } from "./store/vectors.js";
import { codeTokens, termFrequencies } from "./tokenize.js";

export type IndexPhase = "scan" | "hash" | "chunk" | "train" | "embed" | "write" | "compact" | "optimize";

export interface IndexProgress {
  phase: IndexPhase;
  done: number;
  total: number;
}

export interface IndexOptions {
  config: UmbraConfig;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  onProgress?: (progress: IndexProgress) => void;
  onWarning?: (message: string) => void;
  /** How long to wait for another run holding the workspace lock (default 10 minutes). */
  lockWaitMs?: number;
  /** Replaces the configured embedder (tests use a counting one). */
  embedder?: Embedder;
}

export interface IndexReport {
  root: string;
  rootHash: string;
  files: number;
  chunks: number;
  changes: { added: number; modified: number; removed: number; renamed: number };
  hashedFiles: number;
  embedded: number;
  cachedEmbeddings: number;
  skipped: IndexSkip[];
  skippedByReason: Record<string, number>;
  embedderId: string;
  durationMs: number;
  /** Set when corrupt or incompatible state was thrown away and rebuilt. */
  rebuilt?: string;
}

/** LanceDB writes (fragments) after which the vector table is compacted. */
const OPTIMIZE_AFTER_WRITES = 16;

export class IndexInterruptedError extends Error {
  override name = "IndexInterruptedError";
}

interface OpenState {
  lexical: LexicalStore;
  rebuilt?: string;
}

/** A damaged, foreign or older-version index, met when opening it or reading a bad page. */
function isCorruption(error: unknown): boolean {
  return error instanceof CorruptIndexError || isCorruptionError(error);
}

/**
 * Opens the lexical store. No full integrity scan (it would read the whole file on every sync): a damaged
 * file is met as an error when opened or read, and the run is then redone on a fresh store (`corrupt`).
 */
function openLexical(layout: IndexLayout, warn: (message: string) => void, corrupt?: string): OpenState {
  if (corrupt === undefined) {
    try {
      return { lexical: LexicalStore.open(layout.lexical) };
    } catch (error) {
      if (!isCorruption(error)) throw error;
      return openLexical(layout, warn, (error as Error).message);
    }
  }
  const aside = LexicalStore.quarantine(layout.lexical);
  const message = `${corrupt}; moved aside to ${basename(aside)} and rebuilding the index`;
  warn(message);
  return { lexical: LexicalStore.open(layout.lexical), rebuilt: message };
}

async function loadPreviousSnapshot(
  file: string,
  warn: (message: string) => void,
): Promise<Snapshot | undefined> {
  try {
    return await loadSnapshot(file);
  } catch (error) {
    if (!(error instanceof CorruptStateError)) throw error;
    warn(`${error.message}; rescanning every file`);
    return undefined;
  }
}

/**
 * Lexical terms of a chunk: its code tokens plus its file path's and symbol's tokens. The names of the
 * other definitions it holds are in its code already; counting them once more ranked worse on
 * bench/questions (a development set).
 */
export function chunkTerms(chunk: Chunk): { terms: Map<string, number>; length: number } {
  const tokens = codeTokens(chunk.text);
  tokens.push(...codeTokens(chunk.path.replace(/\.[A-Za-z0-9]+$/, "")));
  tokens.push(...codeTokens(chunk.symbol));
  return { terms: termFrequencies(tokens), length: tokens.length };
}

/** Why a file is not in the index: a scan or content skip, or a kind of file never chunked (lock files, maps). */
export type IndexSkip = Omit<SkippedEntry, "reason"> & { reason: SkippedEntry["reason"] | "unsupported" };

/** Every file of a snapshot that is not indexed, with the reason. */
export function indexSkips(snapshot: Snapshot): IndexSkip[] {
  const skipped: IndexSkip[] = [...skippedForIndex(snapshot)];
  for (const path of indexableFiles(snapshot)) {
    if (detectLanguage(path) === undefined) skipped.push({ path, reason: "unsupported" });
  }
  return skipped;
}

export function countByReason(skipped: readonly IndexSkip[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of skipped) out[entry.reason] = (out[entry.reason] ?? 0) + 1;
  return out;
}

/** How far an indexing run got, for the message of an interrupted one. */
interface RunProgress {
  /** Files this run has to write, once the change set is known. */
  toWrite?: number;
  /** Files written and committed so far. */
  saved: number;
}

/** What an interrupted run says: exactly what is saved (the index's own count) and what the next run does. */
function interruption(run: RunProgress, lexical: LexicalStore | undefined): IndexInterruptedError {
  const files = lexical?.counts().files ?? 0;
  const holds = files === 0 ? "the index is empty" : `the index holds ${files} file${files === 1 ? "" : "s"}`;
  const done =
    run.toWrite === undefined || run.saved === 0
      ? `before any file was saved (${holds})`
      : `after saving ${run.saved} of ${run.toWrite} files (${holds})`;
  const next = run.saved > 0 ? "resumes with the rest" : "starts over";
  return new IndexInterruptedError(`indexing interrupted ${done}; the next \`umbra index\` ${next}`);
}

/**
 * Builds or updates the index of a workspace: scan (stat fast path), hash what changed, diff against what
 * is indexed, chunk changed files, embed only chunks missing from the cache, and write both stores in
 * per-batch commits. Work is proportional to what changed; an interrupted run resumes where it stopped.
 */
export async function indexWorkspace(rootArg: string, options: IndexOptions): Promise<IndexReport> {
  const started = Date.now();
  const warn = options.onWarning ?? (() => {});
  const root = await resolveRoot(rootArg);
  const layout = indexLayout(workspaceDir(root, options.env));
  const release = await acquireLock(layout.lock, {
    waitMs: options.lockWaitMs ?? 10 * 60_000,
    onWait: (holder) => warn(`waiting for another umbra run on this workspace (${holder})`),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  try {
    try {
      return await indexLocked(root, layout, options, started);
    } catch (error) {
      if (!isCorruption(error)) throw error;
      return await indexLocked(
        root,
        layout,
        options,
        started,
        `the index is corrupt (${(error as Error).message})`,
      );
    }
  } finally {
    release();
  }
}

/** One indexing run, with the workspace lock held; `corrupt` says why the lexical store is rebuilt. */
async function indexLocked(
  root: string,
  layout: IndexLayout,
  options: IndexOptions,
  started: number,
  corrupt?: string,
): Promise<IndexReport> {
  const warn = options.onWarning ?? (() => {});
  const progress = options.onProgress ?? (() => {});
  let state: OpenState | undefined;
  let vectors: VectorStore | undefined;
  let cache: EmbeddingCache | undefined;
  const { signal } = options;
  const run: RunProgress = { saved: 0 };
  let writing: Promise<void> | undefined;
  try {
    state = openLexical(layout, warn, corrupt);
    const { lexical } = state;

    // 1. Scan and hash: only files whose size or mtime changed are read.
    progress({ phase: "scan", done: 0, total: 0 });
    const scan = await scanWorkspace(root, {
      maxFileBytes: options.config.index.maxFileBytes,
      ...(options.config.index.excludeDirs ? { excludeDirs: options.config.index.excludeDirs } : {}),
      ...(signal ? { signal } : {}),
    });
    const previous = state.rebuilt ? undefined : await loadPreviousSnapshot(layout.merkle, warn);
    const { snapshot, hashedFiles } = await takeSnapshot(root, scan, previous, {
      ...(signal ? { signal } : {}),
      onProgress: (done, total) => progress({ phase: "hash", done, total }),
    });
    signal?.throwIfAborted();

    // 2. What to index: text files in a language we know.
    // no prototype: a file may be named `__proto__`
    const target: Record<string, string> = Object.create(null);
    for (const path of indexableFiles(snapshot)) {
      const entry = snapshot.files[path];
      if (entry && detectLanguage(path) !== undefined) target[path] = entry.hash;
    }

    // 3. Embedder, path masking and stores.
    // Damage to the cache is caught as it is read; a full check on every sync would read the whole file.
    cache = new EmbeddingCache({
      dir: embeddingCacheDir(options.env),
      onWarning: warn,
      integrityCheck: false,
    });
    const secret = await loadOrCreateSecret(layout.secret);
    const masker = new PathMasker(secret);
    const secretId = sha256Hex(secret.toString("hex")).slice(0, 16);
    let indexed = Object.fromEntries(lexical.files().map((row) => [row.path, row.hash]));
    const chunkCache = new Map<string, Chunk[]>();
    const chunkPaths = async (paths: readonly string[]): Promise<void> => {
      await loadParsers(paths.flatMap((path) => detectLanguage(path) ?? []));
      let done = 0;
      for (const path of paths) {
        if (!chunkCache.has(path))
          chunkCache.set(path, await chunkOne(root, path, options.config.index.chunkTokens));
        progress({ phase: "chunk", done: ++done, total: paths.length });
        signal?.throwIfAborted();
      }
    };
    const embedder =
      options.embedder ??
      (await openEmbedder(options.config.index.embedder, {
        modelFile: layout.codeModel,
        env: options.env ?? process.env,
        ...(signal ? { signal } : {}),
        // The code model is learned from the workspace's own chunks on the first run.
        trainingChunks: async () => {
          const paths = Object.keys(target);
          await chunkPaths(paths);
          progress({ phase: "train", done: 0, total: 1 });
          return paths.flatMap((path) => chunkCache.get(path) ?? []).map((chunk) => chunk.text);
        },
      }));
    // A damaged vector table is found here and recreated empty, like one a full disk left unreadable.
    vectors = await VectorStore.open(layout.vectors, embedder.dimensions);
    let rebuilt = state.rebuilt;
    if (vectors.damage) {
      rebuilt = vectors.damage;
      warn(rebuilt);
    }
    const identity = `${embedder.id}|${secretId}|${options.config.index.chunkTokens}|chunker ${CHUNKER_VERSION}`;
    const storedIdentity = lexical.getMeta("identity");
    if (storedIdentity !== identity || vectors.created) {
      if (storedIdentity !== undefined && storedIdentity !== identity) {
        rebuilt = "the embedder, path key, chunk size or chunker changed; re-indexing every file";
        warn(rebuilt);
      }
      if (storedIdentity !== identity || lexical.counts().files > 0) {
        lexical.replaceFiles(Object.keys(indexed), []);
        await vectors.clear();
        indexed = {};
      }
      lexical.setMeta("identity", identity);
    }

    // 4. The change set between what is indexed and what is on disk.
    const changes: ChangeSet = diffFiles(indexed, target);
    const toWrite = [...changes.added, ...changes.modified, ...changes.renamed.map((r) => r.to)].sort();
    const toRemove = [...changes.removed, ...changes.renamed.map((r) => r.from)];
    run.toWrite = toWrite.length;
    let embedded = 0;
    let cachedEmbeddings = 0;

    let writes = 0;
    if (toRemove.length > 0) {
      writes++;
      await vectors.replace(
        toRemove.map((path) => masker.mask(path)),
        [],
      );
      lexical.replaceFiles(toRemove, []);
    }

    // 5. Chunk, embed and write in batches; each batch is committed on its own.
    const batchSize = options.config.index.filesPerBatch;
    let nextId = lexical.nextChunkId();
    for (let start = 0; start < toWrite.length; start += batchSize) {
      signal?.throwIfAborted();
      const paths = toWrite.slice(start, start + batchSize);
      await chunkPaths(paths);
      const chunks = paths.flatMap((path) => chunkCache.get(path) ?? []);
      const result = await embedCached(
        embedder,
        cache,
        chunks.map((chunk) => ({ hash: chunk.hash, text: chunk.text })),
        {
          batchSize: options.config.index.batchSize,
          ...(signal ? { signal } : {}),
          onProgress: (done) =>
            progress({
              phase: "embed",
              done: start + (done / Math.max(1, chunks.length)) * paths.length,
              total: toWrite.length,
            }),
        },
      );
      embedded += result.embedded;
      cachedEmbeddings += result.cached;
      signal?.throwIfAborted();

      const written: { file: FileRow; chunks: (NewChunk & { id: number })[] }[] = [];
      const rows: VectorRow[] = [];
      for (const path of paths) {
        const entry = snapshot.files[path];
        const fileChunks = chunkCache.get(path) ?? [];
        if (!entry) continue;
        const file: FileRow = {
          path,
          mpath: masker.mask(path),
          hash: entry.hash,
          size: entry.size,
          mtimeMs: entry.mtimeMs,
          language: detectLanguage(path) ?? "text",
        };
        const newChunks = fileChunks.map((chunk) => {
          const id = nextId++;
          const vector = result.vectors.get(chunk.hash);
          if (vector) {
            rows.push({
              id,
              mpath: file.mpath,
              startLine: chunk.startLine,
              endLine: chunk.endLine,
              language: chunk.language,
              symbol: chunk.symbol,
              hash: chunk.hash,
              vector,
            });
          }
          return {
            id,
            path,
            startLine: chunk.startLine,
            endLine: chunk.endLine,
            language: chunk.language,
            symbol: chunk.symbol,
            defines: chunk.defines,
            declares: chunk.declares,
            hash: chunk.hash,
            ...chunkTerms(chunk),
          };
        });
        written.push({ file, chunks: newChunks });
        chunkCache.delete(path);
      }
      // Vectors first, then the lexical commit that marks the files as indexed: a crash in between
      // leaves the files unmarked, and the next run replaces their vector rows (replace is idempotent).
      // For the same reason a Ctrl-C need not wait for the write to finish (the store is closed after it).
      lexical.reserveChunkIds(nextId);
      writing = vectors.replace([], rows);
      await raceAbort(writing, signal);
      writing = undefined;
      lexical.replaceFiles([], written);
      run.saved += written.length;
      writes++;
      progress({ phase: "write", done: Math.min(start + batchSize, toWrite.length), total: toWrite.length });
    }

    // Recent writes sit in the postings delta; fold them into the packed segments once they have grown.
    if (writes > 0 || toRemove.length > 0) {
      progress({ phase: "compact", done: 0, total: 0 });
      lexical.compact();
    }
    // Every write adds a LanceDB fragment; compact once enough have piled up, not on every small sync.
    const pendingWrites = Number(lexical.getMeta("writesSinceOptimize") ?? "0") + writes;
    if (pendingWrites >= OPTIMIZE_AFTER_WRITES) {
      progress({ phase: "optimize", done: 0, total: 0 });
      await vectors.optimize();
      lexical.setMeta("writesSinceOptimize", "0");
    } else lexical.setMeta("writesSinceOptimize", String(pendingWrites));
    await saveSnapshot(layout.merkle, snapshot);
    lexical.setMeta("lastSync", new Date().toISOString());
    lexical.setMeta("rootHash", snapshot.rootHash);
    lexical.setMeta("embedder", embedder.id);

    const skipped = [...skippedForIndex(snapshot)];
    for (const path of indexableFiles(snapshot)) {
      if (detectLanguage(path) === undefined)
        skipped.push({ path, reason: "unsupported" as SkippedEntry["reason"] });
    }
    const counts = lexical.counts();
    return {
      root,
      rootHash: snapshot.rootHash,
      files: counts.files,
      chunks: counts.chunks,
      changes: {
        added: changes.added.length,
        modified: changes.modified.length,
        removed: changes.removed.length,
        renamed: changes.renamed.length,
      },
      hashedFiles,
      embedded,
      cachedEmbeddings,
      skipped,
      skippedByReason: countByReason(skipped),
      embedderId: embedder.id,
      durationMs: Date.now() - started,
      ...(rebuilt ? { rebuilt } : {}),
    };
  } catch (error) {
    // Whatever was cut short (scan, chunking, training, an embedding request), the run stops here.
    if (signal?.aborted) throw interruption(run, state?.lexical);
    throw error;
  } finally {
    // Closing the table under a write in flight would free what the write still uses.
    const store = vectors;
    if (writing) void writing.catch(() => {}).finally(() => store?.close());
    else store?.close();
    cache?.close();
    state?.lexical.close();
  }
}

async function chunkOne(root: string, path: string, maxTokens: number): Promise<Chunk[]> {
  let content: string;
  try {
    content = await readFile(`${root}/${path}`, "utf8");
  } catch {
    return []; // vanished since the scan: the next run sees it as removed
  }
  return chunkFile(path, content, { maxTokens });
}
