import type { Command } from "commander";
import { undoLastAccept } from "../accept/index.js";
import { shownPath } from "../workspace/errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

export function registerUndo(program: Command): void {
  program
    .command("undo")
    .description(
      "undo the last accept from its journal: every file it wrote gets back what it held before; a file you changed since is listed and left as it is (exit 1)",
    )
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--json", "print {found, restored, left, message}")
    .action(async (flags: { root?: string; json?: boolean }) => {
      const result = await undoLastAccept(await commandRoot(flags.root));
      if (flags.json) printJson(result);
      else {
        for (const path of result.restored) process.stdout.write(`restored ${shownPath(path)}\n`);
        for (const { path, why } of result.left) process.stdout.write(`left ${shownPath(path)}: ${why}\n`);
        process.stdout.write(`${result.message}\n`);
      }
      if (result.left.length > 0) process.exitCode = 1;
    });
}
