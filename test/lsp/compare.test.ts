import { describe, expect, it } from "vitest";
import { introducedDiagnostics, lineMapping } from "../../src/lsp/compare.js";
import type { Diag } from "../../src/lsp/types.js";

function diag(line: number, message: string, extra: Partial<Diag> = {}): Diag {
  return { path: "f.ts", line, column: 1, endLine: line, endColumn: 5, severity: "error", message, ...extra };
}

describe("lineMapping", () => {
  it("maps unchanged lines around an insertion, deletion and replacement", () => {
    const map = lineMapping("a\nb\nc\nd\ne", "new\na\nb\nC\nd\ne\nend");
    expect([1, 2, 3, 4, 5].map(map)).toEqual([2, 3, undefined, 5, 6]);
    const deleted = lineMapping("a\nb\nc", "a\nc");
    expect([1, 2, 3].map(deleted)).toEqual([1, undefined, 2]);
  });

  it("maps lines between two separate edits", () => {
    const map = lineMapping("1\n2\n3\n4\n5\n6", "0\n1\n2\n3\n4\nfive\n6");
    expect([1, 2, 3, 4, 5, 6].map(map)).toEqual([2, 3, 4, 5, undefined, 7]);
  });

  it("is the identity for equal texts", () => {
    const map = lineMapping("x\ny\n", "x\ny\n");
    expect([1, 2, 3].map(map)).toEqual([1, 2, 3]);
  });
});

describe("introducedDiagnostics", () => {
  it("does not blame an edit for pre-existing errors that moved", () => {
    const baseline = [diag(2, "Cannot find name 'x'.", { code: "2304" })];
    const current = [
      diag(4, "Cannot find name 'x'.", { code: "2304" }),
      diag(5, "Cannot find name 'y'.", { code: "2304" }),
    ];
    const map = lineMapping("a\nuse x\nb", "new\nnew\na\nuse x\nuse y\nb");
    expect(introducedDiagnostics(current, baseline, map).map((d) => d.line)).toEqual([5]);
  });

  it("counts duplicates: a second identical error on another line is new", () => {
    const baseline = [diag(1, "bad")];
    const current = [diag(1, "bad"), diag(3, "bad")];
    expect(introducedDiagnostics(current, baseline).map((d) => d.line)).toEqual([3]);
  });

  it("keeps an error that survived the rewrite of its own line", () => {
    const baseline = [diag(2, "bad")];
    const current = [diag(2, "bad")];
    const map = lineMapping("a\nold bad\nc", "a\nnew bad\nc");
    expect(introducedDiagnostics(current, baseline, map)).toEqual([]);
  });

  it("distinguishes severity, code and message", () => {
    const baseline = [diag(1, "bad", { code: "1" })];
    expect(introducedDiagnostics([diag(1, "bad", { code: "2" })], baseline)).toHaveLength(1);
    expect(
      introducedDiagnostics([diag(1, "bad", { code: "1", severity: "warning" })], baseline),
    ).toHaveLength(1);
    expect(introducedDiagnostics([diag(1, "worse", { code: "1" })], baseline)).toHaveLength(1);
    expect(introducedDiagnostics([diag(1, "bad", { code: "1", column: 9 })], baseline)).toHaveLength(0);
  });

  it("reports everything when there is no baseline", () => {
    expect(introducedDiagnostics([diag(1, "a"), diag(2, "b")], [])).toHaveLength(2);
  });
});
