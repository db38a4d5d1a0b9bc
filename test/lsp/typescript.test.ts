import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LspHost } from "../../src/lsp/host.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";
import { REAL_SERVER_TEST_TIMEOUTS, SandboxedWorkspace, writeTree } from "./helpers.js";

vi.setConfig(REAL_SERVER_TEST_TIMEOUTS);

const MATH = `export function add(a: number, b: number): number {
  return a + b;
}

export const broken: number = "not a number";
`;

const USE = `import { add } from "./math.js";

export const three: number = add(1, 2);
`;

let dir: string;
let root: string;
let ws: SandboxedWorkspace;
let host: LspHost;
let before: string;

beforeAll(async () => {
  dir = await tempDir("lsp-ts");
  root = `${dir}/project`;
  await writeTree(root, {
    "tsconfig.json": JSON.stringify({
      compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", noEmit: true },
      include: ["src"],
    }),
    "src/math.ts": MATH,
    "src/use.ts": USE,
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

describe("TypeScript (tsc --lsp)", () => {
  it("detects the language and project", () => {
    expect(host.detect(root, "src/math.ts")).toMatchObject({
      languageId: "typescript",
      marker: "tsconfig.json",
      projectRoot: "",
    });
  });

  it("reports only what an edit introduced, not shifted pre-existing errors", async () => {
    const branch = await ws.branch();
    const asIs = await host.lint(branch, "src/math.ts");
    expect(asIs.diagnostics.map((d) => [d.line, d.code])).toEqual([[5, "2322"]]);
    expect(asIs.introduced).toEqual([]);

    const edited = await host.lint(branch, "src/math.ts", {
      content: `// a new first line\n${MATH}export const missing = notDefinedAnywhere;\n`,
    });
    expect(edited.partial).toBe(false);
    expect(edited.diagnostics.map((d) => d.line)).toEqual([6, 7]);
    expect(edited.introduced).toHaveLength(1);
    expect(edited.introduced[0]).toMatchObject({
      path: "src/math.ts",
      line: 7,
      severity: "error",
      code: "2304",
      source: "ts",
    });
    expect(edited.introduced[0]?.message).toContain("notDefinedAnywhere");
    expect(edited.otherFiles).toEqual([]);
  });

  it("reports cross-file breakage in files that import the edited one", async () => {
    const branch = await ws.branch();
    const result = await host.lint(branch, "src/math.ts", {
      content: MATH.replace("add(a: number, b: number)", "add(a: number)").replace("a + b", "a"),
    });
    expect(result.introduced).toEqual([]);
    expect(result.otherFiles).toHaveLength(1);
    expect(result.otherFiles[0]?.path).toBe("src/use.ts");
    expect(result.otherFiles[0]?.introduced[0]).toMatchObject({ line: 3, code: "2554" });
  });

  it("lints a branch's changed file as it is, against the user's folder", async () => {
    const branch = await ws.branch({
      "src/use.ts": `${USE}export const wrong: string = add(1, 2);\n`,
    });
    const result = await host.lint(branch, "src/use.ts");
    expect(result.introduced.map((d) => [d.line, d.code])).toEqual([[4, "2322"]]);
  });

  it("navigates the branch's unsaved state with workspace-relative paths", async () => {
    const branch = await ws.branch({ "src/math.ts": `// shifted\n// twice\n${MATH}` });
    const definition = await host.definition(branch, "src/use.ts", { line: 3, column: 31 });
    expect(definition).toEqual([
      { path: "src/math.ts", line: 3, column: 17, endLine: 3, endColumn: 20, external: false },
    ]);
    const references = await host.references(branch, "src/math.ts", { line: 3, column: 17 });
    expect(references.map((r) => `${r.path}:${r.line}`).sort()).toEqual([
      "src/math.ts:3",
      "src/use.ts:1",
      "src/use.ts:3",
    ]);
    const hover = await host.hover(branch, "src/use.ts", { line: 3, column: 31 });
    expect(hover?.text).toContain("add(a: number, b: number): number");
    const symbols = await host.documentSymbols(branch, "src/math.ts");
    expect(symbols.map((s) => [s.name, s.kind, s.location.line])).toEqual([
      ["add", "function", 3],
      ["broken", "variable", 7],
    ]);
    const found = await host.workspaceSymbols(branch, "add", { languages: ["typescript"] });
    expect(found.find((s) => s.name === "add")?.location).toMatchObject({ path: "src/math.ts", line: 3 });
    const lib = await host.definition(branch, "src/use.ts", { line: 3, column: 14 });
    expect(lib[0]?.path).toBe("src/use.ts");
  });

  it("keeps two branches editing the same file apart while interleaved", async () => {
    const a = await ws.branch();
    const b = await ws.branch();
    const contentA = (i: number): string => MATH.replace("a + b", `a + b + onlyInA${i}`);
    const contentB = (i: number): string =>
      `${MATH.replace("add(a: number, b: number)", "add(a: string, b: number)")}export const x = onlyInB${i};\n`;
    const runs = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        i % 2 === 0
          ? host.lint(a, "src/math.ts", { content: contentA(i) })
          : host.lint(b, "src/math.ts", { content: contentB(i) }),
      ),
    );
    runs.forEach((result, i) => {
      const names = result.introduced.map((d) => /'(\w+)'/.exec(d.message)?.[1]);
      if (i % 2 === 0) {
        expect(names).toEqual([`onlyInA${i}`]);
        expect(result.otherFiles).toEqual([]);
      } else {
        expect(result.introduced.map((d) => d.code)).toContain("2304");
        expect(names).toContain(`onlyInB${i}`);
        expect(names.some((n) => n?.startsWith("onlyInA"))).toBe(false);
        expect(result.otherFiles.map((f) => f.path)).toEqual(["src/use.ts"]);
        expect(result.otherFiles[0]?.introduced[0]?.code).toBe("2345");
      }
      const other = JSON.stringify(result).match(/onlyIn[AB]\d+/g) ?? [];
      expect(new Set(other)).toEqual(new Set([`onlyIn${i % 2 === 0 ? "A" : "B"}${i}`]));
    });
    // Back on the user's folder content for a third branch.
    const clean = await host.lint(await ws.branch(), "src/use.ts");
    expect(clean.diagnostics).toEqual([]);
  });
});

describe("TypeScript branches with their own changes", () => {
  it("lints a dependent file against each branch's own version of its import", async () => {
    const a = await ws.branch({
      "src/math.ts": MATH.replace("add(a: number, b: number)", "add(a: number)").replace("a + b", "a"),
    });
    const b = await ws.branch({ "src/math.ts": `// only a comment\n${MATH}` });
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => host.lint(i % 2 === 0 ? a : b, "src/use.ts")),
    );
    runs.forEach((result, i) => {
      expect(result.diagnostics.map((d) => d.code)).toEqual(i % 2 === 0 ? ["2554"] : []);
    });
    const stillA = await host.definition(a, "src/use.ts", { line: 3, column: 31 });
    const stillB = await host.definition(b, "src/use.ts", { line: 3, column: 31 });
    expect([stillA[0]?.line, stillB[0]?.line]).toEqual([1, 2]);
  });
});

describe("TypeScript and the user's own edits", () => {
  it("sees a file the user changed once told", async () => {
    const userRoot = `${dir}/user-edits`;
    await writeTree(userRoot, {
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }),
      "src/math.ts": MATH,
      "src/use.ts": USE,
    });
    const user = await SandboxedWorkspace.open(userRoot);
    try {
      const branch = await user.branch();
      expect((await user.host.lint(branch, "src/use.ts")).diagnostics).toEqual([]);
      await writeTree(userRoot, { "src/math.ts": MATH.replace("b: number", "b: string") });
      await user.host.notifyFilesChanged(userRoot, ["src/math.ts"]);
      const after = await user.host.lint(branch, "src/use.ts");
      expect(after.diagnostics.map((d) => d.code)).toEqual(["2345"]);
    } finally {
      await user.close();
    }
  });
});
