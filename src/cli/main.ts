#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { exitCodeFor } from "./errors.js";
import { COMMANDS, invokedCommand } from "./registry.js";
import { guardTerminal } from "./safe-text.js";

const program = new Command()
  .name("umbra")
  .description("the local-first engine behind background coding agents")
  .version("0.1.0")
  .exitOverride()
  .showHelpAfterError(false);

// `umbra grep … | head`: once the reader of the output is gone, stop quietly with status 0 (as ripgrep
// does) instead of with a stack trace; when only stderr's reader is gone, the command goes on unheard.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});
process.stderr.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
});

// What reaches a terminal (file names, file text, a command's or a model's output) cannot drive it.
guardTerminal(process.stdout);
guardTerminal(process.stderr);

try {
  // Only the module of the command that runs is imported: `umbra --version` and `umbra --help` load none.
  const name = invokedCommand(process.argv.slice(2));
  const entry = name ? COMMANDS[name] : undefined;
  if (entry) {
    (await import("../config/paths.js")).privateDataDir();
    (await entry.load())(program);
  } else
    for (const [command, { summary }] of Object.entries(COMMANDS)) program.command(command).summary(summary);
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // help and version exit 0; usage errors were already printed by commander
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`umbra: ${message.split("\n")[0]}\n`);
  if (process.env.UMBRA_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  process.exit(exitCodeFor(error));
}
