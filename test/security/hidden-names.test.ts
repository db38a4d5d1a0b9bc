/**
 * Hidden-file probes through odd files a command (or a hostile checkout) can make: names that are not
 * UTF-8, ignore files that are FIFOs, and ignore files a command writes to un-hide a file for the next
 * command. Each `attack ...` probe is one way to read a hidden file or deny service; `work: ...` probes
 * are ordinary work that must keep working.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CliOutcome, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let home: string;
let ws: string;
let env: NodeJS.ProcessEnv;

/** `umbra run -- sh -c COMMAND` in the workspace (the user's folder). */
function run(command: string): CliOutcome {
  return umbraSync(env, ["run", "--root", ws, "--", "sh", "-c", command]);
}

beforeAll(() => requireBuiltCli());
beforeEach(async () => {
  home = await tempDir("hidden-names");
  ws = join(home, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
  writeFileSync(join(ws, ".umbraignore"), "*.key\n");
  writeFileSync(join(ws, "sub", "plain.txt"), "plain\n");
});
afterEach(async () => {
  await cleanup(home);
});

describe("hidden files behind odd names and odd ignore files", () => {
  it("attack odd-names: a match whose name is not UTF-8, or one in a folder whose name is not, stays hidden", () => {
    // names made from bytes (sh's printf), as a tarball or a command would make them
    execFileSync(
      "sh",
      [
        "-c",
        `printf 'SECRET_a\\n' > "sub/a$(printf '\\377').key" && mkdir "odd$(printf '\\376')" && printf 'SECRET_b\\n' > "odd$(printf '\\376')/b.key"`,
      ],
      { cwd: ws },
    );
    for (let round = 0; round < 2; round++) {
      // the second round runs on the cached walk
      const out = run("cat sub/* odd*/* 2>&1; true");
      expect(out.stdout + out.stderr).not.toMatch(/SECRET_/);
      expect(out.stdout).toContain("plain");
    }
  });

  it("attack odd-files: a FIFO named .umbraignore or .cursorignore does not hang the sandbox's start", () => {
    execFileSync("mkfifo", [join(ws, "sub", ".umbraignore"), join(ws, "sub", ".cursorignore")]);
    const out = run("cat sub/plain.txt");
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe("plain\n");
  });

  it("attack ignore-plant: a .umbraignore a command writes to un-hide a match is moved out after the run", () => {
    writeFileSync(join(ws, "sub", "x.key"), "SECRET_x\n");
    const planted = run("printf '!x.key\\n' > sub/.umbraignore");
    expect(planted.code, planted.stderr).toBe(0);
    expect(planted.stderr).toMatch(/sub\/\.umbraignore/);
    expect(existsSync(join(ws, "sub", ".umbraignore"))).toBe(false);
    const next = run("cat sub/x.key 2>&1; true");
    expect(next.stdout + next.stderr).not.toMatch(/SECRET_x/);
  });

  it("attack odd-files: a FIFO .gitignore a command leaves in the folder is moved out (umbra grep would hang on it)", () => {
    const made = run("mkfifo sub/.gitignore");
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toMatch(/sub\/\.gitignore/);
    expect(existsSync(join(ws, "sub", ".gitignore"))).toBe(false);
    const grep = umbraSync(env, ["grep", "plain", "--root", ws]);
    expect(grep.stdout).toContain("sub/plain.txt");
  });

  it("work: a .umbraignore a command writes that only hides more stays, and hides", () => {
    writeFileSync(join(ws, "sub", "notes.txt"), "NOTES\n");
    const made = run("printf 'notes.txt\n' > sub/.umbraignore");
    expect(made.code, made.stderr).toBe(0);
    expect(existsSync(join(ws, "sub", ".umbraignore"))).toBe(true);
    const next = run("cat sub/notes.txt 2>&1; cat sub/plain.txt");
    expect(next.stdout).not.toContain("NOTES");
    expect(next.stdout).toContain("plain");
  });

  it("work: the user's own nested .umbraignore still hides, and a non-matching file stays readable", () => {
    writeFileSync(join(ws, "sub", ".umbraignore"), "plain.txt\n");
    writeFileSync(join(ws, "sub", "other.txt"), "other\n");
    const out = run("cat sub/other.txt; cat sub/plain.txt 2>&1; true");
    expect(out.stdout).toContain("other");
    expect(out.stdout).not.toContain("plain\n");
    expect(existsSync(join(ws, "sub", ".umbraignore"))).toBe(true);
  });
});
