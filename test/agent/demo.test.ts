import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readCassette } from "../../src/agent/cassette.js";
import { demoCassette } from "../../src/cli/demo-command.js";
import { scaled } from "../helpers/wait.js";
import { cleanup, EXAMPLES, fingerprint } from "../helpers/workspace.js";
import { testEnv } from "./helpers.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
/** Bounds for hangs: one demo is a whole session with language servers; a test runs two. */
const DEMO_TIMEOUT_MS = scaled(240_000);
vi.setConfig({ testTimeout: 2 * DEMO_TIMEOUT_MS + scaled(20_000) });
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error("dist/ is missing: run `npm run build` first");
  ({ home, env } = await testEnv());
});
afterAll(async () => {
  await cleanup(home);
});

function demo() {
  const result = spawnSync(process.execPath, [CLI, "demo"], {
    env,
    encoding: "utf8",
    timeout: DEMO_TIMEOUT_MS,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("umbra demo: the agent, replayed from a hand-written cassette", () => {
  it("says the cassette is hand-written", () => {
    expect(readCassette(demoCassette()).header.note).toMatch(
      /^hand-written, not a recording of a real model/,
    );
  });

  it("fixes the planted bug offline, twice with identical diffs, and leaves examples/ alone", async () => {
    const before = await fingerprint(EXAMPLES);
    const first = demo();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("REPLAYED from a cassette (hand-written, not a recording of a real model");
    expect(first.stdout).toMatch(/✗ run_command python3 -B -m doctest inventory\/stock\.py .*exit status 1/);
    expect(first.stdout).toMatch(/error reportUndefinedVariable: "wanted" is not defined/);
    expect(first.stdout).toContain("every request matched the recording");
    expect(first.stdout).toMatch(/before applying\): tests FAIL/);
    expect(first.stdout).toMatch(/after applying\): tests passed/);
    const diffOf = (out: string) =>
      out.slice(out.indexOf("diff --git a/inventory"), out.indexOf("  inventory/stock.py in the copy"));
    expect(diffOf(first.stdout)).toContain("+        if self.available(sku) < quantity:");
    const second = demo();
    expect(second.code, second.stderr).toBe(0);
    expect(diffOf(second.stdout)).toBe(diffOf(first.stdout));
    expect(await fingerprint(EXAMPLES)).toBe(before);
  });
});
