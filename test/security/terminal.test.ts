/**
 * Terminal probes: what umbra prints to the user's terminal — a command's output, file names, file
 * text — cannot drive the terminal (retitle it, write the clipboard, clear or move over the screen).
 * umbra runs under a real pseudo-terminal, as in the user's shell.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
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

  it("work: output to a pipe is passed through byte for byte (umbra shadow diff | git apply stays exact)", () => {
    const run = umbraSync(env, ["run", "--root", ws, "--", "printf", "a\\033[2Jb"]);
    expect(run.stdout).toBe("a\u001b[2Jb");
  });
});
