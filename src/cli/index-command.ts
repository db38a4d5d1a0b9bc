import type { Command } from "commander";
import { type IndexReport, indexWorkspace } from "../index/indexer.js";
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
      const report = await indexWorkspace(dir, {
        config: configFor(dir),
        signal: interruptSignal(),
        onProgress: reporter.onProgress,
        onWarning: reporter.onWarning,
      }).finally(reporter.done);
      if (report.files === 0) {
        process.stderr.write(
          `umbra: warning: nothing was indexed in ${report.root} — ${describeSkipped(report)}; check .gitignore, .umbraignore and .cursorignore\n`,
        );
      }
      if (options.json) printJson(report);
      else process.stdout.write(`${summary(report)}\n`);
    });
}
