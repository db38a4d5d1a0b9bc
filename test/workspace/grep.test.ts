import { execFileSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type GrepMatch, grep, parseRipgrep } from "../../src/workspace/grep.js";
import { cleanupTemp, hasGit, makeTemp, writeTree } from "./helpers.js";

afterEach(cleanupTemp);

/** `fn` run with a PATH that holds git and no ripgrep, so grep falls back to git grep. */
async function withoutRipgrep<T>(fn: () => Promise<T>): Promise<T> {
  const bin = makeTemp("umbra-bin-");
  symlinkSync(execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(), join(bin, "git"));
  const path = process.env.PATH;
  process.env.PATH = bin;
  try {
    return await fn();
  } finally {
    process.env.PATH = path;
  }
}

describe.skipIf(!hasGit())("grep through git grep (no ripgrep)", () => {
  it("reads git grep's lines, and a hostile line at once", async () => {
    const root = makeTemp();
    // A long line of `:0:` ending in a line separator: the line's pattern looked for its end after every
    // `:0:` (seconds for a line of a megabyte).
    writeTree(root, {
      "a.txt": "one needle\nneedle: two:3: colons\n",
      "b.txt": `needle${":0:".repeat(350_000)}\u2028\n`,
    });
    execFileSync("git", ["init", "-q"], { cwd: root });
    const matches = await withoutRipgrep(() => grep(root, "needle", { fixed: true }));
    expect(matches.sort(byPlace)).toEqual([
      { path: "a.txt", line: 1, text: "one needle" },
      { path: "a.txt", line: 2, text: "needle: two:3: colons" },
      { path: "b.txt", line: 1, text: `needle${":0:".repeat(350_000)}\u2028` },
    ]);
  }, 10_000);

  it("reads lines that end in CRLF and files whose names hold `:N:` or a newline", async () => {
    const root = makeTemp();
    writeTree(root, {
      "crlf.txt": "x needle\r\nno\r\nneedle two\r\n",
      "we:1:ird.txt": "needle\n",
      "new\nline.txt": "a needle\n",
      "é.txt": "needle é\n",
    });
    execFileSync("git", ["init", "-q"], { cwd: root });
    const matches = await withoutRipgrep(() => grep(root, "needle", { fixed: true }));
    expect(matches.sort(byPlace)).toEqual([
      { path: "crlf.txt", line: 1, text: "x needle" },
      { path: "crlf.txt", line: 3, text: "needle two" },
      { path: "new\nline.txt", line: 1, text: "a needle" },
      { path: "we:1:ird.txt", line: 1, text: "needle" },
      { path: "é.txt", line: 1, text: "needle é" },
    ]);
    // ripgrep reads them the same way
    expect((await grep(root, "needle", { fixed: true })).sort(byPlace)).toEqual(matches.sort(byPlace));
  });
});

describe("parseRipgrep", () => {
  const event = (data: object) => JSON.stringify({ type: "match", data });

  it("reads a line that is not UTF-8 from its bytes, and leaves out a file whose name is not UTF-8", () => {
    const stdout = [
      event({
        path: { text: "./a.txt" },
        line_number: 4,
        lines: { bytes: Buffer.from("caf\xe9 ok\n", "latin1").toString("base64") },
      }),
      event({
        path: { bytes: Buffer.from("b\xff.txt", "latin1").toString("base64") },
        line_number: 1,
        lines: { text: "x\n" },
      }),
      JSON.stringify({ type: "begin", data: { path: { text: "c.txt" } } }),
      '{"type":"match","data":{"path":{"text":"cut',
    ].join("\n");
    expect(parseRipgrep(stdout)).toEqual([{ path: "a.txt", line: 4, text: "caf\ufffd ok" }]);
  });
});

function byPlace(a: GrepMatch, b: GrepMatch): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line;
}
