import { describe, expect, test } from "vitest";
import { applyPatch, parsePatch } from "../../../src/agent/edit/index.js";

const lines = (n: number, f: (i: number) => string) =>
  `${Array.from({ length: n }, (_, i) => f(i + 1)).join("\n")}\n`;
const FILE = lines(30, (i) => `line ${i}`);
const reader =
  (files: Record<string, string>) =>
  (p: string): string | undefined =>
    files[p];

describe("parsePatch", () => {
  test("git headers: modify, add, delete, rename", () => {
    const patch = [
      "diff --git a/m.txt b/m.txt",
      "index 111..222 100644",
      "--- a/m.txt",
      "+++ b/m.txt",
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "+B",
      "diff --git a/new.txt b/new.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/new.txt",
      "@@ -0,0 +1 @@",
      "+hello",
      "diff --git a/old.txt b/old.txt",
      "deleted file mode 100644",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "diff --git a/x.txt b/y.txt",
      "similarity index 100%",
      "rename from x.txt",
      "rename to y.txt",
      "",
    ].join("\n");
    const files = parsePatch(patch);
    expect(files.map((f) => [f.kind, f.path, f.oldPath, f.renamed])).toEqual([
      ["modified", "m.txt", "m.txt", false],
      ["added", "new.txt", null, false],
      ["deleted", "old.txt", "old.txt", false],
      ["modified", "y.txt", "x.txt", true],
    ]);
    expect(files[0]?.hunks[0]?.lines.map((l) => l.kind + l.text)).toEqual([" a", "-b", "+B"]);
  });

  test("no diff --git line, wrong counts, blank context without its space", () => {
    const patch =
      "--- a/f.py\n+++ b/f.py\n@@ -1,9 +1,1 @@\n a\n\n-b\n+c\n--- a/g.py\n+++ b/g.py\n@@ -1 +1 @@\n-x\n+y\n";
    const files = parsePatch(patch);
    expect(files.map((f) => f.path)).toEqual(["f.py", "g.py"]);
    expect(files[0]?.hunks[0]?.lines.map((l) => l.kind + l.text)).toEqual([" a", " ", "-b", "+c"]);
  });

  test("a removed line that looks like a header", () => {
    const patch = "--- a/f.sql\n+++ b/f.sql\n@@ -1,2 +1,2 @@\n--- comment\n+++ other\n x\n";
    const h = parsePatch(patch)[0]?.hunks[0];
    expect(h?.lines.map((l) => l.kind + l.text)).toEqual(["--- comment", "+++ other", " x"]);
  });

  test("hunk headers however spaced, and a hostile one at once", () => {
    const patch = [
      "--- a/x",
      "+++ b/x",
      "@@-3 +4,2@@ ctx",
      " a",
      "@@   +7   @@",
      " b",
      "@@ -1,2@@",
      " c",
      "@@@ @@@",
      " d",
    ];
    const hunks = parsePatch(`${patch.join("\n")}\n`)[0]?.hunks ?? [];
    expect(hunks.map((h) => [h.oldStart, h.oldCount, h.newStart, h.newCount])).toEqual([
      [3, 1, 4, 2],
      [0, -1, 7, 1],
      [1, 2, 0, -1],
      [0, -1, 0, -1],
    ]);
    // `@@` and blanks with no closing `@@`: the header pattern tried every way of sharing the blanks among
    // its three optional runs of them (cubic: seconds for 4,000 blanks; the engine takes 10 MB patches).
    const hostile = parsePatch(`--- a/x\n+++ b/x\n@@${" ".repeat(4_000)}\n`);
    expect(hostile.map((f) => [f.path, f.hunks.length])).toEqual([["x", 0]]);
  }, 10_000);
});

