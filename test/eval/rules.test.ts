import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionRecord } from "../../src/agent/session.js";
import { compareResults, formatComparison, mcnemar } from "../../src/eval/compare.js";
import { unskip } from "../../src/eval/exercism.js";
import { markdownReport } from "../../src/eval/report.js";
import { runEval, summarize, type TaskResult } from "../../src/eval/runner.js";
import { loadTaskSet } from "../../src/eval/task.js";
import { classifyFailure, type TaxonomyInput } from "../../src/eval/taxonomy.js";
import { testConfig, testEnv } from "../agent/helpers.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let n = 0;
function call(name: string, input: Record<string, unknown>, ok: boolean, output = ""): SessionRecord[] {
  const id = `c${++n}`;
  return [
    { type: "tool-call", step: n, id, name, input },
    { type: "tool-result", step: n, id, name, ok, output },
  ];
}
/** A finished task's result: `passed` also in its visible tests, else failed as a wrong solution. */
function taskResult(
  id: string,
  category: string,
  { passed = true, toolCalls = {} }: { passed?: boolean; toolCalls?: Record<string, number> } = {},
): TaskResult {
  return {
    id,
    category,
    passed,
    visiblePassed: passed,
    status: "done",
    message: "",
    failure: passed ? null : "wrong-solution",
    signals: [],
    testsEdited: [],
    changedFiles: [],
    modelCalls: 1,
    inputTokens: 1,
    outputTokens: 1,
    steps: 1,
    toolCalls,
    hiddenTail: "",
  };
}

/** An Exercism exercise in `dir`: its config's `files`, its instructions and files ([name, text] pairs). */
async function writeExercise(
  dir: string,
  files: { solution: string[]; test: string[]; example: string[] },
  instructions: string,
  contents: [string, string][],
): Promise<void> {
  await mkdir(join(dir, ".meta"), { recursive: true });
  await mkdir(join(dir, ".docs"), { recursive: true });
  await writeFile(join(dir, ".docs", "instructions.md"), instructions);
  await writeFile(join(dir, ".meta", "config.json"), JSON.stringify({ files }));
  for (const [name, text] of contents) await writeFile(join(dir, name), text);
}

function input(records: SessionRecord[], extra: Partial<TaxonomyInput> = {}): TaxonomyInput {
  return {
    records,
    status: "done",
    relevantFiles: ["src/a.py"],
    changedFiles: ["src/a.py"],
    testsEdited: [],
    ...extra,
  };
}
const test = (command = "pytest") => call("run_command", { command }, false, `$ ${command}\nexit status 1`);

describe("failure taxonomy rules", () => {
  it("model error and step limit come from the status", () => {
    expect(classifyFailure(input([], { status: "model-error" })).category).toBe("model-error");
    expect(classifyFailure(input(test(), { status: "max-steps" })).category).toBe("step-limit");
  });
  it("a sandbox-denied command retried", () => {
    const denied = () =>
      call("run_command", { command: "curl x" }, false, "exit status 6\nsandbox: network is off");
    expect(classifyFailure(input([...denied(), ...denied()])).category).toBe("sandbox-denied-retry");
    expect(classifyFailure(input([...denied(), ...test()])).category).not.toBe("sandbox-denied-retry");
  });
  it("an edit that failed and was never redone", () => {
    const failed = call("edit", { path: "src/a.py", search: "x", replace: "y" }, false, "edit failed");
    expect(classifyFailure(input([...failed, ...test()])).category).toBe("edit-failed");
    const redone = call("edit", { path: "src/a.py", search: "x", replace: "y" }, true);
    expect(classifyFailure(input([...failed, ...redone, ...test()])).signals).not.toContain("edit-failed");
  });
  it("search missed the relevant file", () => {
    const search = call("search_code", { query: "q" }, true, "src/b.py:1-5  f");
    expect(classifyFailure(input([...search, ...test()], { changedFiles: ["src/b.py"] })).category).toBe(
      "search-missed",
    );
    const found = call("search_code", { query: "q" }, true, "src/a.py:1-5  f");
    expect(classifyFailure(input([...found, ...test()])).signals).not.toContain("search-missed");
  });
  it("read range too small and the same file re-read", () => {
    const small = call(
      "read_file",
      { path: "src/a.py", startLine: 1, endLine: 10 },
      true,
      "src/a.py (100 lines), lines 1-10:\n 1| x",
    );
    expect(classifyFailure(input([...small, ...test()])).category).toBe("read-range-too-small");
    const whole = () =>
      call("read_file", { path: "src/a.py" }, true, "src/a.py (10 lines), lines 1-10:\n 1| x");
    expect(classifyFailure(input([...whole(), ...whole(), ...whole(), ...test()])).category).toBe(
      "same-file-reread",
    );
    expect(classifyFailure(input([...whole(), ...whole(), ...test()])).signals).not.toContain(
      "same-file-reread",
    );
  });
  it("truncated test output, done without tests, tests edited, no change, otherwise a wrong solution", () => {
    const cut = call(
      "run_command",
      { command: "pytest" },
      false,
      "stdout:\nA\n[... 5000 characters cut ...]\nB",
    );
    expect(classifyFailure(input(cut)).category).toBe("test-output-truncated");
    const edit = call("edit", { path: "src/a.py", search: "x", replace: "y" }, true);
    expect(classifyFailure(input([...test(), ...edit])).category).toBe("done-without-tests");
    expect(classifyFailure(input([...edit, ...test()], { testsEdited: ["t.py"] })).category).toBe(
      "tests-edited",
    );
    expect(classifyFailure(input(test(), { changedFiles: [] })).category).toBe("no-change");
    expect(classifyFailure(input([...edit, ...test()])).category).toBe("wrong-solution");
  });
});

