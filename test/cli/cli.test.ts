import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { holdingEmbeddingServer } from "../fakes/fake-embeddings.js";
import { CLI, requireBuiltCli, umbraAsync, umbraSync } from "../helpers/cli.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

function umbra(args: string[], input?: string) {
  return umbraSync(env, args, input);
}

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("cli-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

describe("umbra CLI", () => {
  it("indexes, searches (argument, stdin, JSON), greps and reports status", async () => {
    const before = await fingerprint(root);
    const index = umbra(["index", root]);
    expect(index.code).toBe(0);
    expect(index.stdout).toMatch(/indexed 9 files/);

    const search = umbra(["search", "--root", root, "--json", "--limit", "3", "parse", "money", "amount"]);
    expect(search.code).toBe(0);
    const hits = JSON.parse(search.stdout) as Record<string, unknown>[];
    expect(hits).toHaveLength(3);
    expect(Object.keys(hits[0] ?? {}).sort()).toEqual([
      "defines",
      "endLine",
      "path",
      "score",
      "stale",
      "startLine",
      "symbol",
    ]);
    expect(hits[0]?.path).toBe("billing/money.ts");

    const stdin = umbra(
      ["search", "-", "--root", root, "--json"],
      'Traceback:\n  File "inventory/stock.py", line 27, in reserve\n',
    );
    expect((JSON.parse(stdin.stdout) as { path: string }[])[0]?.path).toBe("inventory/stock.py");

    const filtered = umbra(["search", "total", "--root", root, "--json", "--lang", "python"]);
    for (const hit of JSON.parse(filtered.stdout) as { path: string }[]) expect(hit.path).toMatch(/\.py$/);
    const globbed = umbra(["search", "total", "--root", root, "--json", "--path", "billing/**"]);
    for (const hit of JSON.parse(globbed.stdout) as { path: string }[])
      expect(hit.path).toMatch(/^billing\//);
    // a name pattern matches at any depth, as ripgrep's --glob does
    const byName = JSON.parse(umbra(["search", "total", "--root", root, "--json", "--path", "*.py"]).stdout);
    expect((byName as { path: string }[]).map((hit) => hit.path)).toContain("inventory/stock.py");
    // a glob that sends a backtracking matcher into hours answers like any other; a bad one is one line
    const hostile = umbra(["search", "total", "--root", root, "--json", "--path", `**/${"*?".repeat(40)}#`]);
    expect(hostile.code).toBe(0);
    expect(JSON.parse(hostile.stdout)).toEqual([]);
    const bad = umbra(["search", "total", "--root", root, "--path", "{a,b}".repeat(9)]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/more than 256 alternatives/);

    const grep = umbra(["grep", "OutOfStock\\(", "--root", root, "--json"]);
    expect(grep.code).toBe(0);
    expect((JSON.parse(grep.stdout) as { path: string }[]).map((m) => m.path)).toContain(
      "inventory/stock.py",
    );

    const status = umbra(["status", "--root", root, "--json"]);
    const parsed = JSON.parse(status.stdout) as Record<string, unknown>;
    expect(parsed).toMatchObject({ indexed: true, files: 9 });
    expect(parsed.rootHash).toMatch(/^[0-9a-f]{64}$/);
    expect(parsed.embedder).toMatch(/^umbra-code-ppmi-svd-/);
    expect(await fingerprint(root)).toBe(before);
  });

  it("answers bad input with exit status 2 and a one-line reason", async () => {
    const missing = umbra(["index", join(root, "missing")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.stderr).toMatch(/does not exist/);

    const notIndexed = umbra(["search", "x", "--root", root]);
    expect(notIndexed.code).toBe(2);
    expect(notIndexed.stderr).toMatch(/no index yet/);

    expect(umbra(["search", "x", "--root", root, "--limit", "zero"]).code).toBe(2);
    expect(umbra(["index", join(root, "README.md")]).code).toBe(2);
    expect(umbra(["frobnicate"]).code).toBe(2);
  });

  it("warns when ignore files leave nothing to index", async () => {
    await writeFile(join(root, ".cursorignore"), "*\n");
    const result = umbra(["index", root]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/nothing was indexed/);
    expect(result.stderr).toMatch(/ignored/);
  });

  it("resumes after kill -9 without redoing finished files", async () => {
    // The embedder answers the first batches and then holds every request: the run is killed with some
    // batches committed and the rest not, however fast or busy the machine is.
    const embeddings = await holdingEmbeddingServer(3);
    try {
      await mkdir(join(home, "config", "umbra"), { recursive: true });
      await writeFile(
        join(home, "config", "umbra", "config.json"),
        JSON.stringify({
          index: {
            filesPerBatch: 20,
            embedder: { provider: "openai", baseUrl: embeddings.url, model: "m", dimensions: 4 },
          },
        }),
      );
      await mkdir(join(root, "gen"));
      const total = 200 + 9; // generated files and those of examples/
      for (let i = 0; i < 200; i++) {
        const body = Array.from(
          { length: 12 },
          (_, j) => `    total_${j} = value_${i} * ${j} + offset_${(i * j) % 97}`,
        ).join("\n");
        await writeFile(
          join(root, "gen", `module_${i}.py`),
          `def compute_${i}(value_${i}, offset):\n${body}\n    return total_0\n`,
        );
      }
      const child: ChildProcess = spawn(process.execPath, [CLI, "index", root], { env, stdio: "ignore" });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      // Asynchronous: the embedding server lives in this process.
      const files = async () => {
        const status = await umbraAsync(env, ["status", "--root", root, "--json"]);
        return status.code === 0 ? (JSON.parse(status.stdout) as { files: number }).files : 0;
      };
      let indexedBeforeKill = 0;
      await waitUntil(
        async () => {
          if (!embeddings.holding()) return false;
          indexedBeforeKill = await files();
          return indexedBeforeKill > 0;
        },
        "the first batches to be committed while the embedder holds the next",
        120_000,
      );
      child.kill("SIGKILL");
      await exited;
      const afterKill = await files();
      expect(afterKill).toBeGreaterThanOrEqual(indexedBeforeKill);
      expect(afterKill).toBeLessThan(total);

      embeddings.release();
      const resumed = await umbraAsync(env, ["index", root, "--json"]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const report = JSON.parse(resumed.stdout) as { files: number; changes: { added: number } };
      expect(report.files).toBe(total);
      expect(report.changes.added).toBe(total - afterKill);
    } finally {
      await embeddings.close();
    }
  });
});
