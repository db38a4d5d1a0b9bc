import { createTwoFilesPatch } from "diff";
import { describe, expect, it } from "vitest";
import { applyHunks, hunkCount } from "../../src/accept/index.js";
import { describeEvent } from "../../ui/src/describe.js";
import { type Hunk, parseDiff, unquotePath } from "../../ui/src/diff.js";

// The page's reading of a branch diff must number hunks as the engine's per-hunk accept does, or a click
// on "Accept hunk 2" would write another hunk.

const BASE = `${Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
const BRANCH = BASE.replace("line 3\n", "line three\n")
  .replace("line 20\n", "line 20\nline 20.5\n")
  .replace("line 38\n", "");

/** A file's section as src/shadow/diff.ts writes it: git's header, then the hunks. */
function section(path: string, base: string, branch: string): string {
  const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, base, branch, undefined, undefined, {
    context: 3,
  });
  return `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n${patch.split("\n").slice(2).join("\n").replace(/^/, `--- a/${path}\n+++ b/${path}\n`)}`;
}

/** `base` with the page's reading of one hunk applied: its old lines replaced by its new ones. */
function applyOne(base: string, hunk: Hunk): string {
  const lines = base.split("\n");
  const before = hunk.lines.filter((line) => line.kind === "context" || line.kind === "remove").length;
  const after = hunk.lines
    .filter((line) => line.kind === "context" || line.kind === "add")
    .map((line) => line.text);
  lines.splice(hunk.oldStart - 1, before, ...after);
  return lines.join("\n");
}

describe("parseDiff", () => {
  it("numbers each file's hunks as the engine's accept does, with the lines each one changes", () => {
    const files = parseDiff(section("src/a.ts", BASE, BRANCH) + section("b.txt", "x\n", "y\n"));
    expect(files.map((file) => file.path)).toEqual(["src/a.ts", "b.txt"]);
    const [a] = files;
    expect(a?.hunks.length).toBe(hunkCount(BASE, BRANCH));
    expect(a?.hunks.map((hunk) => hunk.number)).toEqual([1, 2, 3]);
    for (const hunk of a?.hunks ?? [])
      expect(applyOne(BASE, hunk), `hunk ${hunk.number}`).toBe(
        applyHunks("src/a.ts", BASE, BRANCH, [hunk.number]),
      );
    expect(a?.hunks[0]?.lines.find((line) => line.kind === "remove")).toMatchObject({
      text: "line 3",
      oldLine: 3,
    });
    expect(a?.hunks[1]).toMatchObject({ added: 1, removed: 0 });
    expect(a?.hunks[2]).toMatchObject({ added: 0, removed: 1 });
  });

  it("reads git's quoted names and the notes of files without hunks", () => {
    expect(unquotePath('"a/caf\\303\\251 \\"x\\".txt"')).toBe('a/café "x".txt');
    const files = parseDiff(
      'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"\nnew file mode 100644\nBinary files /dev/null and "b/caf\\303\\251.txt" differ\n',
    );
    expect(files).toEqual([
      {
        path: "café.txt",
        notes: ["new file mode 100644", 'Binary files /dev/null and "b/caf\\303\\251.txt" differ'],
        hunks: [],
      },
    ]);
  });

  it("takes a removed line that looks like a header as a removed line", () => {
    const [file] = parseDiff(section("x.md", "--- a\nkeep\n", "keep\n"));
    expect(file?.hunks[0]?.lines[0]).toMatchObject({ kind: "remove", text: "--- a" });
  });
});

describe("describeEvent", () => {
  it("makes one short line of an event's known fields", () => {
    expect(describeEvent({ type: "tool", session: "s", name: "edit", summary: "values.ts: 1 change" })).toBe(
      "tool edit values.ts: 1 change",
    );
    expect(describeEvent({ type: "output", chunk: `${"x".repeat(500)}\n` })).toHaveLength(
      401,
    );
    expect(describeEvent({ type: "usage", tokens: { input: 5, output: 2 }, cost: 0.5 })).toBe(
      "usage 5 in / 2 out tokens $0.5000",
    );
  });
});