describe("McNemar and --compare", () => {
  it("exact binomial for small counts, chi-square for large", () => {
    expect(mcnemar(0, 0).p).toBe(1);
    expect(mcnemar(0, 5).p).toBeCloseTo(0.0625, 10);
    expect(mcnemar(1, 9).p).toBeCloseTo(22 / 1024, 10);
    expect(mcnemar(3, 3).p).toBe(1);
    const large = mcnemar(10, 30);
    expect(large.method).toBe("chi-square");
    expect(large.p).toBeCloseTo(0.00268, 4);
  });
  it("pairs tasks by id, overall and per category", () => {
    const task = (id: string, category: string, passed: boolean) => taskResult(id, category, { passed });
    const a = summarize(
      [task("t1", "py", false), task("t2", "py", true), task("t3", "js", false), task("t4", "js", false)],
      "model",
      "m1",
      "c",
    );
    const b = summarize(
      [task("t1", "py", true), task("t2", "py", true), task("t3", "js", true), task("t5", "js", true)],
      "model",
      "m2",
      "c",
    );
    const comparison = compareResults(a, b);
    expect(comparison.onlyInA).toEqual(["t4"]);
    expect(comparison.onlyInB).toEqual(["t5"]);
    const overall = comparison.rows[0];
    expect(overall).toMatchObject({ scope: "overall", paired: 3, passA: 1, passB: 3 });
    expect(overall?.test).toMatchObject({ b: 0, c: 2, p: 0.5 });
    expect(comparison.rows.map((r) => r.scope)).toEqual(["overall", "js", "py"]);
    expect(formatComparison(comparison)).toContain("| overall | 3 | 1 | 3 | +66.7 |");
  });
});

describe("Exercism adapter", () => {
  let dir: string;
  let home: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = await tempDir("exercism");
    ({ home, env } = await testEnv());
    await writeExercise(
      join(dir, "javascript", "exercises", "practice", "two-fer"),
      { solution: ["two-fer.js"], test: ["two-fer.spec.js"], example: [".meta/proof.ci.js"] },
      "Say two-fer.\n",
      [
        [
          "two-fer.js",
          "export const twoFer = () => {\n  throw new Error('Remove this statement and implement this function');\n};\n",
        ],
        [
          ".meta/proof.ci.js",
          "export const twoFer = (name = 'you') => 'One for ' + name + ', one for me.';\n",
        ],
        [
          "two-fer.spec.js",
          "import { twoFer } from './two-fer';\n\ndescribe('twoFer', () => {\n  test('no name', () => {\n    expect(twoFer()).toEqual('One for you, one for me.');\n  });\n  xtest('a name', () => {\n    expect(twoFer('Alice')).toBe('One for Alice, one for me.');\n    expect(() => { throw new Error('boom'); }).toThrow('boom');\n  });\n});\n",
        ],
      ],
    );
    await writeExercise(
      join(dir, "python", "exercises", "practice", "leap"),
      { solution: ["leap.py"], test: ["leap_test.py"], example: [".meta/example.py"] },
      "Is it a leap year?\n",
      [
        ["leap.py", "def leap_year(year):\n    pass\n"],
        [
          ".meta/example.py",
          "def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
        ],
        [
          "leap_test.py",
          "import unittest\nfrom leap import leap_year\n\nclass LeapTest(unittest.TestCase):\n    def test_2000(self):\n        self.assertIs(leap_year(2000), True)\n\n    def test_1900(self):\n        self.assertIs(leap_year(1900), False)\n",
        ],
      ],
    );
  });
  afterAll(async () => {
    await cleanup(dir, home);
  });

  it("un-skips jest specs for grading", () => {
    expect(unskip("xtest('a', f); xit('b'); xdescribe('c'); test.skip('d')")).toBe(
      "test('a', f); it('b'); describe('c'); test('d')",
    );
  });

  it("reads JavaScript and Python exercises; the oracle passes them all, the no-op agent none", async () => {
    const tasks = await loadTaskSet(dir);
    expect(tasks.map((t) => [t.id, t.category])).toEqual([
      ["javascript/exercises/practice/two-fer", "javascript"],
      ["python/exercises/practice/leap", "python"],
    ]);
    expect(tasks[0]?.instruction).toContain("Say two-fer.");
    expect(tasks[0]?.hidden.files["two-fer.spec.js"]).toContain("  test('a name'");
    const config = testConfig(home, env);
    const oracle = await runEval({ tasks, agent: "oracle", config, env });
    expect(oracle.results.tasks.map((t) => [t.passed, t.visiblePassed])).toEqual([
      [true, true],
      [true, true],
    ]);
    const noop = await runEval({ tasks, agent: "noop", config, env });
    expect(noop.results.summary.passed).toBe(0);
  });
});

