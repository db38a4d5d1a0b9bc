import type { Command } from "commander";
import { shownPath } from "../workspace/errors.js";
import { grep } from "../workspace/grep.js";
import { onRunningEngine } from "./engine-use.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

/** The most matches the engine returns in one answer. */
const ALL_MATCHES = 1_000_000;

export function registerGrep(program: Command): void {
  program
    .command("grep")
    .description("exact or regex search through ripgrep (git grep when ripgrep is missing)")
    .argument("<pattern>", "regular expression (or a fixed string with -F)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("-F, --fixed", "treat the pattern as a fixed string")
    .option("-i, --ignore-case", "case-insensitive")
    .option("--json", "print a JSON array of {path, line, text}")
    .action(
      async (
        pattern: string,
        options: { root?: string; fixed?: boolean; ignoreCase?: boolean; json?: boolean },
      ) => {
        const root = await commandRoot(options.root);
        const served = await onRunningEngine("grep", "grep", {
          root,
          pattern,
          fixed: options.fixed === true,
          ignoreCase: options.ignoreCase === true,
          limit: ALL_MATCHES,
        });
        // the engine stops at its largest limit; past it this process greps everything itself
        const matches = served && !served.truncated ? served.matches : await grep(root, pattern, options);
        if (options.json) return printJson(matches);
        for (const m of matches) process.stdout.write(`${shownPath(m.path)}:${m.line}:${m.text}\n`);
        if (matches.length === 0) process.exitCode = 1;
      },
    );
}
