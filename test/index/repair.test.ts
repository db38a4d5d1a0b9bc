import { readdir, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { workspaceDir } from "../../src/config/paths.js";
import { indexLayout } from "../../src/index/layout.js";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("repair-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

/** Every file of one folder of the vector table (data files, or version manifests). */
async function tableFiles(folder: "data" | "_versions"): Promise<string[]> {
  const dir = join(indexLayout(workspaceDir(root, env)).vectors, "chunks.lance", folder);
  return (await readdir(dir)).map((name) => join(dir, name));
}

const damages: Record<string, () => Promise<void>> = {
  "truncated data files": async () => {
    for (const file of await tableFiles("data"))
      await truncate(file, Math.floor((await stat(file)).size / 2));
  },
  "garbled version manifests": async () => {
    for (const file of await tableFiles("_versions")) await writeFile(file, "not a manifest".repeat(50));
  },
};

describe("a corrupt vector table", () => {
  for (const [damage, corrupt] of Object.entries(damages)) {
    it(`with ${damage}: search says so in one line, index rebuilds it`, async () => {
      expect(umbraSync(env, ["index", root]).code).toBe(0);
      await corrupt();

      const broken = umbraSync(env, ["search", "parseMoney", "--root", root, "--json"]);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toBe("");
      const lines = broken.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^umbra: the vector index in .* is unreadable \(.*\); run `umbra index` to rebuild it$/,
      );
      expect(lines[0]).not.toMatch(/Caused by|rustc|cargo/);

      const repair = umbraSync(env, ["index", root]);
      expect(repair.code).toBe(0);
      expect(repair.stderr).toMatch(/umbra: the vector index was unreadable \(.*\); rebuilding it/);
      expect(repair.stdout).toMatch(/indexed 9 files/);

      const fixed = umbraSync(env, ["search", "parseMoney", "--root", root, "--json"]);
      expect(fixed.code).toBe(0);
      expect((JSON.parse(fixed.stdout) as { path: string }[])[0]?.path).toBe("billing/money.ts");
      const again = umbraSync(env, ["index", root]);
      expect(again.stderr).not.toMatch(/unreadable/);
      expect(again.stdout).toMatch(/0 added, 0 modified/);
    });
  }
});
