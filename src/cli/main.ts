#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { registerAgent } from "./agent-command.js";
import { registerDemo } from "./demo-command.js";
import { exitCodeFor } from "./errors.js";
import { registerEval } from "./eval-command.js";
import { registerGrep } from "./grep-command.js";
import { registerIndex } from "./index-command.js";
import { registerLint } from "./lint-command.js";
import { registerRun } from "./run-command.js";
import { registerSearch } from "./search-command.js";
import { registerSessions } from "./sessions-command.js";
import { registerShadow } from "./shadow-command.js";
import { registerStatus } from "./status-command.js";
import { registerWatch } from "./watch-command.js";

const program = new Command()
  .name("umbra")
  .description("the local-first engine behind background coding agents")
  .version("0.1.0")
  .exitOverride()
  .showHelpAfterError(false);

for (const register of [
  registerIndex,
  registerSearch,
  registerGrep,
  registerStatus,
  registerWatch,
  registerLint,
  registerShadow,
  registerRun,
  registerAgent,
  registerSessions,
  registerDemo,
  registerEval,
]) {
  register(program);
}

try {
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
