import { describe, expect, it } from "vitest";
import {
  type Chunk,
  chunkFile,
  estimateTokens,
  lineChunks,
  parseBudgetMs,
} from "../../../src/index/chunk/index.js";
import { chunkHolding, expectValidChunks, expectWhole, fixture, lineOf, sha256 } from "./helpers.js";

type Needle = string | RegExp;

interface LanguageCase {
  file: string;
  language: string;
  maxTokens: number;
  /** [symbol, first line, last line]: a definition kept whole in one chunk with that symbol. */
  whole: [string, Needle, Needle][];
  /** Import lines, each present in some chunk's text. */
  imports: string[];
}

const CASES: LanguageCase[] = [
  {
    file: "invoice.py",
    language: "python",
    maxTokens: 60,
    whole: [
      ["LineItem", "@dataclass", "return self.price * self.quantity"],
      ["Invoice > add", "def add(", "self.items.append(item)"],
      ["Invoice > total", "# Sum of all line items", "return math.ceil"],
    ],
    imports: [
      "from __future__ import annotations",
      "import math",
      "from dataclasses import dataclass, field",
    ],
  },
  {
    file: "server.go",
    language: "go",
    maxTokens: 60,
    whole: [
      ["NewServer", "// NewServer creates", /^}$/],
      ["Server > Start", "// Start listens", /^}$/],
    ],
    imports: ['"encoding/json"', '"net/http"'],
  },
  {
    file: "lib.rs",
    language: "rust",
    maxTokens: 60,
    whole: [
      ["Invoice", "/// An invoice with items.", /^}$/],
      ["Invoice > new", "pub fn new", /^ {4}}$/],
      ["Invoice > total", "/// Total including tax.", /^ {4}}$/],
      ["Invoice > fmt", "fn fmt(", /^ {4}}$/],
    ],
    imports: ["use std::collections::HashMap;", "use std::fmt;"],
  },
  {
    file: "Invoice.java",
    language: "java",
    maxTokens: 60,
    whole: [
      ["Invoice > total", "/** Total including tax. */", /^ {4}}$/],
      ["Invoice > Visitor", "public interface Visitor", /^ {4}}$/],
    ],
    imports: ["import java.util.ArrayList;", "import java.util.List;"],
  },
  {
    file: "list.c",
    language: "c",
    maxTokens: 60,
    whole: [
      ["list", "/* A growable list", /^};$/],
      ["list_new", "static struct list *list_new", /^}$/],
      ["main", "int main(void)", /^}$/],
    ],
    imports: ["#include <stdio.h>", "#include <stdlib.h>"],
  },
  {
    file: "shapes.cpp",
    language: "cpp",
    maxTokens: 50,
    whole: [
      ["geometry > Shape", "// A shape with an area.", /^};$/],
      ["geometry > Circle > area", "double area() const override", /^ {2}}$/],
      ["geometry > totalArea", "double totalArea", /^}$/],
      ["main", "int main()", /^}$/],
    ],
    imports: ["#include <cmath>", "#include <vector>"],
  },
  {
    file: "Program.cs",
    language: "csharp",
    maxTokens: 50,
    whole: [
      ["Billing > Invoice > Total", "public double Total()", /^ {8}}$/],
      ["Billing > IStore", "public interface IStore", /^ {4}}$/],
    ],
    imports: ["using System;", "using System.Linq;"],
  },
  {
    file: "invoice.rb",
    language: "ruby",
    maxTokens: 40,
    whole: [
      ["Billing > Invoice > total", "def total", /^ {4}end$/],
      ["Billing > Invoice > parse", "def self.parse", /^ {4}end$/],
    ],
    imports: ['require "json"', 'require_relative "line_item"'],
  },
  {
    file: "Invoice.php",
    language: "php",
    maxTokens: 60,
    whole: [
      ["Invoice > total", "public function total()", /^ {4}}$/],
      ["parse_invoice", "function parse_invoice", /^}$/],
    ],
    imports: ["use App\\Models\\LineItem;", "use InvalidArgumentException;"],
  },
  {
    file: "app.ts",
    language: "typescript",
    maxTokens: 60,
    whole: [
      ["Invoice > add", "add(item: LineItem)", /^ {2}}$/],
      ["formatTotal", "export const formatTotal", "export const formatTotal"],
    ],
    imports: ['import { readFile } from "node:fs/promises";', 'import type { LineItem } from "./types.js";'],
  },
  {
    file: "view.tsx",
    language: "tsx",
    maxTokens: 40,
    whole: [
      ["Props", "interface Props", /^}$/],
      ["InvoiceView > pay", "const pay = () =>", /^ {2}};$/],
    ],
    imports: ['import { useState } from "react";'],
  },
  {
    file: "cart.js",
    language: "javascript",
    maxTokens: 60,
    whole: [
      ["Cart > add", "add(item) {", /^ {2}}$/],
      ["Cart > total", "get total()", /^ {2}}$/],
      ["checkout", "function checkout", /^}$/],
    ],
    imports: ['const { EventEmitter } = require("node:events");'],
  },
];

