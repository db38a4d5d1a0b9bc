#!/usr/bin/env node
// @ts-check
/**
 * What the sandbox costs a lint: the same warm one-line-edit lint, alternately on a server started
 * through the product's sandboxed branch launcher and on one started as a plain child process (the
 * launcher the benchmarks used before), in the same run, so both see the same machine load.
 * Usage: node bench/lint/sandbox-cost.mjs [--iterations 10] [--language typescript|python|go|c]
 * Needs `npm run build` first.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { productHost } from "./product.mjs";
import { cProject, goProject, percentile, pythonProject, ROOT, typescriptProject } from "./projects.mjs";

const { values } = parseArgs({
  options: {
    iterations: { type: "string", default: "10" },
    language: { type: "string", default: "typescript" },
  },
});
const makers = { typescript: typescriptProject, python: pythonProject, go: goProject, c: cProject };
const project = makers[/** @type {keyof typeof makers} */ (values.language)]?.();
if (!project) throw new Error(`no project for ${values.language}`);
const { LspHost } = await import(join(ROOT, "dist", "lsp", "host.js"));
const base = readFileSync(join(project.root, project.file), "utf8");
const sandboxed = await productHost(project.root);
const plain = new LspHost();
const plainBranch = {
  id: "plain",
  workspaceRoot: project.root,
  readText: async (/** @type {string} */ rel) => {
    try {
      return readFileSync(join(project.root, rel), "utf8");
    } catch {
      return undefined;
    }
  },
  changes: async () => [],
};
await sandboxed.host.lint(sandboxed.branch, project.file, { crossFile: false });
await plain.lint(plainBranch, project.file, { crossFile: false });
/** @type {number[]} */
const inSandbox = [];
/** @type {number[]} */
const outside = [];
for (let i = 1; i <= Number(values.iterations); i++) {
  const content = `${base}\n${project.line(i)}\n`;
  let t = performance.now();
  await sandboxed.host.lint(sandboxed.branch, project.file, { content, crossFile: false });
  inSandbox.push(performance.now() - t);
  t = performance.now();
  await plain.lint(plainBranch, project.file, { content, crossFile: false });
  outside.push(performance.now() - t);
}
await sandboxed.close();
await plain.shutdown();
const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(
  `${project.name}: warm lint p50 sandboxed ${Math.round(percentile(inSandbox, 50))} ms, plain ${Math.round(percentile(outside, 50))} ms ` +
    `(p95 ${Math.round(percentile(inSandbox, 95))} / ${Math.round(percentile(outside, 95))} ms, ${values.iterations} each; load ${load})`,
);
