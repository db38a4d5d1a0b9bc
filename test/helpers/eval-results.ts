import type { EvalResults } from "../../src/eval/runner.js";

/**
 * The results of an eval run of `model` whose tasks passed as `passed` says, for storing and showing. The
 * first task's id is `firstId`: a test gives it markup, which is untrusted text and must stay text.
 */
export function evalResults(model: string, passed: boolean[], firstId: string): EvalResults {
  const count = passed.filter(Boolean).length;
  return {
    version: 1,
    agent: "model",
    model,
    config: "{}",
    summary: {
      tasks: passed.length,
      passed: count,
      passRate: count / passed.length,
      visiblePassed: 0,
      modelCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      byCategory: {},
      failures: {},
    },
    tasks: passed.map((ok, i) => ({
      id: i === 0 ? firstId : `task-${i}`,
      category: "bug",
      passed: ok,
      visiblePassed: ok,
      status: "done",
      modelCalls: 1,
      inputTokens: 1,
      outputTokens: 1,
    })) as unknown as EvalResults["tasks"],
  };
}
