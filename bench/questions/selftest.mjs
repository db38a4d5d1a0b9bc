#!/usr/bin/env node
// @ts-check
/**
 * Checks of the questions benchmark: its scoring arithmetic, the definition finder behind the answer
 * check, the shape of the set, and every answer at its pinned commit (when the mirrors are there):
 * `node bench/questions/selftest.mjs [--mirrors DIR]`.
 */
import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { exists, mirrorOf } from "../lib/checkout.mjs";
import { checkAnswers, DEFAULT_MIRRORS, DEFAULT_SET } from "./check.mjs";
import { aggregate, fileKind, fileRank, symbolRank } from "./score.mjs";
import { answerProblem, definesName, definitionEnd, loadSet, shapeProblems } from "./set.mjs";

// Ranks: the first answer file among the files; the first hit overlapping an answer's lines.
/** @type {import("./set.mjs").Answer[]} */
const answers = [
  { path: "a.py", symbol: "A.f", lines: [10, 20] },
  { path: "b.py", symbol: "g", lines: [5, 6] },
];
assert.equal(fileRank(["x.py", "b.py", "a.py"], answers), 2);
assert.equal(fileRank(["x.py"], answers), null);
const hit = (/** @type {string} */ path, /** @type {number} */ startLine, /** @type {number} */ endLine) => ({
  path,
  startLine,
  endLine,
});
assert.equal(symbolRank([hit("a.py", 1, 9), hit("a.py", 21, 30), hit("a.py", 20, 25)], answers), 3);
assert.equal(symbolRank([hit("x.py", 10, 20), hit("b.py", 1, 5)], answers), 2);
assert.equal(symbolRank([hit("b.py", 7, 9)], answers), null);

// Aggregates: shares of questions, MRR over file ranks; no symbol level when a system has none.
const agg = aggregate([
  { file: 1, symbol: 1 },
  { file: 3, symbol: 6 },
  { file: null, symbol: null },
  { file: 2, symbol: 4 },
]);
assert.deepEqual(agg, {
  n: 4,
  file1: 0.25,
  file5: 0.75,
  mrr: (1 + 1 / 3 + 0 + 1 / 2) / 4,
  symbol1: 0.25,
  symbol5: 0.5,
});
const fileOnly = aggregate([{ file: 1 }, { file: 6 }]);
assert.equal(fileOnly.symbol1, null);
assert.equal(fileOnly.symbol5, null);
assert.equal(fileOnly.file5, 0.5);
assert.equal(aggregate([]).n, 0);

// File kinds: docs first by extension, tests by folder or name, code by extension.
assert.equal(fileKind("docs/index.rst"), "docs");
assert.equal(fileKind("README.md"), "docs");
assert.equal(fileKind("doc/md_docs.go"), "code");
assert.equal(fileKind("tests/test_app.py"), "test");
assert.equal(fileKind("command_test.go"), "test");
assert.equal(fileKind("src/hono.test.ts"), "test");
assert.equal(fileKind("src/router/trie-router/node.ts"), "code");
assert.equal(fileKind("package.json"), "other");

// Definitions and where they end.
assert.ok(definesName("    def save_session(", "save_session", "python"));
assert.ok(!definesName("        self.save_session(app)", "save_session", "python"));
assert.ok(definesName("func (c *Command) Find(args []string) (*Command, []string, error) {", "Find", "go"));
assert.ok(definesName("func cleanPath(p string) string {", "cleanPath", "go"));
assert.ok(!definesName("\treturn c.Find(args)", "Find", "go"));
assert.ok(
  definesName("export const cors = (options?: CORSOptions): MiddlewareHandler => {", "cors", "typescript"),
);
assert.ok(definesName("  json: JSONRespond = <", "json", "typescript"));
assert.ok(definesName("  search(method: string, path: string): [[T, Params][]] {", "search", "typescript"));
assert.ok(!definesName("    return this.search(method, path)", "search", "typescript"));
const py = [
  "class A:",
  "    def f(",
  "        self,",
  "    ) -> None:",
  "        x = 1",
  "",
  "        return x",
  "",
  "    def g(self): pass",
];
assert.equal(definitionEnd(py, 2, "python"), 7);
// biome-ignore lint/suspicious/noTemplateCurlyInString: Go source under test
const go = ["func f() {", "\ts := `{ ${x}`", "\tif x { // }", "\t}", "}", "func g() {}"];
assert.equal(definitionEnd(go, 1, "go"), 5);
const ts = [
  "export const f = <T extends {}>(o: { a: T }) => {",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source under test
  "  const s = `${o.a}}`",
  "  /* } */ return '}'",
  "}",
  "const g = make(async (c) => {",
  "  await c()",
  "})",
];
assert.equal(definitionEnd(ts, 1, "typescript"), 4);
assert.equal(definitionEnd(ts, 5, "typescript"), 7);
assert.equal(answerProblem({ path: "x.go", symbol: "f", lines: [1, 5] }, go.join("\n"), "go"), null);
assert.match(
  answerProblem({ path: "x.go", symbol: "f", lines: [1, 4] }, go.join("\n"), "go") ?? "",
  /ends at line 5/,
);
assert.match(
  answerProblem({ path: "x.go", symbol: "g", lines: [1, 5] }, go.join("\n"), "go") ?? "",
  /does not define g/,
);
assert.match(answerProblem({ path: "x.go", symbol: "f", lines: [1, 5] }, null, "go") ?? "", /no such file/);
assert.equal(answerProblem({ path: "a.py", symbol: "A.f", lines: [2, 7] }, py.join("\n"), "python"), null);
assert.match(
  answerProblem({ path: "a.py", symbol: "B.f", lines: [2, 7] }, py.join("\n"), "python") ?? "",
  /not a member of B/,
);
const method = ["func (c *Command) Find() {", "}"].join("\n");
assert.equal(answerProblem({ path: "c.go", symbol: "Command.Find", lines: [1, 2] }, method, "go"), null);
assert.match(
  answerProblem({ path: "c.go", symbol: "Engine.Find", lines: [1, 2] }, method, "go") ?? "",
  /not a member/,
);

