import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DependentsIndex } from "../../src/lsp/dependents.js";
import { Registry, resolvePyright, resolveTypeScriptServer } from "../../src/lsp/registry.js";
import { UriMapper } from "../../src/lsp/uris.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { writeTree } from "./helpers.js";

let root: string;

beforeAll(async () => {
  root = await tempDir("lsp-registry");
  await writeTree(root, {
    "web/tsconfig.json": "{}",
    "web/src/math.ts": "export const one = 1;\n",
    "web/src/use.ts": 'import { one } from "./math.js";\n',
    "web/src/index.ts": 'export * from "./math";\n',
    "web/src/other.ts": 'import { x } from "./mathematics.js";\n',
    "web/app.tsx": 'import { one } from "./src";\n',
    "py/pyproject.toml": "",
    "py/pkg/__init__.py": "",
    "py/pkg/mathx.py": "def add(): ...\n",
    "py/pkg/use.py": "from pkg.mathx import add\n",
    "py/pkg/rel.py": "from . import mathx\n",
    "py/pkg/unrelated.py": "import os\n",
    "go/go.mod": "module example.com/m\n",
    "go/lib/lib.go": "package lib\n",
    "go/lib/more.go": "package lib\n",
    "go/main.go": 'package main\n\nimport (\n\t"fmt"\n\t"example.com/m/lib"\n)\n',
    "c/compile_commands.json": "[]",
    "c/x.c": "",
  });
});

afterAll(() => cleanup(root));

describe("Registry", () => {
  it("detects languages by extension and the nearest project marker", () => {
    const registry = new Registry();
    expect(registry.detect(root, "web/src/math.ts")).toMatchObject({
      definition: { id: "typescript" },
      languageId: "typescript",
      projectRoot: "web",
      marker: "tsconfig.json",
    });
    expect(registry.detect(root, "web/app.tsx")?.languageId).toBe("typescriptreact");
    expect(registry.detect(root, "py/pkg/use.py")).toMatchObject({
      projectRoot: "py",
      marker: "pyproject.toml",
    });
    expect(registry.detect(root, "go/lib/lib.go")).toMatchObject({ projectRoot: "go", marker: "go.mod" });
    expect(registry.detect(root, "c/x.c")).toMatchObject({
      definition: { id: "c" },
      marker: "compile_commands.json",
    });
    expect(registry.detect(root, "notes.txt")).toBeUndefined();
  });

  it("resolves the npm servers from installed packages, not PATH", () => {
    const ts = resolveTypeScriptServer();
    expect(ts.args).toEqual(["--lsp", "--stdio"]);
    expect(ts.description).toMatch(/TypeScript 7\./);
    expect(ts.command).toContain("node_modules");
    const py = resolvePyright();
    expect(py.command).toBe(process.execPath);
    expect(py.args[0]).toMatch(/pyright\/langserver\.index\.js$/);
  });
});

describe("DependentsIndex", () => {
  it("finds TypeScript importers by relative specifier", async () => {
    const index = new DependentsIndex(root, [".ts", ".tsx"], "typescript");
    expect(await index.dependents("web/src/math.ts", new Map(), 10)).toEqual([
      "web/src/index.ts",
      "web/src/use.ts",
    ]);
    expect(await index.dependents("web/src/index.ts", new Map(), 10)).toEqual(["web/app.tsx"]);
    // A branch's own content counts over the user's folder.
    const branch = new Map([["web/src/other.ts", 'import { one } from "./math";\n']]);
    expect(await index.dependents("web/src/math.ts", branch, 10)).toContain("web/src/other.ts");
  });

  it("finds Python importers, relative imports included", async () => {
    const index = new DependentsIndex(root, [".py"], "python");
    expect(await index.dependents("py/pkg/mathx.py", new Map(), 10)).toEqual([
      "py/pkg/rel.py",
      "py/pkg/use.py",
    ]);
  });

  it("finds Go files of the same package and importers of it", async () => {
    const index = new DependentsIndex(root, [".go"], "go");
    expect(await index.dependents("go/lib/lib.go", new Map(), 10)).toEqual(["go/lib/more.go", "go/main.go"]);
  });

  it("reads a branch's hostile files at once, and their imports however they are spaced", async () => {
    // A run of blanks, of dots or of unclosed `import(` in one file took seconds to minutes.
    const ts = new DependentsIndex(root, [".ts", ".tsx"], "typescript");
    const tsBranch = new Map([
      ["web/src/big.ts", `from\t${"\t".repeat(130_000)}`],
      ["web/src/late.ts", 'const m = await import ( "./math" );\n'],
    ]);
    expect(await ts.dependents("web/src/math.ts", tsBranch, 10)).toEqual([
      "web/src/index.ts",
      "web/src/late.ts",
      "web/src/use.ts",
    ]);
    const py = new DependentsIndex(root, [".py"], "python");
    const pyBranch = new Map([
      ["py/pkg/big.py", `from .${".".repeat(150_000)}`],
      ["py/pkg/spaced.py", "from  .mathx  import (add)\n"],
    ]);
    expect(await py.dependents("py/pkg/mathx.py", pyBranch, 10)).toEqual([
      "py/pkg/rel.py",
      "py/pkg/spaced.py",
      "py/pkg/use.py",
    ]);
    const go = new DependentsIndex(root, [".go"], "go");
    const goBranch = new Map([
      ["go/big/big.go", "import(".repeat(80_000)],
      ["go/cmd/cmd.go", 'package main\n\nimport (\n\t"example.com/m/lib" // the library (ours)\n)\n'],
    ]);
    expect(await go.dependents("go/lib/lib.go", goBranch, 10)).toEqual([
      "go/cmd/cmd.go",
      "go/lib/more.go",
      "go/main.go",
    ]);
  }, 10_000);
});

describe("UriMapper", () => {
  it("maps paths to file URIs and back, outside files as absolute", () => {
    const uris = new UriMapper("/work/my repo");
    expect(uris.toUri("src/a b.ts")).toBe("file:///work/my%20repo/src/a%20b.ts");
    expect(uris.toPath("file:///work/my%20repo/src/a%20b.ts")).toEqual({
      path: "src/a b.ts",
      external: false,
    });
    expect(uris.toPath("file:///usr/lib/x.d.ts")).toEqual({ path: "/usr/lib/x.d.ts", external: true });
  });
});