function findLine(content: string, needle: Needle, from = 1): number {
  if (typeof needle === "string") return lineOf(content, needle, from);
  const lines = content.split(/\r?\n/);
  for (let i = from - 1; i < lines.length; i++) if (needle.test(lines[i] ?? "")) return i + 1;
  throw new Error(`not found: ${needle}`);
}

describe.each(CASES)("$language ($file)", ({ file, language, maxTokens, whole, imports }) => {
  const content = fixture(file);

  it("covers every non-blank line once, within budget, at several budgets", async () => {
    for (const budget of [30, maxTokens, 120, 400]) {
      const chunks = await chunkFile(file, content, { maxTokens: budget });
      expect(chunks.length).toBeGreaterThan(0);
      expectValidChunks(content, chunks, budget);
      for (const chunk of chunks) {
        expect(chunk.language).toBe(language);
        expect(chunk.path).toBe(file);
      }
    }
  });

  it("keeps definitions whole with their symbol path, comments and decorators included", async () => {
    const chunks = await chunkFile(file, content, { maxTokens });
    expect(chunks.length).toBeGreaterThan(2);
    for (const [symbol, first, last] of whole) {
      const start = findLine(content, first);
      const end = findLine(content, last, start);
      expectWhole(chunks, symbol, start, end);
    }
  });

  it("keeps the imports", async () => {
    const chunks = await chunkFile(file, content, { maxTokens });
    for (const line of imports) {
      expect(
        chunks.some((chunk) => chunk.text.split("\n").some((own) => own.trim() === line)),
        line,
      ).toBe(true);
    }
  });

  it("puts the whole file in one chunk when it fits", async () => {
    const chunks = await chunkFile(file, content, { maxTokens: 2000 });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.text).toBe(content.trimEnd());
  });
});

// ---------------------------------------------------------------------------------------------------

/** A Python function whose body is far over budget, with multi-line statements, and its neighbours. */
function bigPython(): { content: string; statementStarts: Set<number>; bigStart: number; bigEnd: number } {
  const lines = ["import os", "", "", "def big(alpha, beta):", '    """Add things up."""'];
  const statementStarts = new Set<number>([5]);
  for (let i = 0; i < 24; i++) {
    statementStarts.add(lines.length + 1);
    if (i % 3 === 0) {
      lines.push(
        `    settings_${i} = {`,
        `        "alpha": alpha + ${i},`,
        `        "beta": beta * ${i},`,
        "    }",
      );
    } else if (i % 3 === 1) {
      lines.push(`    for item_${i} in range(${i}):`, `        alpha += item_${i} * os.getpid()`);
    } else {
      lines.push(`    beta = compute_value(alpha, beta, ${i})`);
    }
  }
  statementStarts.add(lines.length + 1);
  lines.push("    return alpha + beta");
  const bigEnd = lines.length;
  lines.push("", "", "def small():", "    return 1", "");
  return { content: lines.join("\n"), statementStarts, bigStart: 4, bigEnd };
}

