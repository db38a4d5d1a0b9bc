import type { Command } from "commander";
import { indexWorkspace } from "../index/indexer.js";
import { watchWorkspace } from "../index/watcher.js";
import { UsageError } from "./errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { configFor, interruptSignal, terminalReporter } from "./shared.js";

/** The longest --interval: setInterval cannot wait longer than 2^31 - 1 ms (about 24.8 days). */
const MAX_INTERVAL_SECONDS = 2_000_000;

/** --interval in seconds, as milliseconds: a number from 1 to MAX_INTERVAL_SECONDS. */
function parseInterval(value: string): number {
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 1 || seconds > MAX_INTERVAL_SECONDS)
    throw new UsageError(
      `--interval must be a number of seconds from 1 to ${MAX_INTERVAL_SECONDS}, got ${value}`,
    );
  return Math.round(seconds * 1000);
}

export function registerWatch(program: Command): void {
  program
    .command("watch")
    .description(
      "keep the index of DIR fresh from file-system events plus a periodic Merkle check, until SIGINT or SIGTERM",
    )
    .argument("[dir]", ROOT_OPTION_HELP)
    .option(
      "--interval <seconds>",
      "periodic full check, in seconds (default: watch.intervalMs)",
      parseInterval,
    )
    .action(async (dir: string | undefined, options: { interval?: number }) => {
      const root = await commandRoot(dir);
      const config = configFor(root);
      const signal = interruptSignal();
      const reporter = terminalReporter();
      await watchWorkspace(root, {
        debounceMs: config.watch.debounceMs,
        intervalMs: options.interval ?? config.watch.intervalMs,
        signal,
        sync: () =>
          indexWorkspace(root, {
            config,
            signal,
            onProgress: reporter.onProgress,
            onWarning: reporter.onWarning,
          }).finally(reporter.done),
        onSync: (report, reason) => {
          const c = report.changes;
          const changed = c.added + c.modified + c.removed + c.renamed;
          if (changed > 0 || reason === "start") {
            process.stderr.write(
              `${new Date().toISOString()} synced (${reason}): +${c.added} ~${c.modified} -${c.removed} >${c.renamed}; ${report.files} files, ${report.chunks} chunks, ${report.durationMs} ms\n`,
            );
          }
        },
        onError: (error) => {
          // a sync cut short by the stop request is not a failure
          if (!signal.aborted) process.stderr.write(`umbra: sync failed: ${(error as Error).message}\n`);
        },
      });
    });
}
