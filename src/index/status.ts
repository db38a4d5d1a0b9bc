import { access } from "node:fs/promises";
import { workspaceDir } from "../config/paths.js";
import { loadSnapshot } from "../workspace/index.js";
import { countByReason, type IndexSkip, indexSkips } from "./indexer.js";
import { indexLayout } from "./layout.js";
import { LexicalStore } from "./store/lexical.js";

export interface IndexStatus {
  root: string;
  indexed: boolean;
  rootHash: string | null;
  files: number;
  chunks: number;
  lastSync: string | null;
  embedder: string | null;
  skipped: IndexSkip[];
  skippedByReason: Record<string, number>;
}

/** What is indexed of `root` (absolute and free of symlinks). */
export async function indexStatus(root: string, env: NodeJS.ProcessEnv = process.env): Promise<IndexStatus> {
  const layout = indexLayout(workspaceDir(root, env));
  const empty: IndexStatus = {
    root,
    indexed: false,
    rootHash: null,
    files: 0,
    chunks: 0,
    lastSync: null,
    embedder: null,
    skipped: [],
    skippedByReason: {},
  };
  try {
    await access(layout.lexical);
  } catch {
    return empty;
  }
  const lexical = LexicalStore.open(layout.lexical);
  try {
    const snapshot = await loadSnapshot(layout.merkle).catch(() => undefined);
    const skipped = snapshot ? indexSkips(snapshot) : [];
    const skippedByReason = countByReason(skipped);
    const counts = lexical.counts();
    return {
      root,
      indexed: true,
      rootHash: lexical.getMeta("rootHash") ?? null,
      files: counts.files,
      chunks: counts.chunks,
      lastSync: lexical.getMeta("lastSync") ?? null,
      embedder: lexical.getMeta("embedder") ?? null,
      skipped,
      skippedByReason,
    };
  } finally {
    lexical.close();
  }
}
