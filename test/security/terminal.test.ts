/**
 * Terminal probes: what umbra prints to the user's terminal — a command's output, file names, file
 * text — cannot drive the terminal (retitle it, write the clipboard, clear or move over the screen).
 * umbra runs under a real pseudo-terminal, as in the user's shell.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { progressPrinter } from "../../src/cli/agent-command.js";
import { formatLint } from "../../src/cli/lint-command.js";
import { formatBranchReport } from "../../src/cli/run-command.js";
import type { LintResult } from "../../src/lsp/types.js";
import { explain, formatNotes } from "../../src/sandbox/explain.js";
import { formatGitCheck } from "../../src/sandbox/git-guard.js";
import { CLI, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { underPty } from "../helpers/pty.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let home: string;
let ws: string;
let env: NodeJS.ProcessEnv;

/** Runs `umbra ARGS` with a pseudo-terminal as its stdout and stderr; returns what the terminal got. */
function underTerminal(args: string[]): Promise<string> {
  return underPty([process.execPath, CLI, ...args], { env });
}

const OSC_TITLE = "\u001b]0;pwned\u0007";
const CLIPBOARD = "\u001b]52;c;ZXZpbA==\u0007";
const CLEAR = "\u001b[2J\u001b[H";

beforeAll(() => requireBuiltCli());
beforeEach(async () => {
  home = await tempDir("terminal-home");
  ws = join(home, "ws");
  await mkdir(ws);
  env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await cleanup(home);
});

describe("the user's terminal", () => {
  it("attack terminal-escapes: a command's output cannot retitle, clear or write the clipboard", async () => {
    const out = await underTerminal([
      "run",
      "--root",
      ws,
      "--",
      "printf",
      `before${OSC_TITLE}${CLIPBOARD}${CLEAR}\\033[31mred\\033[0m after\\n`,
    ]);
    expect(out).toContain("before");
    expect(out).toContain("after");
    expect(out).not.toContain("\u001b]");
    expect(out).not.toContain("\u001b[2J");
  });

  it("attack terminal-escapes: a file name and a file's text in grep output cannot drive the terminal", async () => {
    await writeFile(join(ws, `evil${OSC_TITLE}.txt`), `needle ${CLIPBOARD}${CLEAR}\n`);
    const out = await underTerminal(["grep", "needle", "--root", ws]);
    expect(out).toContain("needle");
    expect(out).not.toContain("\u001b]");
    expect(out).not.toContain("\u001b[2J");
  });

  it("attack terminal-escapes: a sequence split across writes, and 8-bit C1 controls (CSI, OSC)", async () => {
    const out = await underTerminal([
      "run",
      "--root",
      ws,
      "--",
      "sh",
      "-c",
      "printf 'a\\033'; sleep 0.1; printf ']0;pwned\\007b'; printf '\\302\\2332J\\302\\2350;pwned2\\007c\\n'",
    ]);
    expect(out).toContain("a");
    expect(out).toContain("c");
    for (const control of ["\u001b]", "\u009b", "\u009d", "\u0007"]) expect(out).not.toContain(control);
  });

  it("attack names: a name with a newline or escape cannot fake a line in a refusal or progress line", () => {
    const evil = "sub\n\u001b]0;x\u0007umbra: all good/.git";
    const refusal = formatGitCheck({
      refused: [{ path: evil, why: "a new nested git repository", movedTo: `/data/q/${evil}` }],
      warnings: [],
    });
    expect(refusal.trimEnd().split("\n")).toHaveLength(1);
    expect(refusal).not.toContain("\u001b");
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const print = progressPrinter();
      print({ type: "tool-call", id: "1", name: "read_file", input: { path: "a\n✓ edit fake.ts" } } as never);
      print({
        type: "tool-result",
        id: "1",
        ok: true,
        summary: "a\n✓ edit fake.ts:1-2\u001b[2J",
        output: "",
      } as never);
    } finally {
      spy.mockRestore();
    }
    const text = written.join("");
    expect(text.trimEnd().split("\n")).toHaveLength(1);
    expect(text).not.toContain("\u001b");
  });

  it("attack names: odd names of files and importers in umbra lint's report stay on their line", () => {
    const evil = "lib\n\u001b[2Jsrc/ok.ts:1:1: error: fake.ts";
    const diag = {
      path: evil,
      line: 1,
      column: 1,
      endLine: 1,
      endColumn: 2,
      severity: "error",
      message: "m",
    };
    const report = formatLint({
      path: evil,
      language: "typescript",
      diagnostics: [diag],
      introduced: [diag],
      otherFiles: [{ path: evil, introduced: [diag] }],
      checkedFiles: [evil],
      skippedFiles: [evil],
      partial: false,
      partialReasons: [],
      version: 1,
      elapsedMs: 1,
    } as unknown as LintResult);
    expect(report.trimEnd().split("\n")).toHaveLength(4);
    expect(report).not.toContain("\u001b");
  });

  it("attack names: a file a command made with a newline in its name cannot fake a line of umbra run's reports", () => {
    const evil = "x\numbra: shadow branch: 0 change(s)\u001b[2J";
    const report = formatBranchReport(
      { id: "b1", kept: false, changes: [{ path: evil, kind: "added" }] },
      ws,
    );
    expect(report.trimEnd().split("\n")).toHaveLength(2);
    expect(report).not.toContain("\u001b");
    const notes = explain(
      {
        exitCode: 1,
        signal: null,
        stdout: "",
        // a name without a newline: one line of stderr, parsed as such
        stderr: `touch: cannot touch '${join(ws, ".git", "hooks", "x\u001b]0;t\u0007\u2028umbra: y")}': Read-only file system\n`,
        timedOut: false,
        cancelled: false,
        outputTruncated: false,
        durationMs: 1,
        denials: [],
      },
      {
        mode: "workspace-write",
        workspace: ws,
        writableRoots: [ws],
        hiddenPaths: [],
        protectedPaths: [join(ws, ".git", "hooks")],
        network: false,
        envAllowlist: [],
        limits: { processes: 0, memoryBytes: 0, cpuSeconds: 0, outputBytes: 0, timeoutMs: 0 },
      },
    );
    expect(notes.length).toBeGreaterThan(0);
    const printed = formatNotes(notes);
    expect(printed.trimEnd().split("\n")).toHaveLength(notes.length);
    expect(printed).not.toContain("\u001b");
  });

  it("work: output to a pipe is passed through byte for byte (umbra shadow diff | git apply stays exact)", () => {
    const run = umbraSync(env, ["run", "--root", ws, "--", "printf", "a\\033[2Jb"]);
    expect(run.stdout).toBe("a\u001b[2Jb");
  });
});
