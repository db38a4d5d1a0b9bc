import { describe, expect, it } from "vitest";
import { detectLanguage, SUPPORTED_LANGUAGES } from "../../../src/index/chunk/index.js";
import { LANGUAGES } from "../../../src/index/chunk/languages.js";
import { getParser, grammarPath, loadParsers } from "../../../src/index/chunk/parser.js";

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
    ["app/src/Cart.kt", "kotlin"],
    ["build.gradle.kts", "kotlin"],
    ["Sources/Cart.swift", "swift"],
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
        "kotlin",
        "markdown",
        "php",
        "python",
        "ruby",
        "rust",
        "swift",
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

  // A grammar whose scanner keeps state between parses reads the same file differently the second time
  // (tree-sitter-lua in tree-sitter-wasms 0.1.13 does, and is not used): every grammar umbra uses must
  // not. Each snippet has the strings and comments its scanner reads.
  const SNIPPETS: Record<string, string> = {
    typescript: `const s = \`a\${1}\`; /* c */\nfunction a(): string { return s; }\n`,
    tsx: `const v = <div>{\`a\${1}\`}</div>;\nfunction a() { return v; }\n`,
    javascript: `const s = \`a\${1}\`; /* c */\nfunction a() { return /x/g; }\n`,
    python: 'def a():\n    """doc"""\n    return f"{1}"\n\nclass B:\n    pass\n',
    go: "package a\n\nvar s = `x`\n\nfunc A() string { return s }\n",
    rust: 'fn a() -> &str { r#"x"# }\n/* a /* b */ */\nfn b() {}\n',
    java: 'class A { String s = """\n x\n """; void m() {} }\n',
    c: "/* c */\nint a(void) { return 1; }\n",
    cpp: 'auto s = R"(x)";\nvoid a() {}\n',
    csharp: 'class A { string s = @"x"; string t = $"{s}"; void M() {} }\n',
    ruby: "def a\n  <<~EOS\n  x\n  EOS\nend\n",
    php: "<?php\n$x = <<<EOT\nx\nEOT;\nfunction a() {}\n",
    kotlin: `class A {\n  fun total(): String = "s\${1}"\n}\n/* c */\nfun String.ext() = """raw\n"""\n`,
    swift: 'class A { func t() -> String { "a\\(1)b" } }\nlet m = """\nx\n"""\n/* c /* n */ */\n',
  };
  it.each(LANGUAGES.filter((spec) => spec.grammar).map((spec) => [spec.id]))(
    "the %s grammar reads a text the same way each time its parser is reused",
    async (id) => {
      const parser = await getParser(id);
      const snippet = SNIPPETS[id];
      expect(snippet, `a snippet for ${id}`).toBeDefined();
      const read = (text: string) => {
        const tree = parser?.parse(text);
        const shape = tree?.rootNode.toString() ?? "";
        tree?.delete();
        return shape;
      };
      const first = read(snippet ?? "");
      expect(first).not.toContain("ERROR");
      read(`${snippet}${snippet}`);
      expect(read(snippet ?? "")).toBe(first);
      expect(read(snippet ?? "")).toBe(first);
    },
  );

  it("loads the grammars a run needs up front, each once, passing over languages without one", async () => {
    await loadParsers(["kotlin", "markdown", "text", "swift", "kotlin"]);
    const kotlin = await getParser("kotlin");
    expect(kotlin).toBeDefined();
    await loadParsers(["kotlin"]);
    expect(await getParser("kotlin")).toBe(kotlin);
  });

  it("has no parser for languages without a grammar", async () => {
    expect(await getParser("markdown")).toBeUndefined();
    expect(await getParser("text")).toBeUndefined();
  });

  it("resolves grammar files inside tree-sitter-wasms", () => {
    expect(grammarPath("tree-sitter-go.wasm")).toMatch(/tree-sitter-wasms[\\/]out[\\/]tree-sitter-go\.wasm$/);
  });
});