describe("an oversized definition", () => {
  it("is split at statement boundaries, every piece named after it and carrying its signature", async () => {
    const { content, statementStarts, bigStart, bigEnd } = bigPython();
    const chunks = await chunkFile("big.py", content, { maxTokens: 80 });
    expectValidChunks(content, chunks, 80);
    const pieces = chunks.filter((chunk) => chunk.symbol === "big");
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    // The first piece starts at the signature; the pieces tile the function's lines.
    expect(pieces[0]?.startLine).toBeLessThanOrEqual(bigStart);
    expect(pieces[0]?.text).toContain("def big(alpha, beta):");
    expect(pieces[pieces.length - 1]?.endLine).toBe(bigEnd);
    for (const piece of pieces.slice(1)) {
      expect(
        statementStarts.has(piece.startLine),
        `piece starts at a statement: line ${piece.startLine}`,
      ).toBe(true);
      expect(piece.text.startsWith("def big(alpha, beta):\n")).toBe(true);
      expect(piece.startLine).toBeGreaterThan(bigStart);
    }
    // The neighbours are not part of it.
    expectWhole(chunks, "small", lineOf(content, "def small"), lineOf(content, "return 1"));
    expect(chunks.some((chunk) => chunk.text.includes("import os"))).toBe(true);
  });

  it("carries the signatures of every enclosing split definition, outer first", async () => {
    const body = Array.from(
      { length: 30 },
      (_, i) => `        self.lines.append(format_line(self.rows[${i}], width=${i}))`,
    );
    const content = [
      "class Report:",
      "    def __init__(self):",
      "        self.lines = []",
      "",
      "    def render(self):",
      ...body,
      "        return self.lines",
      "",
      "    def title(self):",
      '        return "Report"',
    ].join("\n");
    const chunks = await chunkFile("report.py", content, { maxTokens: 100 });
    expectValidChunks(content, chunks, 100);
    const render = chunks.filter((chunk) => chunk.symbol === "Report > render");
    expect(render.length).toBeGreaterThanOrEqual(3);
    for (const piece of render.slice(1)) {
      expect(piece.text.startsWith("class Report:\n    def render(self):\n        self.lines.append")).toBe(
        true,
      );
    }
    expectWhole(chunks, "Report > title", lineOf(content, "def title"), lineOf(content, 'return "Report"'));
  });

  it("splits a brace-language function between statements and keeps the signature line", async () => {
    const statements = Array.from({ length: 40 }, (_, i) => `\tvalue${i} := compute(ctx, ${i}, "step-${i}")`);
    const content = [
      "package main",
      "",
      "func (p *Pipeline) Run(ctx context.Context) error {",
      ...statements,
      "\treturn nil",
      "}",
      "",
    ].join("\n");
    const chunks = await chunkFile("pipeline.go", content, { maxTokens: 120 });
    expectValidChunks(content, chunks, 120);
    const pieces = chunks.filter((chunk) => chunk.symbol === "Pipeline > Run");
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces.slice(1)) {
      expect(piece.text.startsWith("func (p *Pipeline) Run(ctx context.Context) error {\n\tvalue")).toBe(
        true,
      );
    }
    expect(pieces[pieces.length - 1]?.text.endsWith("\treturn nil\n}")).toBe(true);
  });

  it("splits a big class between its members, each kept whole", async () => {
    const methods = Array.from({ length: 8 }, (_, i) =>
      [
        `  method${i}(input: number): number {`,
        `    const scaled = input * ${i + 1} + this.offset;`,
        `    return Math.max(scaled, this.floor${i});`,
        "  }",
      ].join("\n"),
    );
    const content = [
      "export class Calculator {",
      "  private offset = 0;",
      "",
      methods.join("\n\n"),
      "}",
      "",
    ].join("\n");
    const chunks = await chunkFile("calc.ts", content, { maxTokens: 60 });
    expectValidChunks(content, chunks, 60);
    for (let i = 0; i < 8; i++) {
      const start = lineOf(content, `method${i}(`);
      const chunk = chunkHolding(chunks, start, start + 3);
      expect(chunk.symbol.startsWith("Calculator")).toBe(true);
    }
    expect(chunks.filter((chunk) => chunk.symbol.startsWith("Calculator")).length).toBeGreaterThan(1);
  });
});

describe("comments and decorators", () => {
  it("stay with the definition below them", async () => {
    const content = [
      'import { Component, HostListener, Input } from "@angular/core";',
      "",
      '@Component({ selector: "app-cart" })',
      "export class CartComponent {",
      "  @Input() items: string[] = [];",
      "",
      "  /**",
      "   * Clears the cart.",
      "   */",
      '  @HostListener("window:clear")',
      "  clear(): void {",
      "    this.items = [];",
      "    this.items.length = 0;",
      "  }",
      "",
      "  /** Adds an item. */",
      "",
      "  add(item: string): void {",
      "    this.items.push(item);",
      "    this.items.sort();",
      "  }",
      "}",
    ].join("\n");
    const chunks = await chunkFile("cart.component.ts", content, { maxTokens: 50 });
    expectValidChunks(content, chunks, 50);
    expect(chunks.length).toBeGreaterThan(2);
    expectWhole(
      chunks,
      "CartComponent > clear",
      lineOf(content, "/**"),
      lineOf(content, "this.items.length = 0;") + 1,
    );
    expectWhole(
      chunks,
      "CartComponent > add",
      lineOf(content, "/** Adds an item. */"),
      lineOf(content, "sort()") + 1,
    );
    expect(chunkHolding(chunks, 3, 4).text.startsWith('@Component({ selector: "app-cart" })')).toBe(true);
  });
});

