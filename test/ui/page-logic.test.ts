import { createTwoFilesPatch } from "diff";
import { describe, expect, it } from "vitest";
import { applyHunks, hunkCount } from "../../src/accept/index.js";
import { hunkNotes, placeLints } from "../../ui/src/annotate.js";
import { describeEvent } from "../../ui/src/describe.js";
import { type Hunk, parseDiff, unquotePath } from "../../ui/src/diff.js";
import type { Diagnostic, EngineEvent } from "../../ui/src/wire.js";

// The page's pure logic, run in Node: its reading of a branch diff must number hunks as the engine's
// per-hunk accept does (or a click on "Accept hunk 2" would write another hunk); one line per event;
// the review's notes per hunk from a session's events.

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

const at = "2026-01-01T00:00:00.000Z";
const event = (fields: Record<string, unknown>): EngineEvent => ({
  session: "s",
  workspace: "w",
  at,
  type: "tool",
  ...fields,
});

describe("describeEvent", () => {
  it("makes one short line of each kind of event", () => {
    expect(
      describeEvent(
        event({ phase: "call", name: "edit", input: { path: "a.ts", search: "x", replace: "y" } }),
      ),
    ).toBe("→ edit a.ts");
    expect(describeEvent(event({ phase: "result", name: "edit", ok: false, summary: "no match" }))).toBe(
      "← edit failed: no match",
    );
    expect(
      describeEvent(event({ type: "output", stream: "stdout", text: `${"x".repeat(500)}\n` })),
    ).toHaveLength(401);
    expect(describeEvent(event({ type: "usage", tokens: { input: 5, output: 2 }, cost: 0.5 }))).toBe(
      "usage 5 in / 2 out tokens $0.5000",
    );
    expect(describeEvent(event({ type: "lint", name: "edit", errors: 2 }))).toBe(
      "lint after edit: 2 error(s)",
    );
  });
});

describe("hunkNotes", () => {
  const diff = parseDiff(section("src/a.ts", BASE, BRANCH));
  const hunks = diff[0]?.hunks ?? [];
  const edit = (call: string, replace: string) =>
    event({ phase: "call", call, name: "edit", input: { path: "src/a.ts", search: "-", replace } });
  const run = (call: string, command: string) =>
    event({ phase: "call", call, name: "run_command", input: { command } });
  const lint = (call: string, errors: number) => event({ type: "lint", call, name: "edit", errors });

  it("gives each hunk the lint errors of the edit that wrote it, and whether a command ran after the last edit", () => {
    const events = [
      edit("c1", "line three"),
      lint("c1", 2),
      edit("c2", "line 20.5"),
      lint("c2", 0),
      run("c3", "npm test"),
    ];
    const notes = hunkNotes(events, "src/a.ts", hunks);
    expect(notes[0]).toEqual({ lintErrors: 2, ranAfter: "npm test", untested: false });
    expect(notes[1]).toEqual({ lintErrors: 0, ranAfter: "npm test", untested: false });
    // hunk 3 removes a line: no edit wrote text of it, so the file's last edit answers for it
    expect(notes[2]).toEqual({ lintErrors: 0, ranAfter: "npm test", untested: false });
  });

  it("says when nothing ran after the last edit, and says nothing for a file no edit touched", () => {
    const events = [run("c0", "npm test"), edit("c1", "line three"), lint("c1", 1)];
    expect(hunkNotes(events, "src/a.ts", hunks)[0]).toEqual({ lintErrors: 1, untested: true });
    expect(hunkNotes(events, "other.ts", hunks)[0]).toEqual({ untested: false });
  });
});

describe("placeLints", () => {
  const hunks = parseDiff(section("src/a.ts", BASE, BRANCH))[0]?.hunks ?? [];
  const diagnostic = (line: number, severity: Diagnostic["severity"] = "error", path = "src/a.ts") => ({
    path,
    line,
    endLine: line,
    severity,
    message: `problem at ${line}`,
  });

  it("puts each introduced error on the hunk that shows its line in the branch, the rest apart", () => {
    expect(hunks).toHaveLength(3);
    // line 3 is hunk 1's change, line 21 the line hunk 2 added, line 12 no hunk shows
    const placed = placeLints(
      [
        diagnostic(3),
        diagnostic(21),
        diagnostic(12),
        diagnostic(3, "warning"),
        diagnostic(3, "error", "src/b.ts"),
      ],
      "src/a.ts",
      hunks,
    );
    expect(placed.byHunk.map((errors) => errors.map((e) => e.line))).toEqual([[3], [21], []]);
    expect(placed.outside.map((e) => e.line)).toEqual([12]);
  });

  it("places an error that spans lines on the first hunk it overlaps", () => {
    const spanning = { ...diagnostic(8), endLine: 18 };
    expect(placeLints([spanning], "src/a.ts", hunks).byHunk.map((errors) => errors.length)).toEqual([
      0, 1, 0,
    ]);
  });
});
