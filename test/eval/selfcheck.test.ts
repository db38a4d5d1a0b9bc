import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReports } from "../../src/cli/eval-command.js";
import { runEval } from "../../src/eval/runner.js";
import { type EvalTask, loadTaskSet } from "../../src/eval/task.js";
import { scriptedModel, testConfig, testEnv } from "../agent/helpers.js";
import type { FakeAction } from "../fakes/fake-openai.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

const TASKS = join(import.meta.dirname, "..", "..", "examples", "eval");
let home: string;
let env: NodeJS.ProcessEnv;
let tasks: EvalTask[];

beforeAll(async () => {
  ({ home, env } = await testEnv());
  tasks = await loadTaskSet(TASKS);
});
afterAll(async () => {
  await cleanup(home);
});

const config = () => testConfig(home, env, { baseUrl: "http://scripted.invalid/v1", model: "scripted" });

const SOLVE_MEDIAN: FakeAction[] = [
  { toolCalls: [{ name: "read_file", input: { path: "stats.py" } }] },
  {
    toolCalls: [
      {
        name: "edit",
        input: {
          path: "stats.py",
          search: "    ordered = sorted(values)\n    return ordered[len(ordered) // 2]",
          replace:
            "    if not values:\n        raise ValueError('empty')\n    ordered = sorted(values)\n    mid = len(ordered) // 2\n    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2",
        },
      },
    ],
  },
  { toolCalls: [{ name: "run_command", input: { command: "python3 -B -m unittest test_stats" } }] },
  { text: "median handles even lengths and empty lists now." },
];

describe("umbra eval self-checks (examples/eval, no network)", () => {
  it("reads the example task set", () => {
    expect(tasks.map((t) => t.id)).toEqual(["js-slugify", "py-median", "py-roman"]);
    expect(tasks.every((t) => t.solution && Object.keys(t.hidden.files).length > 0)).toBe(true);
  });

  it("the oracle agent scores 100 % and the no-op agent 0 %", async () => {
    const oracle = await runEval({ tasks, agent: "oracle", config: config(), env, parallel: 2 });
    expect(oracle.results.summary.passRate).toBe(1);
    expect(oracle.results.tasks.every((t) => t.visiblePassed)).toBe(true);
    const noop = await runEval({ tasks, agent: "noop", config: config(), env, parallel: 2 });
    expect(noop.results.summary.passed).toBe(0);
    expect(noop.results.tasks.map((t) => t.failure)).toEqual(["no-change", "no-change", "no-change"]);
  });

  it("catches an agent that edits the tests to pass", async () => {
    const median = tasks.filter((t) => t.id === "py-median");
    const cheat: FakeAction[] = [
      {
        toolCalls: [
          {
            name: "edit",
            input: {
              path: "test_stats.py",
              search: "        self.assertEqual(median([3, 1, 2]), 2)",
              replace: "        pass",
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: "edit",
            input: { path: "test_hidden_stats.py", search: "", replace: "import unittest\n" },
          },
        ],
      },
      { toolCalls: [{ name: "run_command", input: { command: "python3 -B -m unittest test_stats" } }] },
      { text: "all tests pass" },
    ];
    const { fetch } = scriptedModel(cheat);
    const { results } = await runEval({ tasks: median, agent: "model", config: config(), env, fetch });
    const [task] = results.tasks;
    expect(task?.status).toBe("done");
    expect(task?.passed).toBe(false);
    expect(task?.testsEdited).toEqual(["test_hidden_stats.py", "test_stats.py"]);
    expect(task?.failure).toBe("tests-edited");
    expect(task?.toolCalls).toEqual({ edit: 2, run_command: 1 });
  });

  it("counts tool calls by any name the model gives, those of Object.prototype's members too", async () => {
    const median = tasks.filter((t) => t.id === "py-median");
    const calls: FakeAction[] = [
      { toolCalls: [{ name: "constructor", input: {} }] },
      { toolCalls: [{ name: "__proto__", input: {} }] },
      { toolCalls: [{ name: "constructor", input: {} }] },
      { toolCalls: [{ name: "read_file", input: { path: "stats.py" } }] },
      { text: "nothing to do" },
    ];
    const { fetch } = scriptedModel(calls);
    const { results } = await runEval({ tasks: median, agent: "model", config: config(), env, fetch });
    const toolCalls = results.tasks[0]?.toolCalls ?? {};
    expect(Object.entries(toolCalls).sort()).toEqual([
      ["__proto__", 1],
      ["constructor", 2],
      ["read_file", 1],
    ]);
    expect(Object.getPrototypeOf(toolCalls)).toBe(Object.prototype);
  });

  it("replaying a recorded run gives the same results file", async () => {
    const out = await tempDir("eval-out");
    try {
      const median = tasks.filter((t) => t.id === "py-median");
      const cassettes = join(out, "cassettes");
      const { fetch } = scriptedModel(SOLVE_MEDIAN);
      const live = await runEval({
        tasks: median,
        agent: "model",
        config: config(),
        env,
        fetch,
        record: cassettes,
      });
      expect(live.results.tasks[0]?.passed).toBe(true);
      expect(live.results.tasks[0]?.modelCalls).toBe(4);
      await writeReports(join(out, "live"), live.results, live.timings);
      const noNetwork: typeof globalThis.fetch = async () => {
        throw new Error("no network in replay");
      };
      const replayed = await runEval({
        tasks: median,
        agent: "model",
        config: config(),
        env,
        fetch: noNetwork,
        replay: cassettes,
        modelLabel: live.results.model,
      });
      await writeReports(join(out, "replay"), replayed.results, replayed.timings);
      const [a, b] = await Promise.all(
        ["live", "replay"].map((d) => readFile(join(out, d, "results.json"), "utf8")),
      );
      expect(b).toBe(a);
      const html = await readFile(join(out, "live", "report.html"), "utf8");
      expect(html).toContain("<svg");
      expect(html).not.toMatch(/(src|href)=["']?https?:/);
      expect(await readFile(join(out, "live", "report.md"), "utf8")).toContain("1 of 1 tasks passed");
    } finally {
      await cleanup(out);
    }
  });

  it("resumes from the cache: a finished task is not run again", async () => {
    const out = await tempDir("eval-cache");
    try {
      const one = tasks.slice(0, 1);
      const first = await runEval({ tasks: one, agent: "oracle", config: config(), env, cacheDir: out });
      const second = await runEval({ tasks: one, agent: "oracle", config: config(), env, cacheDir: out });
      expect(first.timings[0]?.cached).toBe(false);
      expect(second.timings[0]?.cached).toBe(true);
      expect(second.results).toEqual(first.results);
    } finally {
      await cleanup(out);
    }
  });
});