describe("small definitions", () => {
  const functions = Array.from({ length: 10 }, (_, i) => `def f${i}(x):\n    return x + ${i}\n`);
  const content = `${functions.join("\n\n")}`;

  it("are merged into one chunk at top level when they all fit", async () => {
    const chunks = await chunkFile("small.py", content);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.symbol).toBe("");
    expectValidChunks(content, chunks);
  });

  it("are merged greedily up to the budget and never cut", async () => {
    const chunks = await chunkFile("small.py", content, { maxTokens: 40, minTokens: 0 });
    expectValidChunks(content, chunks, 40, 0);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(10);
    for (let i = 0; i < 10; i++) {
      const start = lineOf(content, `def f${i}(`);
      chunkHolding(chunks, start, start + 1);
    }
    for (const chunk of chunks) {
      const count = (chunk.text.match(/^def /gm) ?? []).length;
      expect(chunk.symbol).toBe(count === 1 ? (/^def (f\d+)/m.exec(chunk.text)?.[1] ?? "?") : "");
    }
  });

  it("a class that fits stays one chunk named after it", async () => {
    const file = fixture("invoice.py").split("\n");
    const content = [
      "import math",
      "",
      "",
      ...file.slice(lineOf(fixture("invoice.py"), "class Invoice:") - 1),
    ].join("\n");
    const chunks = await chunkFile("invoice.py", content, { maxTokens: 200 });
    expectValidChunks(content, chunks, 200);
    expectWhole(chunks, "Invoice", lineOf(content, "class Invoice:"), lineOf(content, "return math.ceil"));
    // Next to another definition of similar size the class keeps its lines whole but shares the chunk.
    const all = await chunkFile("invoice.py", fixture("invoice.py"), { maxTokens: 200 });
    chunkHolding(
      all,
      lineOf(fixture("invoice.py"), "class Invoice:"),
      lineOf(fixture("invoice.py"), "return math.ceil"),
    );
  });
});