describe("names from tasks and models that are members of Object.prototype", () => {
  // what the results file gives back: own keys, whatever their names
  const calls = (text: string) => JSON.parse(text) as Record<string, number>;

  it("summarizes categories named __proto__ or constructor like any other, and pollutes nothing", () => {
    const touched = ["tasks", "passed", "passRate"];
    try {
      const { summary } = summarize(
        [
          taskResult("t1", "__proto__"),
          taskResult("t2", "constructor", { passed: false }),
          taskResult("t3", "__proto__"),
          taskResult("t4", "toString"),
        ],
        "model",
        "m",
        "c",
      );
      expect(Object.entries(summary.byCategory).sort()).toEqual([
        ["__proto__", { tasks: 2, passed: 2, passRate: 1 }],
        ["constructor", { tasks: 1, passed: 0, passRate: 0 }],
        ["toString", { tasks: 1, passed: 1, passRate: 1 }],
      ]);
      for (const key of touched) {
        expect(Object.hasOwn(Object.prototype, key)).toBe(false);
        expect(Object.hasOwn(Object, key)).toBe(false);
      }
    } finally {
      for (const key of touched) {
        Reflect.deleteProperty(Object.prototype, key);
        Reflect.deleteProperty(Object, key);
      }
    }
  });

  it("reports tool calls named like members of Object.prototype with their counts", () => {
    const results = summarize(
      [
        taskResult("t1", "py", { toolCalls: calls('{"constructor": 2, "__proto__": 1, "read_file": 1}') }),
        taskResult("t3", "py", { toolCalls: calls('{"constructor": 1, "__proto__": 2}') }),
      ],
      "model",
      "m",
      "c",
    );
    const report = markdownReport(results, []);
    expect(report).toContain("| constructor | 3 |");
    expect(report).toContain("| __proto__ | 3 |");
    expect(report).toContain("| read_file | 1 |");
  });

  it("keeps a task's hidden test and solution files named __proto__", async () => {
    const dir = await tempDir("proto-task");
    try {
      const umbra = join(dir, "umbra");
      await mkdir(join(umbra, "repo"), { recursive: true });
      await mkdir(join(umbra, "hidden"), { recursive: true });
      await mkdir(join(umbra, "solution"), { recursive: true });
      await writeFile(
        join(umbra, "task.json"),
        JSON.stringify({
          instruction: "Fix it.",
          visible: { command: "true" },
          hidden: { command: "true" },
        }),
      );
      await writeFile(join(umbra, "hidden", "__proto__"), "hidden test\n");
      await writeFile(join(umbra, "hidden", "constructor"), "another\n");
      await writeFile(join(umbra, "solution", "__proto__"), "solution\n");
      const [task] = await loadTaskSet(umbra);
      expect(Object.entries(task?.hidden.files ?? {}).sort()).toEqual([
        ["__proto__", "hidden test\n"],
        ["constructor", "another\n"],
      ]);
      expect(Object.entries(task?.solution ?? {})).toEqual([["__proto__", "solution\n"]]);

      await writeExercise(
        join(dir, "exercism", "python", "exercises", "practice", "proto"),
        { solution: ["__proto__"], test: ["__proto__"], example: [".meta/example"] },
        "Do it.\n",
        [
          ["__proto__", "the tests\n"],
          [".meta/example", "the solution\n"],
        ],
      );
      const [loaded] = await loadTaskSet(join(dir, "exercism"));
      expect(Object.entries(loaded?.hidden.files ?? {})).toEqual([["__proto__", "the tests\n"]]);
      expect(Object.entries(loaded?.solution ?? {})).toEqual([["__proto__", "the solution\n"]]);
    } finally {
      await cleanup(dir);
    }
  });
});
