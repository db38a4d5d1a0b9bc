import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { resolveModelSpec } from "../agent/providers.js";
import type { UmbraConfig } from "../config/config.js";
import { compareResults, formatComparison } from "../eval/compare.js";
import { htmlReport, markdownReport } from "../eval/report.js";
import { type AgentKind, type EvalResults, runEval, type TaskTiming } from "../eval/runner.js";
import { saveEvalRun } from "../eval/store.js";
import { loadTaskSet } from "../eval/task.js";
import { UsageError } from "./errors.js";
import { commandRoot } from "./root.js";
import { configFor, printJson } from "./shared.js";

interface EvalFlags {
  model?: string;
  agent: string;
  parallel: string;
  record?: string;
  replay?: string;
  out: string;
  compare?: boolean;
  cache: boolean;
  lsp?: boolean;
  json?: boolean;
}

async function readResults(file: string): Promise<EvalResults> {
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as EvalResults;
    if (value.version !== 1 || !Array.isArray(value.tasks)) throw new Error("not an umbra eval results file");
    return value;
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message.split("\n")[0]}`);
  }
}

/** Writes results.json (deterministic), timings.json, report.md and report.html into `out`. */
export async function writeReports(out: string, results: EvalResults, timings: TaskTiming[]): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(out, "timings.json"), `${JSON.stringify(timings, null, 2)}\n`);
  await writeFile(join(out, "report.md"), markdownReport(results, timings));
  await writeFile(join(out, "report.html"), htmlReport(results, timings));
}

export function registerEval(program: Command): void {
  program
    .command("eval")
    .description(
      "evaluate an agent on a task set (umbra task folders or Exercism exercises): each task in its own shadow branch, graded with hidden tests; or compare two results files",
    )
    .argument(
      "<paths...>",
      "TASKS (a task folder, a folder of tasks, or Exercism exercises); with --compare: A.json B.json",
    )
    .option("--agent <kind>", "oracle (the reference solution), noop (changes nothing) or model", "model")
    .option("--model <name>", "the model (overrides agent.model)")
    .option("--parallel <n>", "tasks at once", "2")
    .option("--record <dir>", "record each task's model exchanges to DIR/<task>.jsonl")
    .option("--replay <dir>", "answer each task's model requests from DIR/<task>.jsonl (no model is called)")
    .option("--out <dir>", "where results.json, timings.json, report.md and report.html go", "eval-out")
    .option("--no-cache", "rerun every task (default: reuse results cached in OUT/cache, so a run resumes)")
    .option("--lsp", "give the agent language-server lints (default off in eval)")
    .option("--compare", "compare two results files: paired difference with McNemar's test")
    .option("--json", "print the results (or the comparison) as JSON")
    .action(async (paths: string[], flags: EvalFlags) => {
      if (flags.compare) {
        if (paths.length !== 2) throw new UsageError("--compare takes two results files: A.json B.json");
        const [a, b] = await Promise.all(paths.map((p) => readResults(p)));
        if (!a || !b) return;
        const comparison = compareResults(a, b);
        if (flags.json) printJson(comparison);
        else process.stdout.write(formatComparison(comparison));
        return;
      }
      if (paths.length !== 1) throw new UsageError("give one task set (a folder)");
      const agent = flags.agent as AgentKind;
      if (!["oracle", "noop", "model"].includes(agent))
        throw new UsageError(`--agent must be oracle, noop or model, not ${flags.agent}`);
      if (flags.record && flags.replay) throw new UsageError("--record and --replay exclude each other");
      if ((flags.record || flags.replay) && agent !== "model")
        throw new UsageError("--record and --replay go with --agent model");
      const parallel = Number(flags.parallel);
      if (!Number.isInteger(parallel) || parallel < 1 || parallel > 32)
        throw new UsageError(`--parallel must be a whole number from 1 to 32, not ${flags.parallel}`);
      const loaded = configFor(process.cwd());
      const config: UmbraConfig = flags.model
        ? { ...loaded, agent: { ...loaded.agent, model: flags.model } }
        : loaded;
      // a model that cannot be called would fail every task one by one: say so once, before any runs
      if (agent === "model" && !flags.replay) resolveModelSpec(config.agent);
      const tasks = await loadTaskSet(paths[0] ?? ".");
      if (tasks.length === 0) throw new UsageError(`${paths[0]} holds no usable tasks`);
      const out = resolve(flags.out);
      const controller = new AbortController();
      const interrupt = () => {
        process.stderr.write("\numbra eval: stopping after the running tasks (finished ones are cached)\n");
        controller.abort();
        process.once("SIGINT", () => process.exit(130));
      };
      process.once("SIGINT", interrupt);
      process.stderr.write(`umbra eval: ${tasks.length} task(s), agent ${agent}, ${parallel} at once\n`);
      try {
        const { results, timings } = await runEval({
          tasks,
          agent,
          config,
          parallel,
          ...(flags.cache ? { cacheDir: join(out, "cache") } : {}),
          ...(flags.record ? { record: resolve(flags.record) } : {}),
          ...(flags.replay ? { replay: resolve(flags.replay) } : {}),
          ...(flags.lsp ? { lsp: true } : {}),
          signal: controller.signal,
          onWarning: (message) => process.stderr.write(`umbra: ${message}\n`),
          onTask: (result, timing, done, total) =>
            process.stderr.write(
              `[${done}/${total}] ${result.passed ? "✓" : "✗"} ${result.id}${result.failure ? ` (${result.failure})` : ""} ${(timing.wallMs / 1000).toFixed(1)} s${timing.cached ? " (cached)" : ""}\n`,
            ),
        });
        await writeReports(out, results, timings);
        // kept for the engine's eval view, in the data folder of the workspace it ran in
        const home = await commandRoot(undefined).catch(() => undefined);
        if (home) await saveEvalRun(home, results, timings);
        if (flags.json) printJson(results);
        else
          process.stdout.write(
            `${results.summary.passed}/${results.summary.tasks} passed (${(results.summary.passRate * 100).toFixed(1)} %); reports in ${out}\n`,
          );
        if (controller.signal.aborted) throw new Error("interrupted: rerun the same command to resume");
      } finally {
        process.removeListener("SIGINT", interrupt);
      }
    });
}
