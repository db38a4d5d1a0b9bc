export { type Comparison, compareResults, formatComparison, type McNemar, mcnemar } from "./compare.js";
export { findExercises, loadExercise, unskip } from "./exercism.js";
export { type Grade, gradeChanges, type TestOutcome } from "./grade.js";
export { barChart, htmlReport, markdownReport } from "./report.js";
export {
  type AgentKind,
  type EvalOptions,
  type EvalResults,
  runEval,
  runTask,
  summarize,
  type TaskResult,
  type TaskTiming,
} from "./runner.js";
export { type EvalTask, loadTaskSet, loadUmbraTask, materializeStart, TaskFormatError } from "./task.js";
export {
  CATEGORY_DESCRIPTIONS,
  classifyFailure,
  type FailureCategory,
  RULES,
  readTranscript,
  type TaxonomyInput,
} from "./taxonomy.js";
