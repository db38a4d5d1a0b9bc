import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { runTests } from "../agent/apply.js";
import { readCassette } from "../agent/cassette.js";
import { runSession } from "../agent/run.js";
import { formatUsage } from "../agent/usage.js";
import { loadConfig, type UmbraConfig } from "../config/config.js";
import { indexWorkspace } from "../index/indexer.js";
import { openIndex } from "../index/open.js";
import { search } from "../index/search/searcher.js";
import { branchLauncher } from "../lsp/branch-launcher.js";
import { LspHost } from "../lsp/index.js";
import { fork } from "../shadow/index.js";
import { applyAndTest, describeInput } from "./agent-command.js";
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

/** The demo's task, cassette and test command (the cassette was made for exactly these). */
export const DEMO_TASK =
  "Reserving all the stock that is on hand fails with OutOfStock, e.g. reserving 3 apples when 3 are on hand. Fix it.";
export const DEMO_TEST_COMMAND = "python3 -B -m doctest inventory/stock.py";
export function demoCassette(): string {
  return join(examplesDir(), "cassettes", "fix-reserve.snap");
}

/**
 * The agent fixes the bug planted in inventory/stock.py (an off-by-one that its doctest catches), with
 * the model's answers replayed from a cassette: its tool calls run for real (search, read, the sandboxed
 * test run, edits with lint feedback), then its diff is applied to the copy and the tests run there.
 */
async function demoAgent(root: string, loaded: UmbraConfig): Promise<void> {
  const cassette = demoCassette();
  const header = readCassette(cassette).header;
  const config: UmbraConfig = { ...loaded, agent: { ...loaded.agent, testCommand: DEMO_TEST_COMMAND } };
  const out = (text: string) => void process.stdout.write(text);
  out(
    `\n$ umbra agent "${DEMO_TASK}" --replay examples/cassettes/fix-reserve.snap --yes\n` +
      `  The model's answers are REPLAYED from a cassette (${header.note ?? "no note"}); no model is called.\n` +
      "  Every tool call below runs for real, in the agent's shadow branch.\n",
  );
  const drifts: string[] = [];
  const pending = new Map<string, string>();
  const result = await runSession({
    root,
    task: DEMO_TASK,
    config,
    replay: cassette,
    onWarning: (message) => {
      if (!message.includes("differs from the recording")) out(`  umbra: ${message}\n`);
    },
    onEvent: (event) => {
      if (event.type === "tool-call")
        pending.set(event.id, `${event.name} ${describeInput(event.name, event.input)}`);
      else if (event.type === "tool-result") {
        out(`  ${event.ok ? "✓" : "✗"} ${pending.get(event.id) ?? event.name} — ${event.summary}\n`);
        const lints = event.output
          .split("\n")
          .filter(
            (line, i, all) =>
              line.startsWith("Lints:") ||
              all[i - 1]?.startsWith("Lints: problems") ||
              /^\S+:\d+:\d+: error/.test(line),
          );
        if (event.name === "edit") for (const line of lints) out(`      ${line}\n`);
      }
    },
  });
  drifts.push(...result.drifts);
  out(
    `  ${result.outcome.message}; ${formatUsage(result.outcome.usage)} (replayed); ` +
      (drifts.length === 0
        ? "every request matched the recording\n"
        : `${drifts.length} request(s) differed from the recording (tool output on this machine differs); answered in order\n`),
  );
  out(`\n${result.diff}`);
  out(
    `\n  inventory/stock.py in the copy is unchanged until the diff is applied: ${(await readFile(join(root, "inventory", "stock.py"), "utf8")).includes("<= quantity")}\n`,
  );
  const before = await runTests(root, DEMO_TEST_COMMAND, config);
  out(
    `  $ ${DEMO_TEST_COMMAND}   (sandboxed, in the copy, before applying): tests ${before.passed ? "passed" : "FAIL"} (exit status ${before.exitCode})\n`,
  );
  const report = await applyAndTest(root, result, config, { quiet: true });
  out(`  ${report.apply.message}\n`);
  if (report.tests) {
    out(
      `  $ ${report.tests.command}   (sandboxed, in the copy, after applying): tests ${report.tests.passed ? "passed" : "FAILED"} (exit status ${report.tests.exitCode})\n`,
    );
    if (!report.tests.passed) process.exitCode = 1;
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
        // the cassettes are the demo's input and eval/ is umbra eval's task set: neither is part of the
        // project the agent works on
        await cp(examplesDir(), root, {
          recursive: true,
          filter: (source) =>
            !source.startsWith(join(examplesDir(), "cassettes")) &&
            !source.startsWith(join(examplesDir(), "eval")),
        });
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
        await demoAgent(root, config);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    });
}