describe("markdown", () => {
  const content = fixture("README.md");

  it("chunks by headings, nested headings forming the symbol path", async () => {
    const chunks = await chunkFile("README.md", content, { maxTokens: 40 });
    expectValidChunks(content, chunks, 40);
    expect(chunks.every((chunk) => chunk.language === "markdown")).toBe(true);
    const at = (needle: string) =>
      chunkHolding(chunks, lineOf(content, needle), lineOf(content, needle)).symbol;
    expect(at("# Umbra")).toBe("Umbra");
    expect(at("You need Node 20")).toBe("Umbra > Install");
    expect(at("### From source")).toBe("Umbra > Install > From source");
    expect(at("Run `npm i -g umbra`.")).toBe("Umbra > Install > From npm");
    expect(at("Run `umbra index`")).toBe("Umbra > Usage");
    // A "#" line inside fenced code is not a heading.
    expect(at("# not a heading")).toBe("Umbra > Install > From source");
    expect(chunks.some((chunk) => chunk.symbol.includes("not a heading"))).toBe(false);
  });

  it("keeps a section whole with its heading when it fits", async () => {
    const chunks = await chunkFile("README.md", content, { maxTokens: 60 });
    expectWhole(
      chunks,
      "Umbra > Install",
      lineOf(content, "## Install"),
      lineOf(content, "Run `npm i -g umbra`."),
    );
  });

  it("reads ATX and setext headings, not thematic breaks, and chunks heading-less text", async () => {
    const doc = [
      "Intro text.",
      "",
      "---",
      "",
      "## Closed ##",
      "",
      "Body.",
      "",
      "Title",
      "=====",
      "",
      "More.",
    ].join("\n");
    const chunks = await chunkFile("doc.md", doc, { maxTokens: 8, minTokens: 0 });
    expectValidChunks(doc, chunks, 8, 0);
    const at = (needle: string) => chunkHolding(chunks, lineOf(doc, needle), lineOf(doc, needle)).symbol;
    expect(at("Intro text.")).toBe("");
    expect(at("Body.")).toBe("Closed");
    expect(at("More.")).toBe("Title");
    const plain = await chunkFile("plain.md", "Just a note.\n\nAnother one.\n");
    expect(plain.map((chunk) => chunk.symbol)).toEqual([""]);
  });

  it("reads headings whatever their blanks, and hostile heading lines at once", async () => {
    const doc = "# a#\n\ntext\n\n#    Spaced   title   ##  \n\nbody\n\n#\n\nz\n\n# Line\u2028sep\n\nq\n";
    const chunks = await chunkFile("doc.md", doc, { maxTokens: 8, minTokens: 0 });
    expect(chunks.map((chunk) => chunk.symbol)).toEqual(["a#", "Spaced title", ""]);
    // The heading pattern went back over a long run of blanks from each of its characters: seconds for a
    // title with 100,000 blanks in it, cubic (minutes) for blanks before a line separator.
    const long = await chunkFile("long.md", `# x${" ".repeat(150_000)}y\n`);
    expect(long.map((chunk) => chunk.symbol)).toEqual(["x y"]);
    const separated = await chunkFile("separated.md", `#\t${" ".repeat(4_000)}\u2028x\n`);
    expect(separated.map((chunk) => chunk.symbol)).toEqual([""]);
  }, 10_000);

  it("splits a big section by paragraphs, later pieces carrying the heading", async () => {
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) => `Paragraph ${i} explains one more detail of the install, with words to fill it up.`,
    );
    const doc = ["# Guide", "", "## Install", "", paragraphs.join("\n\n"), "", "## Next", "", "Done."].join(
      "\n",
    );
    const chunks = await chunkFile("guide.md", doc, { maxTokens: 60 });
    expectValidChunks(doc, chunks, 60);
    const pieces = chunks.filter((chunk) => chunk.symbol === "Guide > Install");
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) {
      const own = piece.text.split("\n");
      // Pieces end at paragraph ends: the next line is blank.
      expect(doc.split("\n")[piece.endLine] ?? "").toBe("");
      if (piece !== pieces[0]) expect(own.slice(0, 2)).toEqual(["# Guide", "## Install"]);
    }
    expect(chunkHolding(chunks, lineOf(doc, "Done."), lineOf(doc, "Done.")).symbol).toBe("Guide > Next");
  });
});

describe("text files", () => {
  const paragraphs = Array.from({ length: 20 }, (_, p) =>
    Array.from({ length: 3 }, (_, l) => `Paragraph ${p} line ${l} has a few words in it.`).join("\n"),
  );
  const content = `${paragraphs.join("\n\n")}\n`;

  it("are chunked by lines within budget, breaking at blank lines", async () => {
    const chunks = await chunkFile("notes.txt", content, { maxTokens: 80 });
    expectValidChunks(content, chunks, 80);
    expect(chunks.length).toBeGreaterThan(3);
    const lines = content.split("\n");
    for (const chunk of chunks) {
      expect(chunk.language).toBe("text");
      expect(chunk.symbol).toBe("");
      expect(lines[chunk.startLine - 2] ?? "").toBe("");
      expect(lines[chunk.endLine] ?? "").toBe("");
    }
  });

  it("lineChunks gives the same chunks without a syntax tree", async () => {
    expect(lineChunks("notes.txt", content, { maxTokens: 80 })).toEqual(
      await chunkFile("notes.txt", content, { maxTokens: 80 }),
    );
  });

  it("split a long paragraph-less text by lines", async () => {
    const log = Array.from({ length: 200 }, (_, i) => `2024-01-01T00:00:${i} INFO request ${i} served`).join(
      "\n",
    );
    const chunks = await chunkFile("server.log", log, { maxTokens: 100 });
    expectValidChunks(log, chunks, 100);
    expect(chunks.length).toBeGreaterThan(10);
  });

  it("chunks a file of unknown type as text", async () => {
    const chunks = await chunkFile("Makefile", "all:\n\tcc -o app main.c\n");
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ language: "text", startLine: 1, endLine: 2, symbol: "" });
  });
});

