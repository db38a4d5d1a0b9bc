import { describe, expect, test } from "vitest";
import { applyEdit } from "../../../src/agent/edit/index.js";
import { occurrences } from "../../../src/agent/edit/match.js";

const PY = ["def a():", "    x = 1", "    y = 2", "    return x", "", "def b():", "    pass", ""].join("\n");

function ok(r: ReturnType<typeof applyEdit>) {
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}: ${r.message}`);
  return r;
}

describe("applyEdit stages", () => {
  test("exact match, substring within a line", () => {
    const r = ok(applyEdit(PY, "x = 1", "x = 10"));
    expect(r.stage).toBe("exact");
    expect(r.text).toBe(PY.replace("x = 1", "x = 10"));
    expect([r.startLine, r.endLine]).toEqual([2, 2]);
  });

  test("trailing whitespace in the search block", () => {
    const r = ok(applyEdit(PY, "    x = 1   \n    y = 2\t\n", "    x = 1\n    y = 3\n"));
    expect(r.stage).toBe("trailing-whitespace");
    expect(r.text).toBe(PY.replace("y = 2", "y = 3"));
  });

  test("indentation: the replacement is re-indented by the offset found", () => {
    const r = ok(applyEdit(PY, "x = 1\ny = 2\n", "x = 1\nif y:\n    y = 3\n"));
    expect(r.stage).toBe("indentation");
    expect(r.text).toBe(PY.replace("    y = 2\n", "    if y:\n        y = 3\n"));
    expect([r.startLine, r.endLine]).toEqual([2, 4]);
  });

  test("indentation: over-indented block is shifted back", () => {
    const r = ok(applyEdit(PY, "        x = 1\n        y = 2", "        x = 1\n        y = 5"));
    expect(r.stage).toBe("indentation");
    expect(r.text).toBe(PY.replace("y = 2", "y = 5"));
  });

  test("whitespace inside lines", () => {
    const r = ok(applyEdit(PY, "    x  =  1\n    y = 2\n", "    x = 7\n    y = 2\n"));
    expect(r.stage).toBe("whitespace");
    expect(r.text).toBe(PY.replace("x = 1", "x = 7"));
  });

  test("one context line missing from the block", () => {
    const file = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n";
    const r = ok(applyEdit(file, "a = 1\nb = 2\nd = 4\ne = 5\n", "a = 1\nb = 2\nd = 4\ne = 50\n"));
    expect(r.stage).toBe("context-line");
    expect(r.text).toBe("a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n");
  });

  test("one extra line in the block that the file lacks", () => {
    const file = "a = 1\nb = 2\nd = 4\ne = 5\n";
    const r = ok(applyEdit(file, "a = 1\nb = 2\n\nd = 4\ne = 5\n", "a = 1\nb = 2\n\nd = 4\ne = 6\n"));
    expect(r.stage).toBe("context-line");
    expect(r.text).toBe("a = 1\nb = 2\nd = 4\ne = 6\n");
  });

  test("context lines come from the file, not from the drifted search text", () => {
    const r = ok(applyEdit(PY, "    x = 1 \n    y = 2 \n", "    x = 1 \n    y = 4\n"));
    expect(r.text).toBe(PY.replace("y = 2", "y = 4"));
  });
});

describe("uniqueness", () => {
  const dup = "f()\nx = 1\ng()\nx = 1\n";
  test("ambiguous exact match is refused with candidates", () => {
    const r = applyEdit(dup, "x = 1\n", "x = 2\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe("ambiguous");
    expect(r.candidates?.map((c) => c.startLine)).toEqual([2, 4]);
    expect(r.message).toContain("2 places");
  });

  test("ambiguous at a tolerant stage is refused too", () => {
    const r = applyEdit("  x = 1\n    x = 1\n", "x = 1 \n", "x = 2\n");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe("ambiguous");
  });

  test("a unique exact match wins over a looser one elsewhere", () => {
    const r = ok(applyEdit("x = 1\n  x = 1\n", "  x = 1\n", "  x = 2\n"));
    expect(r.text).toBe("x = 1\n  x = 2\n");
  });

  test("replaceAll replaces every occurrence", () => {
    const r = ok(applyEdit(dup, "x = 1", "x = 2", { replaceAll: true }));
    expect(r.text).toBe("f()\nx = 2\ng()\nx = 2\n");
    expect(r.count).toBe(2);
  });

  test("replaceAll at a tolerant stage", () => {
    const r = ok(
      applyEdit("if a:\n    x = 1\nif b:\n  x = 1\n", "x = 1 \n", "x = 2\n", { replaceAll: true }),
    );
    expect(r.text).toBe("if a:\n    x = 2\nif b:\n  x = 2\n");
  });

  test("empty search is refused", () => {
    const r = applyEdit(PY, "", "x");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe("empty-search");
  });
});

describe("bytes kept", () => {
  test("CRLF file keeps CRLF for new lines, search given with LF", () => {
    const crlf = PY.replace(/\n/g, "\r\n");
    const r = ok(applyEdit(crlf, "    y = 2\n    return x\n", "    y = 2\n    z = 3\n    return x\n"));
    expect(r.stage).toBe("exact");
    expect(r.text).toBe(crlf.replace("    y = 2\r\n", "    y = 2\r\n    z = 3\r\n"));
  });

  test("CRLF kept at a tolerant stage", () => {
    const crlf = PY.replace(/\n/g, "\r\n");
    const r = ok(applyEdit(crlf, "x = 1\ny = 2\n", "x = 1\ny = 2\nz = 3\n"));
    expect(r.stage).toBe("indentation");
    expect(r.text).toBe(crlf.replace("    y = 2\r\n", "    y = 2\r\n    z = 3\r\n"));
  });

  test("mixed line endings: untouched lines keep their own", () => {
    const file = "a\r\nb\nc\r\nd\n";
    const r = ok(applyEdit(file, "b \nc\n", "b\nC\n"));
    expect(r.text).toBe("a\r\nb\nC\r\nd\n");
  });

  test("tabs kept: a block written with spaces edits a tab-indented file", () => {
    const go = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
    const r = ok(
      applyEdit(
        go,
        "    if x {\n        return 1\n    }\n",
        "    if x {\n        log()\n        return 2\n    }\n",
      ),
    );
    expect(r.stage).toBe("indentation");
    expect(r.text).toBe("func f() {\n\tif x {\n\t\tlog()\n\t\treturn 2\n\t}\n}\n");
  });

  test("byte order mark kept", () => {
    const r = ok(applyEdit("\uFEFFa = 1\nb = 2\n", "b = 2", "b = 3"));
    expect(r.text).toBe("\uFEFFa = 1\nb = 3\n");
    const t = ok(applyEdit("\uFEFFa = 1\nb = 2\n", "a = 1 \nb = 2\n", "a = 0\nb = 2\n"));
    expect(t.text).toBe("\uFEFFa = 0\nb = 2\n");
  });

  test("no trailing newline stays that way", () => {
    const r = ok(applyEdit("a\nb\nc", "b\nc\n", "b\nC\n"));
    expect(r.text).toBe("a\nb\nC");
    const t = ok(applyEdit("a\nb\nc", "b \nc", "b\nc\nd"));
    expect(t.text).toBe("a\nb\nc\nd");
  });
});

describe("misses", () => {
  test("the nearest region is returned with line numbers", () => {
    const r = applyEdit(PY, "def b():\n    return None\n", "def b():\n    return 1\n");
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe("not-found");
    expect(r.candidates?.[0]).toMatchObject({ startLine: 6, endLine: 7 });
    expect(r.message).toContain("lines 6-7");
    expect(r.message).toContain("6| def b():");
    expect(r.message).toContain("7|     pass");
    expect(r.message).toContain('search line 2 is "    return None"');
  });

  test("a near miss is not applied", () => {
    const r = applyEdit(PY, "    x = 1\n    y = 22\n", "    x = 1\n    y = 3\n");
    expect(r.ok).toBe(false);
  });

  test("a missing line where the change adds lines is not guessed", () => {
    const file = "a = 1\nb = 2\nc = 3\nd = 4\n";
    const r = applyEdit(file, "a = 1\nb = 2\nd = 4\n", "a = 1\nb = 2\nx = 9\nd = 4\n");
    expect(r.ok).toBe(false);
  });

  test("new lines follow the file's indentation character", () => {
    const r = ok(applyEdit("def f():\n    return 1\n", "def f():\n", "def f():\n\tx = 2\n"));
    expect(r.text).toBe("def f():\n    x = 2\n    return 1\n");
  });
});

describe("applyEdit on a long repetitive file", () => {
  // a file whose lines repeat every 7, and a block that matches every 7th line with other indentation
  const original = `${Array.from({ length: 20_000 }, (_, i) => `    line ${i % 7} value`).join("\n")}\n`;
  const block = Array.from({ length: 50 }, (_, i) => `line ${i % 7} value`).join("\n");

  test("reports the ambiguity at once, and replaceAll changes every place", () => {
    const start = performance.now();
    const r = applyEdit(original, block, "x");
    // comparing every place with every other for the same outcome, lines apart, took minutes
    expect(performance.now() - start).toBeLessThan(10_000);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe("ambiguous");
    expect(r.message).toContain("matches 2851 places");
  }, 20_000);

  test("finds a place the same way whatever the lines between: the one that is not repeated", () => {
    const lines = original.split("\n");
    lines[14_000] = "    the one line";
    const r = ok(applyEdit(lines.join("\n"), "  the one line\n  line 1 value", "changed"));
    const changed = r.text.split("\n");
    expect(changed[14_000]?.trim()).toBe("changed");
    expect(changed[14_001]).toBe("    line 2 value");
  }, 20_000);
});

describe("occurrences", () => {
  test("finds every start, overlapping ones too, as comparing at each start does", () => {
    let state = 3;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    for (let t = 0; t < 500; t++) {
      const letters = 1 + Math.floor(next() * 3);
      const word = () => String.fromCharCode(97 + Math.floor(next() * letters));
      const lines = Array.from({ length: Math.floor(next() * 30) }, word);
      const pattern = Array.from({ length: 1 + Math.floor(next() * 4) }, word);
      const naive: number[] = [];
      for (let p = 0; p + pattern.length <= lines.length; p++)
        if (pattern.every((line, j) => lines[p + j] === line)) naive.push(p);
      expect(occurrences(lines, pattern)).toEqual(naive);
    }
    expect(occurrences(["a", "a", "a"], [])).toEqual([]);
  });
});
