import type { Command } from "commander";
import type { StatusResult } from "../engine/api.js";
import { type IndexStatus, indexStatus } from "../index/status.js";
import { onRunningEngine } from "./engine-use.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

/** What `umbra status` shows of the engine's answer: the index, as indexStatus reports it. */
function indexPart({ index: { watched: _watched, syncing: _syncing, ...index } }: StatusResult): IndexStatus {
  return index;
}

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description("what is indexed: root hash, files, chunks, skipped files with reasons, last sync, embedder")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--json", "print JSON")
    .action(async (options: { root?: string; json?: boolean }) => {
      const root = await commandRoot(options.root);
      const served = await onRunningEngine("status", "status", { root });
      const status = served ? indexPart(served) : await indexStatus(root);
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
