import { spawnSync } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { formatLint } from "../../src/cli/lint-command.js";
import { fork } from "../../src/shadow/index.js";
import { umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

// Each CLI call may wait up to two minutes for a server on a loaded machine.
vi.setConfig({ testTimeout: 600_000 });

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

function umbra(args: string[], input?: string) {
  return umbraSync(env, args, input);
}

beforeEach(async () => {
  home = await tempDir("lint-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
  // A loaded machine may take far longer than the defaults to settle a lint (the user's own settings;
  // below the 120 s after which the test helper kills a command).
  await mkdir(join(home, "config", "umbra"), { recursive: true });
  await writeFile(
    join(home, "config", "umbra", "config.json"),
    JSON.stringify({ lsp: { requestTimeoutMs: 90_000, lintTimeoutMs: 100_000 } }),
  );
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

describe("umbra lint", () => {
  it("finds the workspace from a subfolder: the nearest folder with .git", async () => {
    await mkdir(join(root, ".git"));
    const run = umbraSync(env, ["lint", "invoice.ts", "--json"], undefined, join(root, "billing"));
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { path: string }).path).toBe("billing/invoice.ts");
  });

  it("never lints a file through a link out of the workspace, nor a hidden one", async () => {
    const secret = join(home, "id_rsa.ts");
    await writeFile(secret, "const key = 'PRIVATE-KEY-MATERIAL';\n");
    await symlink(secret, join(root, "billing", "key.ts"));
    await writeFile(join(root, ".umbraignore"), "secret.ts\n");
    await writeFile(join(root, "secret.ts"), "const token: number = 'TOKEN-VALUE';\n");
    for (const file of ["billing/key.ts", "secret.ts"]) {
      const run = umbra(["lint", file, "--root", root, "--json"]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout + run.stderr).not.toMatch(/PRIVATE-KEY-MATERIAL|TOKEN-VALUE/);
    }
  });

  it("reports what an edit introduces, without writing the file, and exits 1 on introduced errors", async () => {
    const before = await fingerprint(root);
    const original = await readFile(join(root, "billing", "invoice.ts"), "utf8");
    const edited = original.replace(
      "return item.unitPrice.cents * item.quantity;",
      'return "x" + item.unitPrice.cents * item.quantity;',
    );
    expect(edited).not.toBe(original);

    const fromStdin = umbra(
      ["lint", "billing/invoice.ts", "--root", root, "--content", "-", "--json"],
      edited,
    );
    expect(fromStdin.stderr).toBe("");
    expect(fromStdin.code).toBe(1);
    const result = JSON.parse(fromStdin.stdout) as {
      path: string;
      language: string;
      introduced: { line: number; severity: string; message: string }[];
      partial: boolean;
    };
    expect(result.path).toBe("billing/invoice.ts");
    expect(result.partial).toBe(false);
    expect(result.introduced).toEqual(
      expect.arrayContaining([expect.objectContaining({ line: 23, severity: "error" })]),
    );

    const contentFile = join(root, "..", "edited.ts");
    await writeFile(contentFile, edited);
    const human = umbra([
      "lint",
      join(root, "billing", "invoice.ts"),
      "--root",
      root,
      "--content",
      contentFile,
    ]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/billing\/invoice\.ts:23:\d+: error .*\[introduced\]/);

    const asItIs = umbra(["lint", "billing/invoice.ts", "--root", root]);
    expect(asItIs.code).toBe(0);
    expect(asItIs.stdout).toMatch(/0 diagnostic\(s\) in billing\/invoice\.ts, 0 introduced/);

    expect(await fingerprint(root)).toBe(before);
    expect(umbra(["shadow", "list", "--root", root, "--json"]).stdout.trim()).toBe("[]");
  });

  it("runs Python, Go and C servers inside the sandbox and reports what an edit introduces", async () => {
    const before = await fingerprint(root);
    const python = umbra(
      ["lint", "inventory/stock.py", "--root", root, "--content", "-", "--json"],
      `${await readFile(join(root, "inventory", "stock.py"), "utf8")}\nprint(undefined_name_here)\n`,
    );
    expect(python.code).toBe(1);
    expect(JSON.stringify(JSON.parse(python.stdout).introduced)).toMatch(/undefined_name_here/);
    expect(await fingerprint(root)).toBe(before);

    const hasGo = spawnSync("gopls", ["version"]).status === 0;
    const hasClangd = spawnSync("clangd", ["--version"]).status === 0;
    const project = join(root, "..", "native-project");
    await mkdir(project);
    await writeFile(join(project, "go.mod"), "module example.com/m\n\ngo 1.19\n");
    await writeFile(join(project, "main.go"), "package main\n\nfunc main() {\n\tprintln(1)\n}\n");
    await writeFile(join(project, "util.c"), "int answer(void) { return 42; }\n");
    const projectBefore = await fingerprint(project);
    if (hasGo) {
      const go = umbra(
        ["lint", "main.go", "--root", project, "--content", "-", "--json"],
        "package main\n\nfunc main() {\n\tprintln(missingName)\n}\n",
      );
      expect(go.code).toBe(1);
      expect(JSON.stringify(JSON.parse(go.stdout).introduced)).toMatch(/missingName/);

      // A dependency that is not downloaded: gopls cannot load the package, so "no errors" would lie.
      const broken = join(root, "..", "go-missing-dependency");
      await mkdir(broken);
      await writeFile(
        join(broken, "go.mod"),
        "module example.com/b\n\ngo 1.19\n\nrequire example.invalid/nothere v1.0.0\n",
      );
      await writeFile(
        join(broken, "main.go"),
        'package main\n\nimport "example.invalid/nothere"\n\nfunc main() { nothere.Run() }\n',
      );
      const partial = umbra(
        ["lint", "main.go", "--root", broken, "--content", "-"],
        'package main\n\nimport "example.invalid/nothere"\n\nvar n int = "x"\n\nfunc main() { nothere.Run() }\n',
      );
      expect(partial.code).toBe(3);
      expect(partial.stdout).toMatch(/^partial: .*example\.invalid\/nothere/m);
    }
    if (hasClangd) {
      const c = umbra(
        ["lint", "util.c", "--root", project, "--content", "-", "--json"],
        "int answer(void) { return missing_value; }\n",
      );
      expect(c.code).toBe(1);
      expect(JSON.stringify(JSON.parse(c.stdout).introduced)).toMatch(/missing_value/);
    }
    expect(await fingerprint(project)).toBe(projectBefore);
  });

  it("rejects bad input with exit 2 and a one-line reason", () => {
    const missing = umbra(["lint", "billing/nope.ts", "--root", root]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);
    const outside = umbra(["lint", "/etc/hostname", "--root", root]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/not inside the workspace/);
    const unknown = umbra(["lint", "docs/operations.md", "--root", root]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no language server/);
    const badContent = umbra(["lint", "billing/invoice.ts", "--root", root, "--content", join(root, "nope")]);
    expect(badContent.code).toBe(2);
  });
});

describe("formatLint", () => {
  it("names the files checked and skipped, and why a result is partial", () => {
    const text = formatLint({
      path: "a.py",
      language: "python",
      diagnostics: [],
      introduced: [],
      otherFiles: [],
      checkedFiles: ["b.py", "c.py"],
      skippedFiles: ["d.py", "e.py"],
      partial: true,
      partialReasons: ["errors loading workspace: missing go.sum entry"],
      version: 2,
      elapsedMs: 12,
    });
    expect(text).toMatch(
      /^checked 2 other file\(s\); skipped 2 importer\(s\) past the limit: d\.py, e\.py$/m,
    );
    expect(text).toMatch(/^partial: errors loading workspace: missing go\.sum entry$/m);
  });
});

describe("umbra shadow", () => {
  it("lists a branch, prints its diff, and discards it", async () => {
    const before = await fingerprint(root);
    const branch = await fork(root, { env });
    branch.write("billing/tax.ts", "export const RATE = 0.2;\n");
    branch.write("notes.txt", "new file\n");
    await branch.materialize();
    await branch.close();

    const list = umbra(["shadow", "list", "--root", root, "--json"]);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((b) => b.id)).toEqual([branch.id]);

    const diff = umbra(["shadow", "diff", branch.id, "--root", root]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toMatch(/^diff --git a\/billing\/tax\.ts b\/billing\/tax\.ts$/m);
    expect(diff.stdout).toMatch(/^\+export const RATE = 0\.2;$/m);
    expect(diff.stdout).toMatch(/^diff --git a\/notes\.txt b\/notes\.txt$/m);

    expect(umbra(["shadow", "diff", "no-such-branch", "--root", root]).code).toBe(2);
    const discard = umbra(["shadow", "discard", branch.id, "--root", root]);
    expect(discard.code).toBe(0);
    expect(umbra(["shadow", "list", "--root", root, "--json"]).stdout.trim()).toBe("[]");
    expect(await fingerprint(root)).toBe(before);
  });
});

describe("umbra demo", () => {
  it("indexes, searches and lints an agent's edit in a shadow branch of a copy of examples/", () => {
    const demo = umbra(["demo"]);
    expect(demo.code).toBe(0);
    expect(demo.stdout).toMatch(/indexed 9 files/);
    expect(demo.stdout).toMatch(/billing\/invoice\.ts:1:\d+: error .*formatMoney.*\[introduced\]/);
    expect(demo.stdout).toMatch(/billing\/money\.ts on disk is unchanged: true/);
  });
});
