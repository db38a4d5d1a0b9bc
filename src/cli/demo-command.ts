import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { loadConfig, type UmbraConfig } from "../config/config.js";
import { indexWorkspace } from "../index/indexer.js";
import { openIndex } from "../index/open.js";
import { search } from "../index/search/searcher.js";
import { branchLauncher } from "../lsp/branch-launcher.js";
import { LspHost } from "../lsp/index.js";
import { fork } from "../shadow/index.js";
import { summary } from "./index-command.js";
import { formatLint } from "./lint-command.js";
import { terminalReporter } from "./shared.js";

/** The bundled example project (examples/ at the package root, beside dist/ and src/). */
export function examplesDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", "examples");
}

const QUERIES = [
  "where is the invoice total computed with tax and discounts?",
  "parse a money amount from a string",
  'Traceback (most recent call last):\n  File "inventory/stock.py", line 27, in reserve\n    raise OutOfStock(sku)',
];

/**
 * An agent's edit in a shadow branch: the language server reports what the edit broke, here and in the
 * file that uses it, while the copy of examples/ stays untouched.
 */
async function demoShadowLint(root: string, config: UmbraConfig): Promise<void> {
  const file = "billing/money.ts";
  const branch = await fork(root);
  let host: LspHost | undefined;
  try {
    const { launcher } = await branchLauncher(branch, config);
    host = new LspHost({ config: config.lsp, launcher });
    const original = (await branch.readText(file)) ?? "";
    branch.write(file, original.replace("export function formatMoney(", "export function renderMoney("));
    process.stdout.write(
      `\n$ (an agent renames formatMoney in its shadow branch ${branch.id}, mode ${branch.mode}) umbra lint ${file}\n`,
    );
    const result = await host.lint(branch, file);
    process.stdout.write(`${formatLint(result).trimEnd().replace(/^/gm, "  ")}\n`);
    process.stdout.write(
      `  ${file} on disk is unchanged: ${(await readFile(join(root, file), "utf8")) === original}\n`,
    );
  } finally {
    await host?.shutdown();
    await branch.discard();
  }
}

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("index and search a copy of the bundled examples/ project, offline")
    .action(async () => {
      const work = await mkdtemp(join(tmpdir(), "umbra-demo-"));
      const root = join(work, "examples");
      try {
        await cp(examplesDir(), root, { recursive: true });
        process.stdout.write(`umbra demo: indexing a copy of examples/ in ${root}\n`);
        const reporter = terminalReporter();
        const config = loadConfig({ workspaceRoot: root });
        const report = await indexWorkspace(root, { config, ...reporter }).finally(reporter.done);
        process.stdout.write(`${summary(report)}\n`);
        const index = await openIndex(root, config);
        try {
          for (const query of QUERIES) {
            process.stdout.write(
              `\n$ umbra search ${JSON.stringify(query.split("\n")[0])}${query.includes("\n") ? " (with a traceback)" : ""}\n`,
            );
            const started = performance.now();
            const hits = await search(index, query, { limit: 3 });
            for (const hit of hits) {
              process.stdout.write(
                `  ${hit.path}:${hit.startLine}-${hit.endLine}${hit.symbol ? `  ${hit.symbol}` : ""}\n`,
              );
            }
            process.stdout.write(`  (${(performance.now() - started).toFixed(1)} ms)\n`);
          }
        } finally {
          index.close();
        }
        await demoShadowLint(root, config);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    });
}
