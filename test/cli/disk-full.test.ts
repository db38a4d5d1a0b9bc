import { spawnSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { scaled } from "../helpers/wait.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
/** A bound for a hang: the script indexes 309 files twice and searches (93 s on a loaded machine). */
const SCRIPT_TIMEOUT_MS = scaled(300_000);
vi.setConfig({ testTimeout: SCRIPT_TIMEOUT_MS + scaled(30_000) });

/** A private mount namespace with a tmpfs is possible only as root (CI runs as root). */
function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync("unshare", ["-m", "true"]).status === 0;
}

let home: string;
let root: string;
beforeEach(async () => {
  home = await tempDir("full-home");
  root = await copyExamples();
  await mkdir(join(root, "gen"));
  for (let i = 0; i < 300; i++) {
    const body = Array.from({ length: 30 }, (_, j) => `    value_${j} = source_${i}_${j} * ${j}`).join("\n");
    await writeFile(
      join(root, "gen", `module_${i}.py`),
      `def generated_${i}(source):\n${body}\n    return value_0\n`,
    );
  }
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

describe.runIf(canMountTmpfs())("a full disk", () => {
  it("fails the run with a clear error and leaves an index that the next run completes", () => {
    const script = `
      set -u
      mount -t tmpfs -o size=700k tmpfs "$UMBRA_HOME"
      node "$CLI" index "$ROOT" > /dev/null 2> "$OUT/first.err"; echo $? > "$OUT/first.code"
      mount -o remount,size=256m "$UMBRA_HOME"
      node "$CLI" index "$ROOT" --json > "$OUT/second.json" 2> "$OUT/second.err"; echo $? > "$OUT/second.code"
      node "$CLI" search generated_123 --root "$ROOT" --json > "$OUT/search.json"
    `;
    const out = join(root, "..");
    const env = { ...process.env, UMBRA_HOME: home, CLI, ROOT: root, OUT: out };
    const run = spawnSync("unshare", ["-m", "bash", "-c", script], {
      env,
      encoding: "utf8",
      timeout: SCRIPT_TIMEOUT_MS,
    });
    expect(run.status).toBe(0);
    const read = (name: string) => spawnSync("cat", [join(out, name)], { encoding: "utf8" }).stdout.trim();
    expect(read("first.code")).toBe("1");
    const firstError = read("first.err")
      .split("\n")
      .filter((line) => line.startsWith("umbra:"));
    expect(firstError.at(-1)).toMatch(/ENOSPC|no space|disk is full|full/i);
    expect(read("second.code")).toBe("0");
    expect((JSON.parse(read("second.json")) as { files: number }).files).toBe(309);
    expect((JSON.parse(read("search.json")) as { path: string }[])[0]?.path).toBe("gen/module_123.py");
  });
});
