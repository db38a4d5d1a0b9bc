import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IgnoreRules, type SourcedPattern, segmentMatches } from "../../src/workspace/ignore-match.js";
import { umbraIgnoreMatcher } from "../../src/workspace/ignore-rules.js";
import { cleanupTemp, makeTemp, paths, scan } from "./helpers.js";

afterEach(cleanupTemp);

const rules = (...patterns: string[]): IgnoreRules =>
  IgnoreRules.compile(patterns.map((pattern, i) => ({ pattern, mark: `line ${i + 1}` })));

/** `a/**\/` k times then `x`: a backtracking matcher tries every way to lay the `**` over a deep path. */
const hostile = (k: number): string => `${"a/**/".repeat(k)}x`;
const chain = (depth: number): string => Array.from({ length: depth }, () => "a").join("/");

describe("IgnoreRules", () => {
  it("lets the last matching rule decide, and names it", () => {
    const set = rules("*.log", "!keep.log", "logs/");
    expect(set.test("a/x.log")).toEqual({ ignored: true, mark: "line 1" });
    expect(set.test("a/keep.log")).toEqual({ ignored: false, mark: "line 2" });
    expect(set.test("a/x.txt")).toEqual({ ignored: false, mark: undefined });
    expect(set.test("logs/")).toEqual({ ignored: true, mark: "line 3" });
    expect(set.test("logs")).toEqual({ ignored: false, mark: undefined });
  });

  it("cannot re-include a path below an ignored folder: the folder's rule decides", () => {
    const set = rules("build/", "!build/keep.js", "!*.js");
    expect(set.test("build/keep.js")).toEqual({ ignored: true, mark: "line 1" });
    expect(set.test("src/build/a/b.js")).toEqual({ ignored: true, mark: "line 1" });
    // asked again, or the folder first: the same answers
    expect(set.test("src/build/")).toEqual({ ignored: true, mark: "line 1" });
    expect(set.test("src/build/a/b.js")).toEqual({ ignored: true, mark: "line 1" });
    expect(set.test("src/app.js")).toEqual({ ignored: false, mark: "line 3" });
  });

  it("anchors a pattern with a slash to the root and spans folders with `**`", () => {
    const set = rules("/top", "a/*/c", "d/**/e", "f/**", "**/g");
    expect(set.test("top").ignored).toBe(true);
    expect(set.test("x/top").ignored).toBe(false);
    expect(set.test("a/b/c").ignored).toBe(true);
    expect(set.test("a/b/b/c").ignored).toBe(false);
    expect(set.test("d/e").ignored).toBe(true);
    expect(set.test("d/1/2/e").ignored).toBe(true);
    expect(set.test("f/").ignored).toBe(false);
    expect(set.test("f/1/2").ignored).toBe(true);
    expect(set.test("g").ignored).toBe(true);
    expect(set.test("1/2/g/3").ignored).toBe(true);
  });

  it("adds the patterns of a deeper file after its parent's, and keeps the parent when they add nothing", () => {
    const parent = rules("*.txt");
    const child = parent.extend([{ pattern: "!sub/**/keep.txt", mark: "sub/.gitignore" }]);
    expect(child.test("sub/x/keep.txt")).toEqual({ ignored: false, mark: "sub/.gitignore" });
    expect(parent.test("sub/x/keep.txt")).toEqual({ ignored: true, mark: "line 1" });
    expect(parent.extend([{ pattern: "[unclosed", mark: "x" }])).toBe(parent);
  });

  it("reads what git cannot read as matching nothing", () => {
    const set = rules("[z-a]", "[abc", "x\\", "[[:nope:]]", "!", "/");
    expect(set.test("z")).toEqual({ ignored: true, mark: "line 1" }); // git tries `z` before the range
    for (const path of ["a", "[abc", "x\\", "x", "n", "!", "/"]) expect(set.test(path).ignored).toBe(false);
  });

  it("folds ASCII letters only when asked, as git's core.ignoreCase", () => {
    const patterns: SourcedPattern[] = [{ pattern: "*.TXT", mark: "m" }];
    expect(IgnoreRules.compile(patterns).test("a.txt").ignored).toBe(false);
    expect(IgnoreRules.compile(patterns, { ignoreCase: true }).test("A.txt").ignored).toBe(true);
  });
});