describe("applyPatch", () => {
  test("modify with exact line numbers", () => {
    const patch = "--- a/f.txt\n+++ b/f.txt\n@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE 10\n line 11\n";
    const r = applyPatch(patch, reader({ "f.txt": FILE }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(FILE.replace("line 10\n", "LINE 10\n"));
    expect(r.files[0]?.hunks[0]).toMatchObject({ ok: true, stage: "exact", line: 9 });
  });

  test("add, delete and rename", () => {
    const patch = [
      "diff --git a/new.txt b/new.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/new.txt",
      "@@ -0,0 +1,2 @@",
      "+one",
      "+two",
      "diff --git a/old.txt b/old.txt",
      "deleted file mode 100644",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1,2 +0,0 @@",
      "-bye",
      "-now",
      "diff --git a/x.txt b/y.txt",
      "similarity index 90%",
      "rename from x.txt",
      "rename to y.txt",
      "--- a/x.txt",
      "+++ b/y.txt",
      "@@ -1,3 +1,3 @@",
      " a",
      "-b",
      "+B",
      " c",
      "",
    ].join("\n");
    const r = applyPatch(patch, reader({ "old.txt": "bye\nnow\n", "x.txt": "a\nb\nc\n" }));
    expect(r.ok).toBe(true);
    expect(r.files.map((f) => [f.kind, f.path, f.text])).toEqual([
      ["added", "new.txt", "one\ntwo\n"],
      ["deleted", "old.txt", undefined],
      ["modified", "y.txt", "a\nB\nc\n"],
    ]);
    expect(r.files[2]?.oldPath).toBe("x.txt");
  });

  test("adding a file that exists is refused", () => {
    const r = applyPatch("--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n", reader({ "a.txt": "y\n" }));
    expect(r.ok).toBe(false);
  });

  test("wrong line numbers: found by content", () => {
    const patch = "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n line 19\n-line 20\n+LINE 20\n line 21\n";
    const r = applyPatch(patch, reader({ "f.txt": FILE }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(FILE.replace("line 20\n", "LINE 20\n"));
    expect(r.files[0]?.hunks[0]?.line).toBe(19);
  });

  test("wrong @@ counts", () => {
    const patch = "--- a/f.txt\n+++ b/f.txt\n@@ -5,1 +5,7 @@\n line 5\n-line 6\n+LINE 6\n line 7\n";
    const r = applyPatch(patch, reader({ "f.txt": FILE }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(FILE.replace("line 6\n", "LINE 6\n"));
  });

  test("a missing context line", () => {
    const patch =
      "--- a/f.txt\n+++ b/f.txt\n@@ -4,7 +4,7 @@\n line 4\n line 5\n line 7\n-line 8\n+LINE 8\n line 9\n";
    const r = applyPatch(patch, reader({ "f.txt": FILE }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(FILE.replace("line 8\n", "LINE 8\n"));
    expect(r.files[0]?.hunks[0]?.stage).toBe("context-line");
  });

  test("whitespace and CRLF drift in the patch, tabs in the file", () => {
    const file = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
    const patch =
      "--- a/f.go\n+++ b/f.go\n@@ -2,3 +2,3 @@\n     if x {\n-        return 1\n+        return 2\n     }\n".replace(
        /\n/g,
        "\r\n",
      );
    const r = applyPatch(patch, reader({ "f.go": file }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(file.replace("return 1", "return 2"));
  });

  test("ambiguous hunk refused, even with two hunks around", () => {
    const file = "a\nx\nb\nz\na\nx\nb\n";
    const patch = "--- a/f\n+++ b/f\n@@ -20,3 +20,3 @@\n a\n-x\n+y\n b\n";
    const r = applyPatch(patch, reader({ f: file }));
    expect(r.ok).toBe(false);
    expect(r.files[0]?.hunks[0]?.ok).toBe(false);
    expect(r.files[0]?.message).toContain("matches 2 places");
  });

  test("the stated line breaks a tie", () => {
    const file = "a\nx\nb\nz\na\nx\nb\n";
    const patch = "--- a/f\n+++ b/f\n@@ -5,3 +5,3 @@\n a\n-x\n+y\n b\n";
    const r = applyPatch(patch, reader({ f: file }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe("a\nx\nb\nz\na\ny\nb\n");
  });

  test("all or nothing: a failing second file leaves no text", () => {
    const patch =
      "--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/two.txt\n+++ b/two.txt\n@@ -1 +1 @@\n-missing\n+M\n";
    const r = applyPatch(patch, reader({ "one.txt": "a\n", "two.txt": "b\n" }));
    expect(r.ok).toBe(false);
    expect(r.files[0]?.ok).toBe(true);
    expect(r.files[0]?.text).toBeUndefined();
    expect(r.files[1]?.ok).toBe(false);
    expect(r.files[1]?.message).toContain("not found");
  });

  test("missing file and no-newline markers", () => {
    expect(applyPatch("--- a/nope\n+++ b/nope\n@@ -1 +1 @@\n-a\n+b\n", reader({})).ok).toBe(false);
    const patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n";
    const r = applyPatch(patch, reader({ f: "a\nb" }));
    expect(r.files[0]?.text).toBe("a\nc\n");
  });

  test("multiple hunks with a shared offset", () => {
    const patch =
      "--- a/f\n+++ b/f\n@@ -12,3 +12,4 @@\n line 2\n+new\n line 3\n line 4\n@@ -24,3 +25,3 @@\n line 14\n-line 15\n+LINE 15\n line 16\n";
    const r = applyPatch(patch, reader({ f: FILE }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(
      FILE.replace("line 2\n", "line 2\nnew\n").replace("line 15\n", "LINE 15\n"),
    );
  });

  test("a hunk whose context is lopsided does not use its stated line to break a tie", () => {
    const file = "a\nx\nb\nz\na\nx\nb\n";
    const patch = "--- a/f\n+++ b/f\n@@ -5,2 +5,2 @@\n a\n-x\n+y\n";
    const r = applyPatch(patch, reader({ f: file }));
    expect(r.ok).toBe(false);
  });

  test("BOM and CRLF file kept", () => {
    const file = "\uFEFFa\r\nb\r\nc\r\n";
    const r = applyPatch("--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n+n\n c\n", reader({ f: file }));
    expect(r.files[0]?.text).toBe("\uFEFFa\r\nb\r\nn\r\nc\r\n");
  });

  test("an extra context line the file lacks", () => {
    const patch =
      "--- a/f\n+++ b/f\n@@ -4,6 +4,6 @@\n line 4\n line 5\n\n line 6\n-line 7\n+LINE 7\n line 8\n";
    const r = applyPatch(patch, reader({ f: FILE }));
    expect(r.ok).toBe(true);
    expect(r.files[0]?.text).toBe(FILE.replace("line 7\n", "LINE 7\n"));
  });
});
