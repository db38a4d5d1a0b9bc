import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import type { Chunk } from "../../../src/index/chunk/index.js";
import { estimateTokens } from "../../../src/index/chunk/index.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture's content; fixtures carry a `.txt` suffix so that the project's tools leave them alone. */
export function fixture(name: string): string {
  return readFileSync(new URL(`${name}.txt`, FIXTURES), "utf8");
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** 1-based line number of the first line containing `needle`. */
export function lineOf(content: string, needle: string, from = 1): number {
  const lines = content.split(/\r?\n/);
  for (let i = from - 1; i < lines.length; i++) if (lines[i]?.includes(needle)) return i + 1;
  throw new Error(`not found: ${needle}`);
}

/**
 * The invariants every chunking must keep: in order, no overlap, every non-blank line covered, the text
 * ends with the chunk's own lines, the hash is the sha256 of the text, the size stays in budget.
 */
export function expectValidChunks(
  content: string,
  chunks: Chunk[],
  maxTokens = 400,
  minTokens = maxTokens / 8,
) {
  const lines = content.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/);
  const covered = new Array<boolean>(lines.length).fill(false);
  let previous: Chunk | undefined;
  for (const chunk of chunks) {
    expect(chunk.startLine).toBeGreaterThanOrEqual(1);
    expect(chunk.endLine).toBeGreaterThanOrEqual(chunk.startLine);
    expect(chunk.endLine).toBeLessThanOrEqual(lines.length);
    expect(chunk.hash).toBe(sha256(chunk.text));
    if (previous) {
      const samePieceLine =
        previous.startLine === previous.endLine &&
        chunk.startLine === chunk.endLine &&
        previous.endLine === chunk.startLine;
      if (!samePieceLine)
        expect(chunk.startLine, "chunks overlap or are out of order").toBeGreaterThan(previous.endLine);
    }
    const own = lines.slice(chunk.startLine - 1, chunk.endLine).join("\n");
    if (chunk.startLine === chunk.endLine && own.length > chunk.text.length) {
      expect(own.includes(chunk.text), "a piece of a long line is part of that line").toBe(true);
    } else {
      expect(
        chunk.text.endsWith(own),
        `chunk ${chunk.startLine}-${chunk.endLine} text ends with its lines`,
      ).toBe(true);
      if (chunk.text !== own) expect(chunk.text[chunk.text.length - own.length - 1]).toBe("\n");
    }
    expect(chunk.text.trim().length).toBeGreaterThan(0);
    expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(maxTokens + minTokens);
    for (let line = chunk.startLine; line <= chunk.endLine; line++) covered[line - 1] = true;
    previous = chunk;
  }
  lines.forEach((line, i) => {
    if (line.trim() !== "") expect(covered[i], `line ${i + 1} is covered: ${line}`).toBe(true);
  });
}

/** The chunk that holds lines [start, end] whole, asserting there is one. */
export function chunkHolding(chunks: Chunk[], start: number, end: number): Chunk {
  const found = chunks.find((chunk) => chunk.startLine <= start && chunk.endLine >= end);
  expect(found, `one chunk holds lines ${start}-${end}`).toBeDefined();
  return found as Chunk;
}

/** The definition spanning [start, end] lies whole in one chunk whose symbol is `symbol`. */
export function expectWhole(chunks: Chunk[], symbol: string, start: number, end: number) {
  const chunk = chunkHolding(chunks, start, end);
  expect(chunk.symbol, `symbol of the chunk holding lines ${start}-${end}`).toBe(symbol);
}
