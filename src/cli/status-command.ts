import type { Command } from "commander";
import { indexStatus } from "../index/status.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

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
