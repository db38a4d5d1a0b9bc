import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IgnoreRules, type SourcedPattern } from "../../src/workspace/ignore-match.js";
import { rebasePattern } from "../../src/workspace/ignore-rules.js";
import { cleanupTemp, hasGit, makeTemp } from "./helpers.js";

/**
 * The matcher against the authority: for every set of ignore files below, `git check-ignore --no-index -v`
 * over every path of one fixed tree (files and folders on disk, so git knows which is which), with and
 * without `core.ignoreCase`. Each pair must agree on whether the path is ignored and on the rule (file and
 * line) that decided.
 */

/** The tree: a path ending in `/` is a folder. Names hold every kind of character the patterns test. */
const TREE = [
  "foo",
  "Foo/",
  "FOO.TXT",
  "foo.txt",
  "bar/foo/x",
  "bar/foo.log",
  "bar/baz/foo",
  "a/b/c/d.txt",
  "a/b/x.txt",
  "a/b/bc",
  "a/x/b/c.txt",
  "a/x/y/b/c.txt",
  "a/bc",
  "a/bx/y/c",
  "a/a/a/a/x",
  "ab/c",
  "abc/x",
  "abcx",
  "abcd/e/x",
  "abcd/x",
  "A/B/c.TXT",
  "build/out.js",
  "src/build",
  "src/app.js",
  "src/lib/build/x.o",
  "src/tmp/x/y.bak",
  "logs/debug.log",
  "logs/a/b.log",
  "x.log",
  "important.log",
  "keep/important.log",
  "doc/notes.txt",
  "doc/server/arch.txt",
  "docs/_build/index.html",
  ".env",
  ".env.local",
  ".env.example",
  "sub/.env",
  "sub/dir/",
  "a b",
  "a ",
  "a\\",
  "a\\b",
  "#x",
  "!x",
  "x",
  "[ab]",
  "[x]/y",
  "x]",
  "*",
  "?",
  "-",
  "^",
  "é",
  "ü.txt",
  "Ünï/x",
  "y.Y",
  "z",
  "Z",
  "_",
  "\ty",
  "1.txt",
  "node_modules/pkg/index.js",
  "packages/app/dist/main.js",
  "packages/app/generated/g.ts",
];

/** Single patterns: each is a root .gitignore of its own, and is paired below. */
const PATTERNS = [
  "foo",
  "/foo",
  "foo/",
  "/foo/",
  "bar/foo",
  "bar/foo/",
  "**/foo",
  "**/foo/",
  "foo/**",
  "bar/**",
  "bar/**/",
  "bar/**/x",
  "**/x",
  "**/b/c.txt",
  "a/**/b",
  "a/**/b/c.txt",
  "a/**/c.txt",
  "a/**",
  "a/**/",
  "a/**/**/x",
  "a/*/c.txt",
  "a/*/*/c.txt",
  "a/*",
  "*/",
  "*",
  "/*",
  "*/*",
  "**",
  "/**",
  "***",
  "/***",
  "**/",
  "**/*",
  "**/**",
  "a/b**",
  "a/b**/c",
  "abc**/x",
  "abc**",
  "/abc**",
  "ab**c",
  "a**/x",
  "**a",
  "a/**b",
  "**\\/x",
  "a/**\\/c.txt",
  "a\\/b",
  "a/b/",
  "a/b/c/",
  "//foo",
  "foo//",
  "/",
  "!",
  "!/",
  "!!x",
  "*.log",
  "!important.log",
  "*.txt",
  "*.TXT",
  "*.[tT][xX][tT]",
  "[a-c]*",
  "[!a]*",
  "[^a]*",
  "[z-a]",
  "[z-a]*",
  "[Z-a]",
  "[a-]",
  "[-a]",
  "[]x]",
  "[!]]*",
  "[\\]]*",
  "x[\\]]",
  "[[:alpha:]]",
  "[[:digit:]]*",
  "[[:upper:]]",
  "[[:upper:]]*",
  "[[:lower:]]",
  "[[:punct:]]",
  "[[:space:]]y",
  "[[:cntrl:]]y",
  "[[:xdigit:]]",
  "[[:alnum:]]",
  "[[:blank:]]y",
  "[[:graph:]]",
  "[[:print:]]",
  "[![:alpha:]]",
  "[[:alpha:][:digit:]]*",
  "[a-[:digit:]]]",
  "[[:digit:]-z]",
  "[[::]]",
  "[[:bogus:]]*",
  "[[:alpha:]",
  "[[:]",
  "[[:]x",
  "[[]",
  "[a",
  "a[",
  "[",
  "[/]",
  "a[/]b",
  "[.]env",
  "[A-Z]*",
  "[F]*",
  "[f]oo",
  "\\F*",
  "\\f*",
  "\\",
  "a\\",
  "foo\\",
  "\\#x",
  "#x",
  "\\!x",
  "!x",
  "\\*",
  "\\?",
  "?",
  "??",
  "a?c",
  "?.txt",
  "??.txt",
  "é",
  "?",
  "[é]",
  "[é][é]",
  "Ü*/",
  "ü*",
  "a\\ ",
  "a  ",
  "a\\\\ ",
  "a\\   ",
  " a",
  "a b",
  "a\\b",
  "\\a",
  "foo/ ",
  ".env",
  ".env*",
  ".env.*",
  "*.o",
  "build/",
  "/build",
  "**/build",
  "src/**/build/",
  "**/tmp/**/*.bak",
  "docs/_build/",
  "node_modules/",
  "packages/*/generated/",
  "/packages/app/dist/",
  "x]",
  "-",
  "^",
  "_",
  "\\[ab\\]",
  "[[]ab]",
  "[x]/y",
  "\\[x\\]/",
  "foo\0bar",
  "f\0",
  "A/",
  "a/",
];

