import { access } from "node:fs/promises";
import type { UmbraConfig } from "../config/config.js";
import { workspaceDir } from "../config/paths.js";
import { resolveRoot } from "../workspace/root.js";
import type { Embedder } from "./embed/index.js";
import { NotIndexedError, openEmbedder } from "./embedders.js";
import { indexLayout } from "./layout.js";
import type { SearchContext } from "./search/context.js";
import { LexicalStore } from "./store/lexical.js";
import { VectorStore } from "./store/vectors.js";

export interface OpenedIndex extends SearchContext {
  close(): void;
}

/** Opens a workspace's index for searching; a workspace never indexed is a NotIndexedError. */
export async function openIndex(
  rootArg: string,
  config: UmbraConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<OpenedIndex> {
  const root = await resolveRoot(rootArg);
  const layout = indexLayout(workspaceDir(root, env));
  try {
    await access(layout.lexical);
  } catch {
    throw new NotIndexedError(`${root} has no index yet; run \`umbra index ${rootArg}\` first`);
  }
  const lexical = LexicalStore.open(layout.lexical);
  let embedder: Embedder | undefined;
  let vectors: VectorStore | undefined;
  try {
    embedder = await openEmbedder(config.index.embedder, { modelFile: layout.codeModel, env });
    vectors = await VectorStore.openExisting(layout.vectors, embedder.dimensions);
  } catch (error) {
    if (!(error instanceof NotIndexedError)) {
      lexical.close();
      throw error;
    }
  }
  return {
    root,
    lexical,
    vectors,
    embedder,
    close() {
      vectors?.close();
      lexical.close();
    },
  };
}
