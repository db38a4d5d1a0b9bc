import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

describe("the retrieval benchmark", () => {
  it("passes its selftest (BM25 and metric arithmetic, the opening post of an issue thread)", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(ROOT, "bench", "retrieval", "selftest.mjs"),
    ]);
    expect(stdout).toMatch(/^retrieval selftest: ok/);
  });
});
