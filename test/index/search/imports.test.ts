import { describe, expect, it } from "vitest";
import { ImportResolver } from "../../../src/index/search/imports.js";

const resolver = (paths: string[]) => new ImportResolver(paths);

describe("ImportResolver", () => {
  it("resolves Python absolute, relative, submodule and by-name imports", () => {
    const files = resolver([
      "pkg/__init__.py",
      "pkg/core/__init__.py",
      "pkg/core/dataset.py",
      "pkg/core/variable.py",
      "pkg/core/formatting.py",
      "pkg/util/docfields.py",
      "pkg/ext/typehints.py",
      "other/json.py",
    ]);
    const text = [
      "import json",
      "import pkg.util.docfields as df",
      "from . import formatting",
      "from .variable import (",
      "    Variable,",
      "    as_variable,",
      ")",
      "from ..ext import typehints  # noqa",
      "def setup(app):",
      "    app.setup_extension('pkg.ext.typehints')",
    ].join("\n");
    expect(files.resolve("pkg/core/dataset.py", text, "python").sort()).toEqual([
      "pkg/core/formatting.py",
      "pkg/core/variable.py",
      "pkg/ext/typehints.py",
      "pkg/util/docfields.py",
    ]);
  });

  it("matches a module under a src/ layout but never a one-component module by suffix", () => {
    const files = resolver(["src/pkg/mod.py", "src/pkg/__init__.py", "lib/json.py"]);
    expect(files.resolve("src/pkg/a.py", "from pkg.mod import x\nimport json\n", "python")).toEqual([
      "src/pkg/mod.py",
    ]);
  });

  it("ignores relative imports that climb out of the workspace", () => {
    const files = resolver(["a.py", "b.py"]);
    expect(files.resolve("a.py", "from ... import b\n", "python")).toEqual([]);
  });

  it("resolves relative JavaScript and TypeScript specifiers with extensions and index files", () => {
    const files = resolver([
      "src/billing/invoice.ts",
      "src/billing/tax.ts",
      "src/util/index.ts",
      "src/app.ts",
    ]);
    const text = [
      'import { tax } from "./tax.js";',
      "import * as util from '../util';",
      'export { x } from "../app";',
      'import lodash from "lodash";',
      'const late = await import("./missing");',
    ].join("\n");
    expect(files.resolve("src/billing/invoice.ts", text, "typescript").sort()).toEqual([
      "src/app.ts",
      "src/billing/tax.ts",
      "src/util/index.ts",
    ]);
  });

  it("resolves C includes, Rust modules, Java and PHP imports, Go packages and Ruby requires", () => {
    const files = resolver([
      "src/net/socket.h",
      "src/net/socket.c",
      "include/util/log.h",
      "src/lib.rs",
      "src/parser/mod.rs",
      "src/parser/lexer.rs",
      "src/com/acme/Billing.java",
      "app/Models/User.php",
      "internal/store/store.go",
      "internal/store/store_test.go",
      "lib/helpers.rb",
    ]);
    expect(
      files.resolve("src/net/socket.c", '#include "socket.h"\n#include "util/log.h"\n', "c").sort(),
    ).toEqual(["include/util/log.h", "src/net/socket.h"]);
    expect(
      files.resolve("src/lib.rs", "mod parser;\nuse crate::parser::lexer::Token;\n", "rust").sort(),
    ).toEqual(["src/parser/lexer.rs", "src/parser/mod.rs"]);
    expect(files.resolve("src/com/acme/App.java", "import com.acme.Billing;\n", "java")).toEqual([
      "src/com/acme/Billing.java",
    ]);
    expect(files.resolve("app/Http/Controller.php", "<?php\nuse App\\Models\\User;\n", "php")).toEqual([
      "app/Models/User.php",
    ]);
    expect(
      files.resolve("cmd/main.go", 'import (\n\t"fmt"\n\t"example.com/shop/internal/store"\n)\n', "go"),
    ).toEqual(["internal/store/store.go"]);
    expect(files.resolve("lib/app.rb", "require_relative 'helpers'\n", "ruby")).toEqual(["lib/helpers.rb"]);
  });

  it("reads hostile files of an indexable size (at most 1 MiB) at once", () => {
    // Each took seconds to minutes: a regular expression went back over the same long run of dots,
    // blanks or lines from every place it could start.
    const files = resolver(["pkg/a.py", "src/tax.ts", "src/parser.rs", "internal/store/store.go"]);
    expect(files.resolve("pkg/b.py", `from .${".".repeat(150_000)}`, "python")).toEqual([]);
    expect(files.resolve("pkg/b.py", "from a import (\n".repeat(50_000), "python")).toEqual([]);
    expect(files.resolve("src/app.ts", `import\t${"\t".repeat(120_000)}`, "typescript")).toEqual([]);
    expect(files.resolve("src/lib.rs", "pub(\n".repeat(80_000), "rust")).toEqual([]);
    expect(files.resolve("cmd/main.go", "import(\n".repeat(100_000), "go")).toEqual([]);
    // and what they stand for is still read
    expect(files.resolve("pkg/b.py", "from  . import (\n  a,  # the (first) one\n)\n", "python")).toEqual([
      "pkg/a.py",
    ]);
    expect(files.resolve("src/app.ts", 'const tax = await import ( "./tax" );\n', "typescript")).toEqual([
      "src/tax.ts",
    ]);
    expect(files.resolve("src/lib.rs", "pub(crate) mod parser;\n", "rust")).toEqual(["src/parser.rs"]);
    const go = 'import (\n\t"example.com/shop/internal/store" // the store (sql)\n)\nfunc f() (int, error)\n';
    expect(files.resolve("cmd/main.go", go, "go")).toEqual(["internal/store/store.go"]);
  }, 10_000);

  it("does not count a file as importing itself", () => {
    const files = resolver(["pkg/a.py"]);
    expect(files.resolve("pkg/a.py", "from pkg import a\n", "python")).toEqual([]);
  });
});
