import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { indexWorkspace } from "../../src/index/indexer.js";
import { type OpenedIndex, openIndex } from "../../src/index/open.js";
import { cleanup, tempDir } from "./workspace.js";

/**
 * For a test file: a fresh workspace holding `files` (path → text), indexed once before its tests under a
 * data dir of its own and removed after them. Returns the open index (once the tests run).
 */
export function indexedFiles(files: Record<string, string>): () => OpenedIndex {
  let opened: { home: string; root: string; index: OpenedIndex } | undefined;
  beforeAll(async () => {
    const home = await tempDir("home");
    const root = await tempDir("ws");
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const env = { ...process.env, UMBRA_HOME: home };
    const config = loadConfig({ env: {} });
    await indexWorkspace(root, { config, env });
    opened = { home, root, index: await openIndex(root, config, env) };
  }, 120_000);
  afterAll(async () => {
    opened?.index.close();
    await cleanup(opened?.home, opened?.root);
  });
  return () => {
    if (!opened) throw new Error("the indexed workspace is made before the tests run");
    return opened.index;
  };
}
