import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LspHost } from "../../src/lsp/host.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";
import { REAL_SERVER_TEST_TIMEOUTS, SandboxedWorkspace, writeTree } from "./helpers.js";

vi.setConfig(REAL_SERVER_TEST_TIMEOUTS);

const MATHX = `def add(a: int, b: int) -> int:
    return a + b


broken: int = "not a number"
`;

const USE = `from pkg.mathx import add

three: int = add(1, 2)
`;

let dir: string;
let root: string;
let ws: SandboxedWorkspace;
let host: LspHost;
let before: string;

beforeAll(async () => {
  dir = await tempDir("lsp-py");
  root = `${dir}/project`;
  await writeTree(root, {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1.0"\n',
    "pkg/__init__.py": "",
    "pkg/mathx.py": MATHX,
    "pkg/use.py": USE,
  });
  before = await fingerprint(root);
  ws = await SandboxedWorkspace.open(root);
  host = ws.host;
});

afterAll(async () => {
  await ws?.close();
  expect(await fingerprint(root)).toBe(before);
  await cleanup(dir);
});

describe("Python (pyright)", () => {
  it("stays up in the sandbox past pyright's check of its client's pid", async () => {
    const branch = await ws.branch();
    await host.lint(branch, "pkg/use.py");
    const [started] = host.status();
    // pyright checks every 3 s that the processId sent in initialize is alive, and exits when it is not:
    // umbra's pid does not exist in the sandbox's pid namespace.
    await new Promise((resolve) => setTimeout(resolve, 7000));
    await host.lint(branch, "pkg/use.py");
    expect(host.status()[0]).toMatchObject({ pid: started?.pid, crashes: 0, starts: 1 });
  });

  it("reports introduced errors, cross-file breakage, and nothing pre-existing", async () => {
    expect(host.detect(root, "pkg/use.py")).toMatchObject({ languageId: "python", marker: "pyproject.toml" });
    const branch = await ws.branch();
    const asIs = await host.lint(branch, "pkg/mathx.py");
    expect(asIs.diagnostics.map((d) => [d.line, d.severity])).toEqual([[5, "error"]]);
    expect(asIs.introduced).toEqual([]);

    const edited = await host.lint(branch, "pkg/mathx.py", {
      content: `import os\n${MATHX.replace("add(a: int, b: int)", "add(a: int)").replace("a + b", "a")}y = onlyHere\n`,
    });
    expect(edited.partial).toBe(false);
    expect(edited.diagnostics.map((d) => d.line)).toEqual([6, 7]);
    expect(edited.introduced.map((d) => [d.line, d.message])).toEqual([[7, '"onlyHere" is not defined']]);
    expect(edited.otherFiles.map((f) => f.path)).toEqual(["pkg/use.py"]);
    expect(edited.otherFiles[0]?.introduced[0]).toMatchObject({
      path: "pkg/use.py",
      line: 3,
      severity: "error",
    });
    expect(edited.version).toBeGreaterThan(0);
  });

  it("navigates the branch's state with relative paths", async () => {
    const branch = await ws.branch({ "pkg/mathx.py": `# moved down\n${MATHX}` });
    const definition = await host.definition(branch, "pkg/use.py", { line: 3, column: 14 });
    expect(definition[0]).toMatchObject({ path: "pkg/mathx.py", line: 2, external: false });
    const references = await host.references(branch, "pkg/mathx.py", { line: 2, column: 5 });
    expect(references.map((r) => `${r.path}:${r.line}`).sort()).toEqual([
      "pkg/mathx.py:2",
      "pkg/use.py:1",
      "pkg/use.py:3",
    ]);
    const hover = await host.hover(branch, "pkg/use.py", { line: 3, column: 14 });
    expect(hover?.text).toMatch(/def add\(\s*a: int,\s*b: int\s*\) -> int/);
    const symbols = await host.documentSymbols(branch, "pkg/mathx.py");
    expect(symbols.map((s) => s.name)).toEqual(expect.arrayContaining(["add", "broken"]));
    const found = await host.workspaceSymbols(branch, "add", { languages: ["python"] });
    expect(found.some((s) => s.name === "add" && s.location.path === "pkg/mathx.py")).toBe(true);
  });

  it("keeps two interleaved branches apart", async () => {
    const a = await ws.branch();
    const b = await ws.branch();
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        host.lint(i % 2 === 0 ? a : b, "pkg/mathx.py", {
          content: `${MATHX}z = only${i % 2 === 0 ? "A" : "B"}${i}\n`,
        }),
      ),
    );
    runs.forEach((result, i) => {
      expect(result.introduced.map((d) => d.message)).toEqual([
        `"only${i % 2 === 0 ? "A" : "B"}${i}" is not defined`,
      ]);
    });
  });
});

describe("Python cross-file checks past the importer limit", () => {
  it("checks the importers that use the edited function first, and names the ones skipped", async () => {
    const many = `${dir}/many-importers`;
    const files: Record<string, string> = {
      "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1.0"\n',
      "pkg/__init__.py": "",
      "pkg/mathx.py":
        "def add(a: int, b: int) -> int:\n    return a + b\n\n\ndef one() -> int:\n    return 1\n",
    };
    // Six importers (Python checks at most 4); by name, the one that calls add() would come last.
    for (const name of ["a", "b", "c", "d", "e"])
      files[`pkg/${name}_plain.py`] = "from pkg import mathx\n\nx = mathx.one()\n";
    files["pkg/z_caller.py"] = "from pkg import mathx\n\ny: int = mathx.add(1, 2)\n";
    await writeTree(many, files);
    const workspace = await SandboxedWorkspace.open(many);
    try {
      const result = await workspace.host.lint(await workspace.branch(), "pkg/mathx.py", {
        content: (files["pkg/mathx.py"] ?? "")
          .replace("def add(a: int, b: int)", "def add(a: int)")
          .replace("a + b", "a"),
      });
      expect(result.checkedFiles).toHaveLength(4);
      expect(result.checkedFiles[0]).toBe("pkg/z_caller.py");
      expect(result.skippedFiles).toHaveLength(2);
      expect([...result.checkedFiles, ...result.skippedFiles].sort()).toEqual(
        Object.keys(files)
          .filter((path) => /_(plain|caller)\.py$/.test(path))
          .sort(),
      );
      expect(result.otherFiles.map((f) => f.path)).toEqual(["pkg/z_caller.py"]);
    } finally {
      await workspace.close();
    }
  });
});