/** Sets of ignore files (path → lines), beyond the single patterns. */
const SETS: Record<string, string[]>[] = [
  { ".gitignore": ["*.log", "!important.log", "logs/"] },
  { ".gitignore": ["*", "!*/", "!*.txt"] },
  { ".gitignore": ["*", "!.gitignore", "!a/", "a/*", "!a/b/"] },
  { ".gitignore": ["/*", "!/foo", "/foo/*", "!/foo/bar"] },
  { ".gitignore": ["a/", "!a/b/c/d.txt"] },
  { ".gitignore": ["a/**", "!a/b/", "!a/b/**"] },
  { ".gitignore": ["**/b/", "!a/x/b/"] },
  { ".gitignore": [".env*", "!.env.example"] },
  { ".gitignore": ["*.txt", "!doc/**"] },
  { ".gitignore": ["doc/*", "!doc/server/"] },
  { ".gitignore": ["# comment", "", "   ", "\\#x", "foo   ", "bar/\r"] },
  { ".gitignore": ["\ufeff*.o", "abc"] },
  { ".gitignore": ["*.txt"], "a/.gitignore": ["!*.txt", "b/c"] },
  { ".gitignore": ["!x.txt"], "a/.gitignore": ["*.txt", "/x.txt"] },
  { "a/.gitignore": ["b", "!x.txt"], "a/b/.gitignore": ["!c"] },
  { "a/.gitignore": ["**/c.txt", "/**", "!/x/"] },
  { "a/.gitignore": ["*", "!*/", "!*.txt"] },
  { "bar/.gitignore": ["foo/", "/baz"], ".gitignore": ["!bar/foo"] },
  { "sub/.gitignore": [".env", "dir/"], "src/.gitignore": ["build", "/lib/**/x.o", "tmp/**"] },
  { "packages/.gitignore": ["/app/dist/", "*/generated/", "!app/generated/g.ts"] },
  { "[x]/.gitignore": ["y"] },
  { "Ünï/.gitignore": ["?"] },
  { ".gitignore": ["foo", "!foo", "foo/"] },
  { ".gitignore": ["/*", "!/a/", "/a/*", "!/a/b", "/a/b/*", "!/a/b/x.txt"] },
];

/** Exclusions and negations paired with each other: [e, !n] for each. */
const EXCLUDES = ["*", "a/", "*.txt", "**/b", "a/**", "/*", "*/", "[a-c]*", "abc**"];
const INCLUDES = ["*.txt", "a/b/", "a/**", "**/c.txt", "a/b/c", "*/", "abc/x", "x", "[!a]*"];

/** Pieces that random patterns are made of. */
const PIECES = [
  "a",
  "b",
  "c",
  "x",
  "ab",
  "foo",
  ".txt",
  "/",
  "/",
  "*",
  "**",
  "?",
  "[a-c]",
  "[!b]",
  "\\*",
  "!",
];

/** `count` sets of one to three lines of one to five pieces, from a seeded generator (always the same). */
function randomSets(count: number): Record<string, string[]>[] {
  let state = 7;
  const next = (below: number): number => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return Math.floor((state / 2_147_483_648) * below);
  };
  const line = (): string => Array.from({ length: 1 + next(5) }, () => PIECES[next(PIECES.length)]).join("");
  return Array.from({ length: count }, () => ({ ".gitignore": Array.from({ length: 1 + next(3) }, line) }));
}

function corpus(): Record<string, string[]>[] {
  const sets: Record<string, string[]>[] = PATTERNS.map((pattern) => ({ ".gitignore": [pattern] }));
  for (const exclude of EXCLUDES)
    for (const include of INCLUDES) sets.push({ ".gitignore": [exclude, `!${include}`] });
  // the same single patterns from a nested file
  for (const pattern of PATTERNS.slice(0, 60)) sets.push({ "a/.gitignore": [pattern] });
  return [...sets, ...SETS, ...randomSets(200)];
}

interface Verdict {
  ignored: boolean;
  mark: string | undefined;
}