// Shape problems are listed, not thrown one at a time.
assert.deepEqual(shapeProblems({ description: "", repos: {}, questions: [] }), []);
assert.equal(
  shapeProblems({
    description: "",
    repos: { "a/b": { commit: "x", language: "cobol" } },
    questions: [
      { id: "q", repo: "c/d", question: "", answers: [{ path: "/abs", symbol: "1x", lines: [3, 2] }] },
    ],
  }).length,
  7,
);

// The set itself: its shape, its size, and every answer at the pinned commit.
const { values } = parseArgs({ options: { mirrors: { type: "string" } } });
const set = await loadSet(DEFAULT_SET);
const repos = new Set(set.questions.map((q) => q.repo));
const languages = new Set([...repos].map((r) => set.repos[r]?.language));
assert.ok(set.questions.length >= 60, `${set.questions.length} questions, want 60 or more`);
assert.ok(repos.size >= 5, `${repos.size} repositories, want 5 or more`);
assert.ok(languages.size >= 3, `${languages.size} languages, want 3 or more`);
// The held-out set (issue 15): its own repositories, none of the development set's.
const heldout = await loadSet(join(dirname(DEFAULT_SET), "heldout.json"));
const heldoutRepos = new Set(heldout.questions.map((q) => q.repo));
assert.ok(heldout.questions.length >= 50, `held-out: ${heldout.questions.length} questions, want 50 or more`);
assert.ok(heldoutRepos.size >= 5, `held-out: ${heldoutRepos.size} repositories, want 5 or more`);
assert.ok(
  new Set([...heldoutRepos].map((r) => heldout.repos[r]?.language)).size >= 3,
  "held-out: fewer than 3 languages",
);
const shared = [...heldoutRepos].filter((r) => r in set.repos);
assert.deepEqual(shared, [], `held-out repositories also in the development set: ${shared.join(", ")}`);
const mirrors = resolve(values.mirrors ?? DEFAULT_MIRRORS);
if (values.mirrors !== undefined || (await exists(mirrors))) {
  const problems = await checkAnswers(set, mirrors);
  assert.deepEqual(problems, [], `answers wrong at their pinned commits:\n${problems.join("\n")}`);
  // The held-out set's mirrors may be absent where the development set's are (fetched separately).
  /** @type {string[]} */
  const missing = [];
  for (const r of heldoutRepos) if (!(await mirrorOf({ mirrors, work: "" }, r))) missing.push(r);
  if (missing.length === 0) {
    const heldoutProblems = await checkAnswers(heldout, mirrors);
    assert.deepEqual(
      heldoutProblems,
      [],
      `held-out answers wrong at their pinned commits:\n${heldoutProblems.join("\n")}`,
    );
  }
  process.stdout.write(
    `questions selftest: ok (${set.questions.length} questions, answers checked in ${mirrors}; ${heldout.questions.length} held-out questions, ${missing.length ? `answers NOT checked: no mirror of ${missing.join(", ")}` : "answers checked"})\n`,
  );
} else {
  process.stdout.write(
    `questions selftest: ok; answers NOT checked: no mirrors at ${mirrors} (--mirrors DIR)\n`,
  );
}
