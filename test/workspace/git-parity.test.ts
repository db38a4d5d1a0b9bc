import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupTemp, hasGit, makeTemp, paths, scan, writeTree } from "./helpers.js";

/** `git ls-files --others --exclude-standard` in a repository isolated from the machine's git config. */
function gitFiles(root: string, home: string, setup?: () => void): string[] {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: join(home, "gitconfig"),
  };
  execFileSync("git", ["init", "-q"], { cwd: root, env });
  setup?.();
  const out = execFileSync("git", ["ls-files", "-z", "--others", "--exclude-standard"], { cwd: root, env });
  return out
    .toString("utf8")
    .split("\0")
    .filter((path) => path !== "")
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

describe.skipIf(!hasGit())("ignore semantics match git", () => {
  afterEach(cleanupTemp);

  it("lists the same files as git ls-files for a tricky tree", async () => {
    const root = makeTemp();
    const home = makeTemp();
    writeTree(home, { gitconfig: "" });
    writeTree(root, {
      ".gitignore": [
        "# comment",
        "*.log",
        "!important.log",
        "/top-only.txt",
        "generated/",
        "docs/**/draft-*.md",
        "**/cache",
        "tmp*",
        "\\#hash.txt",
        "trailing.txt   ",
        "a/**/b/c.txt",
        "*.o",
        "",
      ].join("\n"),
      "important.log": "x",
      "sub/important.log": "x",
      "sub/x.log": "x",
      "top-only.txt": "x",
      "sub/top-only.txt": "x",
      "generated/a.ts": "x",
      "pkg/generated/b.ts": "x",
      "pkg/.gitignore": "!generated/\n/local/\n*.txt\n!keep.txt\n",
      "pkg/local/c.ts": "x",
      "pkg/sub/local/d.ts": "x",
      "pkg/notes.txt": "x",
      "pkg/keep.txt": "x",
      "pkg/generated/x.o": "x",
      "docs/a/b/draft-1.md": "x",
      "docs/draft-2.md": "x",
      "docs/final.md": "x",
      "src/cache/e.ts": "x",
      cache: "a file called cache",
      tmpfile: "x",
      "src/tmp/f.ts": "x",
      "#hash.txt": "x",
      "trailing.txt": "x",
      "a/b/c.txt": "x",
      "a/x/y/b/c.txt": "x",
      "a/b/d.txt": "x",
      "deep/.gitignore": "*\n!*/\n!*.keep\n",
      "deep/one.keep": "x",
      "deep/one.drop": "x",
      "deep/inner/two.keep": "x",
      "deep/inner/two.drop": "x",
      "spaces dir/.gitignore": "*.x\n",
      "spaces dir/a.x": "x",
      "spaces dir/a.y": "x",
      "glob[1]/.gitignore": "z\n",
      "glob[1]/z": "x",
      "glob[1]/w": "x",
    });
    const expected = gitFiles(root, home);
    const result = await scan(root, { excludeDirs: [] });
    expect(paths(result)).toEqual(expected);
    expect(expected).toContain("pkg/generated/b.ts");
    expect(expected).not.toContain("pkg/notes.txt");
  });

  it("agrees with git on .git/info/exclude, the global excludes file and letter case", async () => {
    const root = makeTemp();
    const home = makeTemp();
    const globalFile = join(home, "global-ignore");
    writeTree(home, {
      gitconfig: `[core]\n\texcludesFile = ${globalFile}\n`,
      "global-ignore": "*.swp\n!keep.swp\n",
    });
    writeTree(root, {
      ".gitignore": "upper.txt\n!local.private\n",
      "a.swp": "x",
      "keep.swp": "x",
      "sub/b.swp": "x",
      "x.private": "x",
      "local.private": "x",
      "UPPER.TXT": "x",
      "upper.txt": "x",
      "src/main.ts": "x",
    });
    const expected = gitFiles(root, home, () => writeTree(root, { ".git/info/exclude": "*.private\n" }));
    const result = await scan(root, { globalExcludesFile: globalFile });
    expect(paths(result)).toEqual(expected);
    expect(expected).toEqual([".gitignore", "UPPER.TXT", "keep.swp", "local.private", "src/main.ts"]);
  });

  it("applies the enclosing repository's ignore rules when the root is a folder inside it", async () => {
    const repo = makeTemp();
    const home = makeTemp();
    writeTree(home, { gitconfig: "" });
    writeTree(repo, {
      ".gitignore": [
        "*.log",
        "!keep.log",
        "/packages/app/dist/",
        "/packages/*/generated/",
        "packages/other/",
        "/top.txt",
        "**/cache/",
        "**/tmp/*.bin",
      ].join("\n"),
      "packages/.gitignore": "/app/secret.txt\n*.tmp\n",
      "packages/app/src/main.ts": "x",
      "packages/app/x.log": "x",
      "packages/app/keep.log": "x",
      "packages/app/dist/out.js": "x",
      "packages/app/generated/g.ts": "x",
      "packages/app/secret.txt": "x",
      "packages/app/notes.tmp": "x",
      "packages/app/top.txt": "x",
      "packages/app/src/cache/c.ts": "x",
      "packages/app/tmp/a.bin": "x",
      "packages/app/tmp/a.txt": "x",
      "packages/app/.gitignore": "!x.log\n",
    });
    const root = join(repo, "packages", "app");
    const expected = gitFiles(repo, home, () => writeTree(repo, { ".git/info/exclude": "*.private\n" }))
      .filter((path) => path.startsWith("packages/app/"))
      .map((path) => path.slice("packages/app/".length));
    writeTree(root, { "z.private": "x" });
    const result = await scan(root, { globalExcludesFile: null, excludeDirs: [] });
    expect(paths(result)).toEqual(expected);
    expect(expected).toEqual([".gitignore", "keep.log", "src/main.ts", "tmp/a.txt", "top.txt", "x.log"]);
  });
});