const env = (home: string) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: join(home, "gitconfig"),
});

/** Every path of the tree and the folders that hold them, folders first, with whether each is a folder. */
function entries(): [string, boolean][] {
  const all = new Map<string, boolean>();
  for (const path of TREE) {
    const parts = path.replace(/\/$/, "").split("/");
    for (let i = 1; i < parts.length; i++) all.set(parts.slice(0, i).join("/"), true);
    all.set(parts.join("/"), path.endsWith("/") || all.get(parts.join("/")) === true);
  }
  return [...all];
}

/** git's verdict on each path: `source:line` of the deciding pattern, and whether it ignores. */
function gitVerdicts(root: string, home: string, paths: string[], ignoreCase: boolean): Verdict[] {
  const args = [
    "-c",
    `core.ignoreCase=${ignoreCase}`,
    "check-ignore",
    "--no-index",
    "-v",
    "-n",
    "-z",
    "--stdin",
  ];
  const run = spawnSync("git", args, {
    cwd: root,
    env: env(home),
    input: `${paths.join("\0")}\0`,
    maxBuffer: 64 * 1024 * 1024,
  });
  // 1: none of the paths is ignored
  if (run.status !== 0 && run.status !== 1) throw new Error(`git check-ignore: ${run.stderr}`);
  const fields = run.stdout.toString("utf8").split("\0");
  const verdicts: Verdict[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [source, line, pattern] = fields.slice(i, i + 3) as [string, string, string];
    verdicts.push(
      source === ""
        ? { ignored: false, mark: undefined }
        : { ignored: !pattern.startsWith("!"), mark: `${source}:${line}` },
    );
  }
  return verdicts;
}

/** Our verdict on each path, with the rules of every ignore file above it, rebased as the scan does. */
function ourVerdicts(
  files: Record<string, string[]>,
  paths: [string, boolean][],
  ignoreCase: boolean,
): Verdict[] {
  const folders = new Map<string, IgnoreRules>();
  const rulesOf = (folder: string): IgnoreRules => {
    const known = folders.get(folder);
    if (known) return known;
    const source = folder === "" ? ".gitignore" : `${folder}/.gitignore`;
    const lines = files[source] ?? [];
    const patterns: SourcedPattern[] = lines.flatMap((line, i) => {
      const pattern = rebasePattern(i === 0 ? line.replace(/^\ufeff/, "") : line, folder);
      return pattern === undefined ? [] : [{ pattern, mark: `${source}:${i + 1}` }];
    });
    const parent = folder === "" ? undefined : rulesOf(folder.includes("/") ? dirname(folder) : "");
    const rules = parent ? parent.extend(patterns) : IgnoreRules.compile(patterns, { ignoreCase });
    folders.set(folder, rules);
    return rules;
  };
  return paths.map(([path, isDir]) => {
    const slash = path.lastIndexOf("/");
    const { ignored, mark } = rulesOf(slash < 0 ? "" : path.slice(0, slash)).test(isDir ? `${path}/` : path);
    return { ignored, mark };
  });
}

// Linux only: the tree holds names that differ only in letter case, and names that macOS would normalise.
describe.skipIf(!hasGit() || process.platform !== "linux")("ignore rules agree with git check-ignore", () => {
  let root = "";
  let home = "";
  const paths = entries();

  beforeAll(() => {
    root = makeTemp();
    home = makeTemp();
    writeFileSync(join(home, "gitconfig"), "");
    execFileSync("git", ["init", "-q"], { cwd: root, env: env(home) });
    for (const [path, isDir] of paths) {
      if (isDir) mkdirSync(join(root, path), { recursive: true });
      else writeFileSync(join(root, path), "x");
    }
  });
  afterAll(cleanupTemp);

  const sets = corpus();
  it.each([false, true])("on every pattern set and path (ignoreCase %s)", (ignoreCase) => {
    const disagreements: string[] = [];
    for (const files of sets) {
      const written = Object.entries(files);
      for (const [file, lines] of written) writeFileSync(join(root, file), `${lines.join("\n")}\n`);
      const checked = paths.filter(([path]) => !Object.hasOwn(files, path));
      const expected = gitVerdicts(
        root,
        home,
        checked.map(([path]) => path),
        ignoreCase,
      );
      const actual = ourVerdicts(files, checked, ignoreCase);
      checked.forEach(([path, isDir], i) => {
        if (JSON.stringify(actual[i]) !== JSON.stringify(expected[i]))
          disagreements.push(
            `${JSON.stringify(files)} ${JSON.stringify(path)}${isDir ? " (folder)" : ""}: ` +
              `ours ${JSON.stringify(actual[i])}, git ${JSON.stringify(expected[i])}`,
          );
      });
      for (const [file] of written) writeFileSync(join(root, file), "");
    }
    expect(disagreements).toEqual([]);
    expect(sets.length * paths.length).toBeGreaterThan(20_000);
  });
});
