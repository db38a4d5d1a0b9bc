import { describe, expect, it } from "vitest";
import { compileGlob, GlobError, globSchema } from "../../src/workspace/glob.js";

const PATHS = [
  "README.md",
  ".env",
  "src/index.ts",
  "src/app.test.ts",
  "src/lib/util.ts",
  "src/lib/deep/more.tsx",
  "lib/a.py",
  "lib/b.pyi",
  "tests/a1.py",
  "tests/d2.py",
  "docs/[draft].md",
  "x/.hidden/y.ts",
];

function matched(pattern: string): string[] {
  const matches = compileGlob(pattern);
  return PATHS.filter((path) => matches(path));
}

describe("compileGlob", () => {
  it("anchors a pattern with a slash at the root; `**` spans any number of folders", () => {
    expect(matched("src/*.ts")).toEqual(["src/index.ts", "src/app.test.ts"]);
    expect(matched("src/**/*.ts")).toEqual(["src/index.ts", "src/app.test.ts", "src/lib/util.ts"]);
    expect(matched("src/**")).toEqual([
      "src/index.ts",
      "src/app.test.ts",
      "src/lib/util.ts",
      "src/lib/deep/more.tsx",
    ]);
    expect(matched("src/")).toEqual(matched("src/**"));
    expect(matched("/lib/*")).toEqual(["lib/a.py", "lib/b.pyi"]);
    expect(matched("./lib/a.py")).toEqual(["lib/a.py"]);
    expect(matched("./a.py")).toEqual([]);
    expect(matched("/README.md")).toEqual(["README.md"]);
    expect(matched("deep/")).toEqual(["src/lib/deep/more.tsx"]);
    expect(matched("**/deep/**")).toEqual(["src/lib/deep/more.tsx"]);
    expect(matched("lib")).toEqual([]);
  });

  it("matches a pattern without a slash against names at any depth, dotted ones too", () => {
    expect(matched("*.py")).toEqual(["lib/a.py", "tests/a1.py", "tests/d2.py"]);
    expect(matched("*.md")).toEqual(["README.md", "docs/[draft].md"]);
    expect(matched(".*")).toEqual([".env"]);
    expect(matched("*.ts")).toContain("x/.hidden/y.ts");
  });

  it("reads ?, sets, ranges, negated sets, escapes and braces", () => {
    expect(matched("tests/?1.py")).toEqual(["tests/a1.py"]);
    expect(matched("tests/[a-c]*")).toEqual(["tests/a1.py"]);
    expect(matched("tests/[!a]*")).toEqual(["tests/d2.py"]);
    expect(matched("tests/[^a]*")).toEqual(["tests/d2.py"]);
    expect(matched("*.{py,pyi}")).toEqual(["lib/a.py", "lib/b.pyi", "tests/a1.py", "tests/d2.py"]);
    expect(matched("{lib,tests}/a*")).toEqual(["lib/a.py", "tests/a1.py"]);
    expect(matched("src/{lib/deep,nothing}/*")).toEqual(["src/lib/deep/more.tsx"]);
    expect(matched("*.t{s,s{x,}}")).toEqual(matched("*.{ts,tsx}"));
    expect(matched("docs/\\[draft\\].md")).toEqual(["docs/[draft].md"]);
    expect(matched("docs/[[]draft].md")).toEqual(["docs/[draft].md"]);
    // an unclosed set or a brace without a comma is literal
    expect(compileGlob("a[b")("a[b")).toBe(true);
    expect(compileGlob("{a}")("{a}")).toBe(true);
  });

  it("refuses what it cannot read with one line, and brace expansion past its bound", () => {
    expect(() => compileGlob("a\\")).toThrow(GlobError);
    expect(() => compileGlob("/")).toThrow(/matches nothing/);
    expect(() => compileGlob("{a,b}".repeat(9))).toThrow(/more than 256 alternatives/);
    expect(compileGlob("{a,b}".repeat(8))("ab".repeat(4))).toBe(true);
    expect(globSchema.safeParse("src/**/*.ts").success).toBe(true);
    const refused = globSchema.safeParse("{a,b}".repeat(9));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/^glob .* has more than 256 alternatives$/);
  });

  it("answers patterns that make a backtracking matcher run for hours, at once", () => {
    // picomatch's regular expression took 150 s on one such path with twelve `*?`; it grows
    // exponentially with them. This test would hang (and time out) with such a matcher.
    const name = `${"e".repeat(200)}.py`;
    for (const pattern of [
      `**/${"*?".repeat(40)}#`,
      `${"*e".repeat(60)}x`,
      `${"**/".repeat(50)}x`,
      `**/${"*[a-z]".repeat(40)}#`,
    ]) {
      const matches = compileGlob(pattern);
      expect(matches(`src/${"a/".repeat(50)}${name}`)).toBe(false);
    }
    expect(compileGlob(`**/${"*e".repeat(60)}*.py`)(`a/${name}`)).toBe(true);
  }, 10_000);
});