describe("segmentMatches (one segment of a gitignore pattern)", () => {
  it("reads wildcards, sets and escapes, braces as written, case as asked", () => {
    expect(segmentMatches("pack*", "packages")).toBe(true);
    expect(segmentMatches("p?ckages", "packages")).toBe(true);
    expect(segmentMatches("[a-p]ackages", "packages")).toBe(true);
    expect(segmentMatches("[[:alpha:]]ackages", "packages")).toBe(true);
    expect(segmentMatches("{packages,apps}", "packages")).toBe(false);
    expect(segmentMatches("{packages,apps}", "{packages,apps}")).toBe(true);
    expect(segmentMatches("Packages", "packages")).toBe(false);
    expect(segmentMatches("Packages", "packages", { ignoreCase: true })).toBe(true);
    expect(segmentMatches("pack\\", "pack\\")).toBe(false); // a lone trailing backslash matches nothing
    expect(segmentMatches("[pack", "[pack")).toBe(false); // so does an unclosed class
  });

  it("answers a hostile segment against a long name at once", () => {
    expect(segmentMatches(`${"*?".repeat(60)}#`, "e".repeat(300))).toBe(false);
  }, 10_000);
});

describe("hostile ignore rules", () => {
  // The `ignore` package took 18 s for k = 10 through umbraIgnoreMatcher and as long for the scan;
  // for k = 14, more than 5 minutes.
  it("tests a path 40 folders deep against `a/**/` ten and fourteen times at once", () => {
    for (const k of [10, 14]) {
      const set = rules(hostile(k));
      expect(set.test(`${chain(40)}/f`).ignored).toBe(false);
      expect(set.test(`${chain(40)}/x`).ignored).toBe(true);
    }
  }, 10_000);

  it("answers umbraIgnoreMatcher at once for such a rule in a .umbraignore", async () => {
    const root = makeTemp();
    writeFileSync(join(root, ".umbraignore"), `${hostile(10)}\n`);
    const ignored = umbraIgnoreMatcher(root);
    expect(await ignored(`${chain(40)}/f`)).toBe(false);
    expect(await ignored(`${chain(12)}/x`)).toBe(true);
  }, 10_000);

  it("scans a 40-folder chain under such a rule in a .gitignore at once", async () => {
    const root = makeTemp();
    writeFileSync(join(root, ".gitignore"), `${hostile(10)}\n`);
    mkdirSync(join(root, chain(40)), { recursive: true });
    writeFileSync(join(root, chain(40), "f"), "x");
    writeFileSync(join(root, chain(40), "x"), "x");
    expect(paths(await scan(root, { excludeDirs: [] }))).toEqual([".gitignore", `${chain(40)}/f`]);
  }, 10_000);

  it("answers wildcard-heavy names and paths at once", () => {
    const set = rules(`${"*?".repeat(200)}#`, `**/${"*a".repeat(200)}/**/b`, `${"[a-z]*".repeat(200)}!`);
    const long = `${"e".repeat(2000)}/${"a".repeat(2000)}/${"e".repeat(2000)}`;
    expect(set.test(long).ignored).toBe(false);
  }, 10_000);

  it("tests many paths against a file of 20,000 rules quickly", () => {
    const lines = Array.from(
      { length: 20_000 },
      (_, i) => [`file${i}.txt`, `/dir${i}/`, `**/deep${i}/**/*.log`, `!keep${i}`, `src/*/gen${i}-*`][i % 5],
    );
    const set = rules(...(lines as string[]));
    let ignored = 0;
    for (let i = 0; i < 2_000; i++) {
      if (set.test(`src/pkg/deep${i}/a/b/file${i * 7}.txt`).ignored) ignored++;
      if (set.test(`dir${i}/x`).ignored) ignored++;
    }
    expect(ignored).toBeGreaterThan(0);
  }, 10_000);
});
