import { describe, expect, it } from "vitest";
import { detectLanguage, SUPPORTED_LANGUAGES } from "../../../src/index/chunk/index.js";
import { LANGUAGES } from "../../../src/index/chunk/languages.js";
import { getParser, grammarPath } from "../../../src/index/chunk/parser.js";

describe("detectLanguage", () => {
  it.each([
    ["src/app.ts", "typescript"],
    ["types/index.d.ts", "typescript"],
    ["ui/View.tsx", "tsx"],
    ["lib/a.js", "javascript"],
    ["lib/a.mjs", "javascript"],
    ["lib/a.cjs", "javascript"],
    ["ui/A.jsx", "javascript"],
    ["pkg/mod.py", "python"],
    ["pkg/mod.pyi", "python"],
    ["cmd/main.go", "go"],
    ["src/lib.rs", "rust"],
    ["src/Main.java", "java"],
    ["src/list.c", "c"],
    ["include/list.h", "c"],
    ["src/a.cc", "cpp"],
    ["src/a.cpp", "cpp"],
    ["src/a.cxx", "cpp"],
    ["include/a.hpp", "cpp"],
    ["include/a.hh", "cpp"],
    ["include/a.hxx", "cpp"],
    ["src/Program.cs", "csharp"],
    ["lib/a.rb", "ruby"],
    ["web/index.php", "php"],
    ["README.md", "markdown"],
    ["docs/guide.markdown", "markdown"],
    ["docs/page.mdx", "markdown"],
    ["docs/index.rst", "text"],
    ["notes.txt", "text"],
    ["package.json", "text"],
    ["config.yaml", "text"],
    ["Cargo.toml", "text"],
    ["setup.cfg", "text"],
    ["php.ini", "text"],
    ["site/index.html", "text"],
    ["site/style.css", "text"],
    ["Makefile", "text"],
    ["Dockerfile", "text"],
    ["LICENSE", "text"],
    [".gitignore", "text"],
    ["C:\\work\\src\\App.TS", "typescript"],
  ])("%s → %s", (path, language) => {
    expect(detectLanguage(path)).toBe(language);
  });

  it.each([
    "package-lock.json",
    "web/yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "poetry.lock",
    "go.sum",
    "dist/app.min.js",
    "dist/app.js.map",
    "dist/style.min.css",
    "assets/logo.png",
    "lib/native.so",
  ])("%s is never chunked", (path) => {
    expect(detectLanguage(path)).toBeUndefined();
  });

  it("lists every language it can return", () => {
    expect([...SUPPORTED_LANGUAGES].sort()).toEqual(
      [
        "c",
        "cpp",
        "csharp",
        "go",
        "java",
        "javascript",
        "markdown",
        "php",
        "python",
        "ruby",
        "rust",
        "text",
        "tsx",
        "typescript",
      ].sort(),
    );
  });
});

describe("parser", () => {
  // First, while no grammar is loaded in this process.
  it("loads a grammar once for concurrent callers and reuses the parser", async () => {
    const [a, b, c] = await Promise.all([getParser("ruby"), getParser("ruby"), getParser("ruby")]);
    expect(a).toBeDefined();
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(await getParser("ruby")).toBe(a);
  });

  it.each(LANGUAGES.filter((spec) => spec.grammar).map((spec) => [spec.id]))(
    "loads the %s grammar and parses",
    async (id) => {
      const parser = await getParser(id);
      expect(parser).toBeDefined();
      const tree = parser?.parse("x\n");
      expect(tree?.rootNode.childCount).toBeGreaterThanOrEqual(0);
      tree?.delete();
    },
  );

  it("has no parser for languages without a grammar", async () => {
    expect(await getParser("markdown")).toBeUndefined();
    expect(await getParser("text")).toBeUndefined();
  });

  it("resolves grammar files inside tree-sitter-wasms", () => {
    expect(grammarPath("tree-sitter-go.wasm")).toMatch(/tree-sitter-wasms[\\/]out[\\/]tree-sitter-go\.wasm$/);
  });
});
