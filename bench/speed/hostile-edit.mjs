#!/usr/bin/env node
// @ts-check
/**
 * An agent's search/replace edit (`applyEdit`, what the edit_file tool runs) whose search block matches
 * every seventh line of a long file when indentation is ignored: the file holds `    line {i % 7} value`
 * n times, the block `line {i % 7} value` k times. The edit is refused as ambiguous; the figure is how
 * long that takes.
 * Usage: node bench/speed/hostile-edit.mjs [--cases 4000x20,20000x50,200000x500] [--dist DIR]
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    cases: { type: "string", default: "4000x20,20000x50,200000x500" },
    dist: { type: "string", default: join(ROOT, "dist") },
  },
});
const { applyEdit } = await import(join(resolve(values.dist ?? ""), "agent", "edit", "edit.js"));
process.stdout.write(
  `build ${values.dist}\n| file lines | block lines | places | ms |\n| ---: | ---: | ---: | ---: |\n`,
);
for (const [n, k] of (values.cases ?? "").split(",").map((c) => c.split("x").map(Number))) {
  const original = `${Array.from({ length: n ?? 0 }, (_, i) => `    line ${i % 7} value`).join("\n")}\n`;
  const block = Array.from({ length: k ?? 0 }, (_, i) => `line ${i % 7} value`).join("\n");
  const start = performance.now();
  const result = applyEdit(original, block, "x");
  const ms = performance.now() - start;
  const places = /matches (\d+) places/.exec(result.message ?? "")?.[1] ?? "?";
  process.stdout.write(`| ${n} | ${k} | ${places} | ${ms.toFixed(0)} |\n`);
}
