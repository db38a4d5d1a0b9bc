import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  findGitDir,
  findGlobalExcludesFile,
  parseIgnoreFile,
  rebasePattern,
  umbraIgnoreMatcher,
} from "../../src/workspace/ignore-rules.js";
import { cleanupTemp, hasGit, makeTemp, writeTree } from "./helpers.js";

afterEach(cleanupTemp);

describe("rebasePattern", () => {
  it("keeps root patterns as they are and drops comments and blank lines", () => {
    expect(rebasePattern("*.log", "")).toBe("*.log");
    expect(rebasePattern("# note", "sub")).toBeUndefined();
    expect(rebasePattern("   ", "sub")).toBeUndefined();
    expect(rebasePattern("", "")).toBeUndefined();
  });

  it("makes unanchored patterns match at any depth below their folder", () => {
    expect(rebasePattern("*.log", "sub")).toBe("sub/**/*.log");
    expect(rebasePattern("logs/", "a/b")).toBe("a/b/**/logs/");
    expect(rebasePattern("!keep.log", "sub")).toBe("!sub/**/keep.log");
  });

  it("anchors patterns with a leading or inner slash to their folder", () => {
    expect(rebasePattern("/build", "sub")).toBe("sub/build");
    expect(rebasePattern("a/b", "sub")).toBe("sub/a/b");
    expect(rebasePattern("**/x", "sub")).toBe("sub/**/x");
    expect(rebasePattern("!/x/", "sub")).toBe("!sub/x/");
  });

  it("escapes glob characters in the folder name and strips trailing spaces and CR", () => {
    expect(rebasePattern("x", "a[1]*")).toBe("a\\[1\\]\\*/**/x");
    expect(rebasePattern("x", "#dir")).toBe("\\#dir/**/x");
    expect(rebasePattern("x  \r", "s")).toBe("s/**/x");
    expect(rebasePattern("x\\ ", "s")).toBe("s/**/x\\ ");
  });

  it("reads a line as git does at the root too: spaces escaped or not, and a NUL ending it", () => {
    expect(rebasePattern("x  ", "")).toBe("x");
    expect(rebasePattern("x\\   ", "")).toBe("x\\ ");
    // the backslash is escaped, not the space after it
    expect(rebasePattern("x\\\\ ", "")).toBe("x\\\\");
    expect(rebasePattern("x \\", "")).toBe("x \\");
    // git reads the line as a C string
    expect(rebasePattern("secret\0junk ", "")).toBe("secret");
    expect(rebasePattern("secret \0junk", "s")).toBe("s/**/secret");
  });

  it("marks each parsed pattern with its source and ignores a BOM", () => {
    expect(parseIgnoreFile("\ufeff*.a\r\n\n#c\n/b\n", "s", "s/.gitignore")).toEqual([
      { pattern: "s/**/*.a", mark: "s/.gitignore" },
      { pattern: "s/b", mark: "s/.gitignore" },
    ]);
  });
});

describe("findGlobalExcludesFile", () => {
  it.skipIf(!hasGit())("uses core.excludesFile from the global git config, expanding ~", async () => {
    const home = makeTemp();
    writeTree(home, { gitconfig: "[core]\n\texcludesFile = ~/my-ignore\n" });
    const found = await findGlobalExcludesFile({
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_GLOBAL: join(home, "gitconfig"),
      GIT_CONFIG_NOSYSTEM: "1",
      XDG_CONFIG_HOME: join(home, "xdg"),
    });
    expect(found).toBe(join(home, "my-ignore"));
  });

  it("falls back to $XDG_CONFIG_HOME/git/ignore, then ~/.config/git/ignore", async () => {
    const home = makeTemp();
    writeTree(home, { gitconfig: "" });
    const base = {
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_GLOBAL: join(home, "gitconfig"),
      GIT_CONFIG_NOSYSTEM: "1",
    };
    expect(await findGlobalExcludesFile({ ...base, XDG_CONFIG_HOME: join(home, "xdg") })).toBe(
      join(home, "xdg", "git", "ignore"),
    );
    expect(await findGlobalExcludesFile(base)).toBe(join(home, ".config", "git", "ignore"));
  });

  it("works without git on the PATH", async () => {
    const home = makeTemp();
    expect(await findGlobalExcludesFile({ PATH: join(home, "no-bin"), HOME: home })).toBe(
      join(home, ".config", "git", "ignore"),
    );
  });
});

describe("findGitDir", () => {
  it("follows a .git file's gitdir line as git writes it, and a hostile one at once", async () => {
    const gitDirOf = async (text: string): Promise<string | undefined> => {
      const root = makeTemp();
      writeFileSync(join(root, ".git"), text);
      const found = await findGitDir(root);
      return found && relative(root, found.gitDir);
    };
    expect(await gitDirOf("gitdir: ../real/.git\n")).toBe("../real/.git");
    expect(await gitDirOf("gitdir: x\r\n")).toBe("x");
    expect(await gitDirOf("\ngitdir:   spaced path  \n")).toBe("spaced path");
    expect(await gitDirOf("gitdir:\n  next/line\n")).toBe("next/line");
    expect(await gitDirOf("nope\n")).toBeUndefined();
    // The path's end was looked for by reading the run of blanks again from each of them: seconds.
    const blanks = "\t".repeat(120_000);
    expect(await gitDirOf(`gitdir:r${blanks}i\n`)).toBe(`r${blanks}i`);
  }, 10_000);
});

describe("umbraIgnoreMatcher", () => {
  it("reads the ignore files of every folder above a path, never through a symlink", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".umbraignore": "*.secret\n",
      "a/b/c/.cursorignore": "private/\n",
      "a/b/c/private/x.py": "",
      "a/b/c/y.secret": "",
      "a/b/c/z.py": "",
      "elsewhere/.umbraignore": "*.py\n",
      "elsewhere/w.py": "",
    });
    mkdirSync(join(root, "l"));
    symlinkSync(join(root, "elsewhere", ".umbraignore"), join(root, "l", ".umbraignore"));
    writeFileSync(join(root, "l", "v.py"), "");
    symlinkSync(join(root, "elsewhere"), join(root, "linked"));
    const ignored = umbraIgnoreMatcher(root);
    expect(await ignored("a/b/c/private/x.py")).toBe(true);
    expect(await ignored("a/b/c/y.secret")).toBe(true);
    expect(await ignored("a/b/c/z.py")).toBe(false);
    expect(await ignored("elsewhere/w.py")).toBe(true);
    // a symlinked ignore file, or one in a folder reached through a symlink, is not read
    expect(await ignored("l/v.py")).toBe(false);
    expect(await ignored("linked/w.py")).toBe(false);
  });
});
