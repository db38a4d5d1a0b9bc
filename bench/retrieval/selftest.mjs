#!/usr/bin/env node
// @ts-check
/** Checks of the benchmark's own arithmetic: `node bench/retrieval/selftest.mjs`. */
import assert from "node:assert/strict";
import { Bm25Corpus, isCodeFile, tokenize } from "./bm25.mjs";
import { aggregate, foldToFiles, goldRanks, percentile, scoreTask } from "./metrics.mjs";
import { openingPost } from "./reports.mjs";

assert.deepEqual(tokenize("Foo.barBaz(x_y, 42) -> Ünïcode"), ["foo", "barbaz", "x_y", "42", "ünïcode"]);

const corpus = new Bm25Corpus();
const docs = [
  { path: "a.py", stats: corpus.stats("def separability_matrix(model): return matrix") },
  { path: "b.py", stats: corpus.stats("unrelated text about nothing in particular at all here") },
  { path: "c.py", stats: corpus.stats("matrix matrix matrix") },
];
const ranked = corpus.rank(docs, "separability_matrix is wrong for the matrix");
assert.deepEqual(
  ranked.map((r) => r.path),
  ["a.py", "c.py"],
);
assert.ok((ranked[0]?.score ?? 0) > (ranked[1]?.score ?? 0));
assert.deepEqual(corpus.rank(docs, "zzz qqq"), []);

for (const path of ["django/db/models/query.py", "src/index.ts", "lib/app.go", "pkg/testing.py"])
  assert.ok(isCodeFile(path), path);
for (const path of [
  "tests/test_query.py",
  "pkg/test_app.py",
  "conftest.py",
  "docs/conf.py",
  "README.md",
  "setup.cfg",
])
  assert.ok(!isCodeFile(path), path);

assert.deepEqual(foldToFiles([{ path: "./x.py" }, { path: "y.py" }, { path: "x.py" }, { path: "z.py" }]), [
  "x.py",
  "y.py",
  "z.py",
]);
assert.deepEqual(goldRanks(["x", "y", "z"], ["z", "q"]), [3, null]);
assert.deepEqual(scoreTask([1]), { acc1: 1, acc5: 1, acc10: 1, rr: 1, recall5: 1 });
assert.deepEqual(scoreTask([2, 7]), { acc1: 0, acc5: 0, acc10: 1, rr: 0.5, recall5: 0.5 });
assert.deepEqual(scoreTask([null, 3]), { acc1: 0, acc5: 0, acc10: 0, rr: 1 / 3, recall5: 0.5 });
assert.deepEqual(scoreTask([null]), { acc1: 0, acc5: 0, acc10: 0, rr: 0, recall5: 0 });
const agg = aggregate([[1], [null]]);
assert.equal(agg.acc1, 0.5);
assert.equal(agg.mrr, 0.5);
assert.equal(percentile([5, 1, 3, 2, 4], 50), 3);
assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95), 10);
const thread = [
  "o/r · issue #7 · closed · Python",
  "labels: type: bug",
  "# It breaks",
  "",
  "ann · description · 2024-01-02",
  "Step one.",
  "",
  "bob · comment: no, see below · 2024-01-01",
  "Still the post.",
  "",
  "bob · comment · 2024-01-03",
  "A reply.",
].join("\n");
assert.equal(openingPost(thread), "Step one.\n\nbob · comment: no, see below · 2024-01-01\nStill the post.");
assert.equal(openingPost("o/r · issue #7 · open · Go\n# T\n\n[turn 2 by ann, continued]\nlater text"), null);
assert.equal(openingPost("o/r · issue #7 · open · Go\n# T\n\nbob · comment · 2024-01-03\nA reply."), null);
process.stdout.write("retrieval selftest: ok\n");
