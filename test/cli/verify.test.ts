import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keptBranch, umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

// Each CLI call may wait for a language server on a loaded machine.
vi.setConfig({ testTimeout: 600_000 });

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

const umbra = (args: string[]) => umbraSync(env, args);

beforeEach(async () => {
  home = await tempDir("verify-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
  await mkdir(join(home, "config", "umbra"), { recursive: true });
  await writeFile(
    join(home, "config", "umbra", "config.json"),
    JSON.stringify({
      lsp: { requestTimeoutMs: 90_000, lintTimeoutMs: 100_000 },
      agent: { testCommand: "grep -q 'food: 5' billing/tax.ts" },
    }),
  );
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

/** A kept branch made by a command (as an agent's run_command would). */
function branchWith(script: string): string {
  const made = keptBranch(env, root, script);
  expect(made.code, made.stderr).toBe(0);
  expect(made.id).toBeTruthy();
  return made.id as string;
}

describe("umbra shadow apply --verify", () => {
  it("refuses a change that introduces a type error, and writes nothing", async () => {
    const id = branchWith("sed -i 's/  food: 7,/  food: \"five\",/' billing/tax.ts");
    const before = await fingerprint(root);
    const run = umbra(["shadow", "apply", id, "--root", root, "--verify"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/verify: lint: billing\/tax\.ts:3:/);
    expect(run.stderr).toContain("nothing was written");
    expect(await fingerprint(root)).toBe(before);
  });

  it("refuses a change whose tests fail there, and applies one that passes", async () => {
    const failing = branchWith("sed -i 's/  food: 7,/  food: 6,/' billing/tax.ts");
    const before = await fingerprint(root);
    const refused = umbra(["shadow", "apply", failing, "--root", root, "--verify"]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/verify: tests failed/);
    expect(await fingerprint(root)).toBe(before);
    const passing = branchWith("sed -i 's/  food: 7,/  food: 5,/' billing/tax.ts");
    const applied = umbra(["shadow", "apply", passing, "--root", root, "--verify"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain("verified in a fresh branch");
    expect(await readFile(join(root, "billing", "tax.ts"), "utf8")).toContain("  food: 5,");
  });
});