describe("robustness", () => {
  it("gives no chunks for empty or blank files", async () => {
    for (const path of ["a.py", "a.ts", "a.md", "a.txt"]) {
      expect(await chunkFile(path, "")).toEqual([]);
      expect(await chunkFile(path, "\n\n   \n\t\n")).toEqual([]);
      expect(await chunkFile(path, "\r\n\r\n")).toEqual([]);
    }
  });

  it("gives no chunks for files never to be chunked", async () => {
    expect(await chunkFile("package-lock.json", '{"name": "x"}')).toEqual([]);
    expect(await chunkFile("dist/app.min.js", "var a=1;")).toEqual([]);
  });

  it("cuts a single huge minified line by characters", async () => {
    const statements = Array.from({ length: 20_000 }, (_, i) => `a${i}=b(${i},"x${i}")`);
    const line = `var ${statements.join(",")};`;
    const chunks = await chunkFile("bundle.js", line, { maxTokens: 400 });
    expect(chunks.length).toBeGreaterThan(100);
    expect(chunks.map((chunk) => chunk.text).join("")).toBe(line);
    for (const chunk of chunks) {
      expect(chunk.startLine).toBe(1);
      expect(chunk.endLine).toBe(1);
      expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(400);
      expect(chunk.hash).toBe(sha256(chunk.text));
    }
  });

  it("cuts a huge word without whitespace or punctuation", async () => {
    const blob = "A".repeat(100_000);
    const chunks = await chunkFile("data.txt", `header\n\n${blob}\n\nfooter\n`, { maxTokens: 50 });
    expect(
      chunks
        .filter((chunk) => chunk.startLine === 3)
        .map((chunk) => chunk.text)
        .join(""),
    ).toBe(blob);
    expect(chunks[0]?.text).toBe("header");
    expect(chunks[chunks.length - 1]?.text).toBe("footer");
  });

  it("keeps a long line inside a source file without losing the rest", async () => {
    const data = `TABLE = [${Array.from({ length: 3000 }, (_, i) => i).join(", ")}]`;
    const content = ["import os", "", data, "", "def after():", "    return TABLE", ""].join("\n");
    const chunks = await chunkFile("table.py", content, { maxTokens: 100 });
    expectValidChunks(content, chunks, 100);
    expect(
      chunks
        .filter((chunk) => chunk.startLine === 3)
        .map((chunk) => chunk.text)
        .join(""),
    ).toBe(data);
    expectWhole(chunks, "after", 5, 6);
  });

  it("gives up a parse that runs past its budget, chunks that file by lines, and parses the next one", async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `def f${i}(x):\n    return x + ${i}\n`).join("\n");
    const givenUp = await chunkFile("steps.py", text, { parseBudgetMs: 0 });
    expectValidChunks(text, givenUp);
    expect(givenUp.map((chunk) => [chunk.startLine, chunk.endLine, chunk.symbol, chunk.defines])).toEqual(
      lineChunks("steps.py", text, {}, "python").map((chunk) => [chunk.startLine, chunk.endLine, "", []]),
    );
    // the stopped parse does not resume on the next file: it is read whole, by its syntax
    const parsed = await chunkFile("steps.py", text);
    expect(parsed.flatMap((chunk) => chunk.defines)).toEqual(Array.from({ length: 3000 }, (_, i) => `f${i}`));
  });

  it("budgets a parse by the text's length", () => {
    expect(parseBudgetMs(0)).toBe(2_000);
    expect(parseBudgetMs(4 * 1024 * 1024)).toBeCloseTo(2_000 + 41_943, 0);
  });

  it("handles CRLF line endings exactly like LF", async () => {
    for (const file of ["invoice.py", "app.ts", "README.md"]) {
      const lf = fixture(file);
      const crlf = lf.replace(/\n/g, "\r\n");
      const a = await chunkFile(file, lf, { maxTokens: 60 });
      const b = await chunkFile(file, crlf, { maxTokens: 60 });
      expect(b).toEqual(a);
      expectValidChunks(crlf, b, 60);
      expect(b.some((chunk) => chunk.text.includes("\r"))).toBe(false);
    }
  });

  it("chunks files with syntax errors", async () => {
    const python = [
      "import os",
      "",
      "",
      "def good_before(x):",
      "    return x + 1",
      "",
      "",
      "def broken(x:",
      "    if x >",
      "        return [1, 2",
      "    y = {",
      "    return y",
      "",
      "",
      "class After:",
      "    def method(self):",
      "        return 42",
      "",
    ].join("\n");
    const chunks = await chunkFile("broken.py", python, { maxTokens: 30 });
    expectValidChunks(python, chunks, 30);
    expectWhole(chunks, "good_before", 4, 5);

    const ts = [
      'import { a } from "./a.js";',
      "",
      "export function first(x: number): number {",
      "  return x + 1;",
      "}",
      "",
      "export function broken(x: number {",
      "  if (x > ) {",
      "    return [1, 2;",
      "  }",
      "",
      "export class After {",
      "  method(): number {",
      "    return 42;",
      "  }",
      "}",
    ].join("\n");
    const tsChunks = await chunkFile("broken.ts", ts, { maxTokens: 30 });
    expectValidChunks(ts, tsChunks, 30);
    expectWhole(tsChunks, "first", 3, 5);
  });

  it("survives deeply nested code", async () => {
    const depth = 3000;
    const content = `const deep = ${"[\n".repeat(depth)}1${"\n]".repeat(depth)};\n`;
    const chunks = await chunkFile("deep.js", content, { maxTokens: 200 });
    expectValidChunks(content, chunks, 200);
  });

  it("strips a byte order mark", async () => {
    const chunks = await chunkFile("a.py", "\uFEFFimport os\n");
    expect(chunks[0]?.text).toBe("import os");
  });

  it("chunks many files concurrently", async () => {
    const files = CASES.map((c) => c.file);
    const results = await Promise.all(files.map((file) => chunkFile(file, fixture(file), { maxTokens: 60 })));
    const again = await Promise.all(files.map((file) => chunkFile(file, fixture(file), { maxTokens: 60 })));
    expect(results).toEqual(again);
  });
});

