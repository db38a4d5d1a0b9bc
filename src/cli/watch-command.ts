import type { Command } from "commander";
import { indexWorkspace } from "../index/indexer.js";
import { watchWorkspace } from "../index/watcher.js";
import { resolveRoot } from "../workspace/root.js";
import { configFor, interruptSignal, terminalReporter } from "./shared.js";

export function registerWatch(program: Command): void {
  program
    .command("watch")
    .description("keep the index of DIR fresh from file-system events plus a periodic Merkle check")
    .argument("[dir]", "workspace folder", ".")
    .option("--interval <seconds>", "periodic full check, in seconds", (v) => Number(v) * 1000)
    .action(async (dir: string, options: { interval?: number }) => {
      const root = await resolveRoot(dir);
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
          if ((error as Error).name !== "IndexInterruptedError")
            process.stderr.write(`umbra: sync failed: ${(error as Error).message}\n`);
        },
      });
    });
}
