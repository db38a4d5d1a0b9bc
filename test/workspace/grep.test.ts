import { execFileSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { grep } from "../../src/workspace/grep.js";
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
    expect(matches.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line))).toEqual([
      // a line with a line separator (or a carriage return) in it is not read, as before
      { path: "", line: 0, text: "" },
      { path: "a.txt", line: 1, text: "one needle" },
      { path: "a.txt", line: 2, text: "needle: two:3: colons" },
    ]);
  }, 10_000);
});
