import { access } from "node:fs/promises";
import type { Command } from "commander";
import { workspaceDir } from "../config/paths.js";
import { countByReason, type IndexSkip, indexSkips } from "../index/indexer.js";
import { indexLayout } from "../index/layout.js";
import { LexicalStore } from "../index/store/lexical.js";
import { loadSnapshot } from "../workspace/index.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

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
export async function indexStatus(root: string): Promise<IndexStatus> {
  const layout = indexLayout(workspaceDir(root));
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

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description("what is indexed: root hash, files, chunks, skipped files with reasons, last sync, embedder")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--json", "print JSON")
    .action(async (options: { root?: string; json?: boolean }) => {
      const status = await indexStatus(await commandRoot(options.root));
      if (options.json) return printJson(status);
      if (!status.indexed) {
        process.stdout.write(`${status.root}: not indexed (run umbra index)\n`);
        return;
      }
      const reasons = Object.entries(status.skippedByReason)
        .map(([reason, n]) => `${n} ${reason}`)
        .join(", ");
      process.stdout.write(
        `${[
          `root       ${status.root}`,
          `root hash  ${status.rootHash}`,
          `files      ${status.files}`,
          `chunks     ${status.chunks}`,
          `skipped    ${status.skipped.length}${reasons ? ` (${reasons})` : ""}`,
          `last sync  ${status.lastSync}`,
          `embedder   ${status.embedder}`,
        ].join("\n")}\n`,
      );
    });
}