describe("hashes", () => {
  it("are the sha256 of the text; identical content gives identical hashes", async () => {
    const content = fixture("lib.rs");
    const a = await chunkFile("a/lib.rs", content, { maxTokens: 60 });
    const b = await chunkFile("b/lib.rs", content, { maxTokens: 60 });
    expect(a.map((chunk) => chunk.hash)).toEqual(b.map((chunk) => chunk.hash));
    for (const chunk of a) expect(chunk.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(a.map((chunk) => chunk.hash)).size).toBe(a.length);
  });

  it("change only for the chunks whose text changed", async () => {
    const content = fixture("lib.rs");
    const edited = content.replace("net * (1.0 + TAX_RATE)", "net * (1.0 + TAX_RATE) + 0.5");
    const before = await chunkFile("lib.rs", content, { maxTokens: 60 });
    const after = await chunkFile("lib.rs", edited, { maxTokens: 60 });
    expect(after).toHaveLength(before.length);
    const changed = after.filter((chunk, i) => chunk.hash !== before[i]?.hash);
    expect(changed.map((chunk) => chunk.symbol)).toEqual(["Invoice > total"]);
  });

  it("do not depend on the file's position or path: a moved function keeps its hash", async () => {
    const fn = "def helper(x):\n    return x * 2";
    const a = await chunkFile("a.py", `${fn}\n`);
    const b = await chunkFile(
      "b.py",
      `import os\n\n\n# unrelated\nVALUE = os.sep * 40 + "${"x".repeat(200)}"\n\n\n${fn}\n`,
      {
        maxTokens: 20,
      },
    );
    const hash = (chunks: Chunk[]) => chunks.find((chunk) => chunk.symbol === "helper")?.hash;
    expect(a).toHaveLength(1);
    expect(hash(a)).toBe(sha256(fn));
    expect(hash(b)).toBe(sha256(fn));
  });
});

describe("larger files", () => {
  it("chunks a 1,000-line file of many classes validly", async () => {
    const parts: string[] = ['import { readFile } from "node:fs/promises";', ""];
    for (let c = 0; parts.length < 1000; c++) {
      parts.push(`export class Service${c} {`, "  private cache = new Map<string, number>();", "");
      for (let m = 0; m < 6; m++) {
        parts.push(
          `  async method${m}(key: string): Promise<number> {`,
          "    const hit = this.cache.get(key);",
          "    if (hit !== undefined) return hit;",
          `    const value = Number(await readFile(key, "utf8")) * ${m};`,
          "    this.cache.set(key, value);",
          "    return value;",
          "  }",
          "",
        );
      }
      parts.push("}", "");
    }
    const content = parts.join("\n");
    const chunks: Chunk[] = await chunkFile("service.ts", content);
    expectValidChunks(content, chunks);
  });
});
