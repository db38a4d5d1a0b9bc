import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { which } from "../../src/lsp/registry.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";
import { REAL_SERVER_TEST_TIMEOUTS, SandboxedWorkspace, writeTree } from "./helpers.js";

vi.setConfig(REAL_SERVER_TEST_TIMEOUTS);

const hasGopls = which("gopls") !== undefined && which("go") !== undefined;
const hasClangd = which("clangd") !== undefined;

const MATH_GO = `package calc

// Add adds.
func Add(a, b int) int { return a + b }
`;
const USE_GO = `package calc

func Use() int { return Add(1, 2) }
`;
const MATH_H = `int add(int a, int b);
`;
const USE_C = `#include "math.h"

int use(void) { return add(1, 2); }
int broken(void) { return missing_before; }
`;

let dir: string;
let goRoot: string;
let cRoot: string;
let brokenRoot: string;
let go: SandboxedWorkspace;
let c: SandboxedWorkspace;
const fingerprints = new Map<string, string>();

beforeAll(async () => {
  dir = await tempDir("lsp-go-c");
  goRoot = `${dir}/goproj`;
  cRoot = `${dir}/cproj`;
  brokenRoot = `${dir}/goproj-missing-dependency`;
  await writeTree(goRoot, {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "math.go": MATH_GO,
    "use.go": USE_GO,
  });
  await writeTree(cRoot, {
    "compile_commands.json": JSON.stringify([
      { directory: cRoot, file: "use.c", arguments: ["cc", "-c", "use.c"] },
    ]),
    "math.h": MATH_H,
    "use.c": USE_C,
  });
  // A module whose dependency is not in the module cache (and cannot be downloaded in the sandbox).
  await writeTree(brokenRoot, {
    "go.mod": "module example.com/broken\n\ngo 1.19\n\nrequire example.invalid/nothere v1.0.0\n",
    "main.go": 'package main\n\nimport "example.invalid/nothere"\n\nfunc main() { nothere.Run() }\n',
    "other.go": "package main\n\nfunc other() int { return 1 }\n",
  });
  for (const root of [goRoot, cRoot, brokenRoot]) fingerprints.set(root, await fingerprint(root));
  go = await SandboxedWorkspace.open(goRoot);
  c = await SandboxedWorkspace.open(cRoot);
});

afterAll(async () => {
  await go?.close();
  await c?.close();
  for (const [root, print] of fingerprints) expect(await fingerprint(root)).toBe(print);
  await cleanup(dir);
});

describe("Go (gopls)", () => {
  it.skipIf(!hasGopls)("lints an edit with cross-file effects and navigates", async () => {
    const host = go.host;
    const branch = await go.branch();
    const result = await host.lint(branch, "math.go", {
      content: `${MATH_GO.replace("func Add(a, b int) int { return a + b }", "func Add(a int) int { return a }")}\nvar x = onlyHere\n`,
    });
    expect(result.partial).toBe(false);
    expect(result.introduced.map((d) => d.message)).toEqual([expect.stringContaining("onlyHere")]);
    expect(result.otherFiles.map((f) => f.path)).toEqual(["use.go"]);
    expect(result.otherFiles[0]?.introduced[0]?.message).toMatch(/too many arguments/);

    const nav = await go.branch({ "math.go": `// shifted\n${MATH_GO}` });
    const definition = await host.definition(nav, "use.go", { line: 3, column: 25 });
    expect(definition[0]).toMatchObject({ path: "math.go", line: 5, external: false });
    const symbols = await host.documentSymbols(nav, "math.go");
    expect(symbols.map((s) => s.name)).toContain("Add");
  });
});

describe("Go on a machine that never ran go", () => {
  it.skipIf(!hasGopls)(
    "gives gopls' go list a private build cache instead of answering nothing, and writes none in the home folder",
    async () => {
      // Outside /tmp, which the sandbox replaces by a private one: like ~/.cache/go-build before any go run.
      const caches = await mkdtemp(join(existsSync("/var/tmp") ? "/var/tmp" : homedir(), "umbra-gocache-"));
      const goCache = join(caches, "go-build");
      const fresh = await SandboxedWorkspace.open(goRoot, { env: { ...process.env, GOCACHE: goCache } });
      try {
        const result = await fresh.host.lint(await fresh.branch(), "use.go", {
          content: `${USE_GO}\nvar n int = "x"\n`,
        });
        expect(result.partialReasons).toEqual([]);
        expect(result.introduced.map((d) => d.message).join("\n")).toMatch(/cannot use "x"/);
        expect(existsSync(goCache)).toBe(false);
      } finally {
        await fresh.close();
        await cleanup(caches);
      }
    },
  );
});

describe("Go with a dependency that is not downloaded", () => {
  it.skipIf(!hasGopls)(
    "says the lint is partial, with gopls' reason, instead of reporting nothing",
    async () => {
      const broken = await SandboxedWorkspace.open(brokenRoot);
      try {
        const result = await broken.host.lint(await broken.branch(), "other.go", {
          content: 'package main\n\nfunc other() int { var n int = "x"; return n }\n',
        });
        expect(result.partial).toBe(true);
        expect(result.partialReasons.join("\n")).toMatch(/example\.invalid\/nothere/);
        // The server is not restarted for it: it answered, the project is what cannot load.
        expect(broken.host.status()[0]).toMatchObject({ crashes: 0, unresponsiveRestarts: 0 });
      } finally {
        await broken.close();
      }
    },
  );
});

describe("C (clangd)", () => {
  it.skipIf(!hasClangd)("lints an edit against the unedited file and navigates", async () => {
    const host = c.host;
    const branch = await c.branch();
    const asIs = await host.lint(branch, "use.c");
    expect(asIs.diagnostics.map((d) => d.line)).toEqual([4]);
    const result = await host.lint(branch, "use.c", {
      content: `// new first line\n${USE_C}int more(void) { return only_here; }\n`,
    });
    expect(result.diagnostics.map((d) => d.line)).toEqual([5, 6]);
    expect(result.introduced.map((d) => [d.line, d.message])).toEqual([
      [6, "Use of undeclared identifier 'only_here'"],
    ]);
    const definition = await host.definition(branch, "use.c", { line: 3, column: 24 });
    expect(definition[0]).toMatchObject({ path: "math.h", line: 1 });
    const symbols = await host.documentSymbols(branch, "use.c");
    expect(symbols.map((s) => s.name)).toEqual(expect.arrayContaining(["use", "broken"]));
  });
});
