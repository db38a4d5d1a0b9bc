import type { Command } from "commander";
import { IndexInterruptedError, type IndexReport, indexWorkspace } from "../index/indexer.js";
import { configFor, interruptSignal, printJson, terminalReporter } from "./shared.js";

function describeSkipped(report: IndexReport): string {
  const reasons = Object.entries(report.skippedByReason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => `${count} ${reason}`);
  return reasons.length ? `skipped ${report.skipped.length}: ${reasons.join(", ")}` : "skipped none";
}

export function summary(report: IndexReport): string {
  const c = report.changes;
  const lines = [
    `indexed ${report.files} files, ${report.chunks} chunks in ${(report.durationMs / 1000).toFixed(2)}s ` +
      `(${c.added} added, ${c.modified} modified, ${c.removed} removed, ${c.renamed} renamed; ${report.hashedFiles} hashed)`,
    `embeddings: ${report.embedded} computed, ${report.cachedEmbeddings} from cache (${report.embedderId})`,
    `${describeSkipped(report)} — details: umbra status --json`,
    `root hash ${report.rootHash.slice(0, 16)}`,
  ];
  return lines.join("\n");
}

export function registerIndex(program: Command): void {
  program
    .command("index")
    .description("build or update the index of DIR (incremental: only changed files are re-read)")
    .argument("[dir]", "workspace folder", ".")
    .option("--json", "print the report as JSON")
    .action(async (dir: string, options: { json?: boolean }) => {
      const reporter = terminalReporter();
      let report: IndexReport;
      try {
        report = await indexWorkspace(dir, {
          config: configFor(dir),
          signal: interruptSignal(),
          onProgress: reporter.onProgress,
          onWarning: reporter.onWarning,
        }).finally(reporter.done);
      } catch (error) {
        if (!(error instanceof IndexInterruptedError)) throw error;
        // Interrupted by Ctrl-C (or SIGTERM): say what is saved, and exit as a shell expects (128 + SIGINT).
        process.stderr.write(`umbra: ${error.message}\n`);
        process.exitCode = 130;
        return;
      }
      if (report.files === 0) {
        process.stderr.write(
          `umbra: warning: nothing was indexed in ${report.root} — ${describeSkipped(report)}; check .gitignore, .umbraignore and .cursorignore\n`,
        );
      }
      if (options.json) printJson(report);
      else process.stdout.write(`${summary(report)}\n`);
    });
}
