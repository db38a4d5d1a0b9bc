#!/usr/bin/env node
// @ts-check
/**
 * Lint round-trip benchmark per language, next to a naive baseline measured in the same run.
 *   umbra: one LspHost started as the product starts it (a shadow branch, the sandboxed branch
 *          launcher: see product.mjs); cold = the first lint of the file (server start and project load included);
 *          warm = lint of a one-line edit (a different line each time, every other one introducing an
 *          undeclared name), through didChange and version-matched diagnostics, nothing written; first
 *          the file alone (`crossFile: false`), then with its importers checked for cross-file effects.
 *   naive: the project copied to a temporary folder, the edited file written there, the server told,
 *          then a fixed 2 s wait before reading its diagnostics (the last ones pushed, or pulled when
 *          the server only offers pull diagnostics, as tsc --lsp does).
 * Every result is checked: the undeclared name must be reported as introduced exactly when added.
 * Usage: node bench/lint/run.mjs [--iterations N] [--naive N] [--lint-timeout-ms N] [--languages typescript,python,go,c]
 * Needs `npm run build` first (dist/ and the sandbox helper). Writes bench/out/lint.{json,md}.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { productHost, rssSampler } from "./product.mjs";
import {
  cProject,
  goProject,
  PROJECTS,
  peakRssMiB,
  percentile,
  pythonProject,
  ROOT,
  typescriptProject,
} from "./projects.mjs";

const { values } = parseArgs({
  options: {
    "lint-timeout-ms": { type: "string" },
    iterations: { type: "string", default: "30" },
    naive: { type: "string", default: "5" },
    languages: { type: "string", default: "typescript,python,go,c" },
  },
});
const ITERATIONS = Number(values.iterations);
const NAIVE = Number(values.naive);
const wantedLanguages = new Set((values.languages ?? "").split(","));
const OUT = join(ROOT, "bench", "out");
const { Registry } = await import(join(ROOT, "dist", "lsp", "registry.js"));
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const round = (/** @type {number} */ x) => Math.round(x);

/** @param {string} base @param {string} line */
const edited = (base, line) => `${base.endsWith("\n") ? base : `${base}\n`}${line}\n`;

/** @param {import("./projects.mjs").Project} project */
async function measureUmbra(project) {
  let t = performance.now();
  const product = await productHost(project.root, { lintTimeoutMs: values["lint-timeout-ms"] });
  const { host, branch } = product;
  const memory = rssSampler(() => host.status().map((/** @type {{pid?: number}} */ s) => s.pid));
  const base = readFileSync(join(project.root, project.file), "utf8");
  try {
    const first = await host.lint(branch, project.file);
    const coldMs = performance.now() - t;
    const status = host.status()[0];
    let correct = 0;
    let partial = 0;
    /** @type {string[]} */
    const partialReasons = [];
    let checked = 0;
    /** Lints ITERATIONS different one-line edits; returns their wall times. @param {boolean} crossFile @param {number} offset */
    const loop = async (crossFile, offset) => {
      /** @type {number[]} */
      const times = [];
      for (let i = offset + 1; i <= offset + ITERATIONS; i++) {
        t = performance.now();
        const result = await host.lint(branch, project.file, {
          content: edited(base, project.line(i)),
          crossFile,
        });
        times.push(performance.now() - t);
        if (result.partial) {
          partial++;
          partialReasons.push(...result.partialReasons);
        }
        checked = Math.max(checked, result.checkedFiles.length);
        const names = result.introduced.map((/** @type {{message: string}} */ d) => d.message).join("\n");
        const ok =
          i % 2 === 1
            ? result.introduced.length === 1 && names.includes(project.undeclared(i))
            : result.introduced.length === 0;
        if (ok && result.otherFiles.length === 0) correct++;
        else log(`  unexpected result ${i}: ${JSON.stringify(result).slice(0, 600)}`);
      }
      return times;
    };
    const fileOnly = await loop(false, 0);
    const withImporters = await loop(true, ITERATIONS);
    memory.sample();
    const after = host.status()[0];
    return {
      server: status?.server ?? "?",
      coldMs,
      firstDiagnostics: first.diagnostics.length,
      warmP50: percentile(fileOnly, 50),
      warmP95: percentile(fileOnly, 95),
      crossP50: percentile(withImporters, 50),
      crossP95: percentile(withImporters, 95),
      checked,
      correct,
      partial,
      partialReasons: [...new Set(partialReasons)],
      crashes: after?.crashes ?? 0,
      serverPeakMiB: memory.peak(),
    };
  } finally {
    memory.stop();
    await product.close();
  }
}

/** The naive way: a copy of the project, the edited file written to it, a fixed 2 s wait. */
async function measureNaive(/** @type {import("./projects.mjs").Project} */ project) {
  const copy = join(PROJECTS, `naive-${project.language}`);
  rmSync(copy, { recursive: true, force: true });
  let t = performance.now();
  cpSync(project.root, copy, { recursive: true, verbatimSymlinks: true });
  const copyMs = performance.now() - t;
  const definition = new Registry().get(project.language);
  const spec = definition.resolveServer();
  const child = spawn(spec.command, spec.args, { cwd: copy, stdio: ["pipe", "pipe", "ignore"] });
  const rpc = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  /** @type {Map<string, {message: string}[]>} */
  const latest = new Map();
  rpc.onNotification("textDocument/publishDiagnostics", (/** @type {any} */ p) =>
    latest.set(p.uri, p.diagnostics),
  );
  rpc.onRequest((/** @type {string} */ method, /** @type {any} */ params) =>
    method === "workspace/configuration" ? params.items.map(() => null) : null,
  );
  rpc.listen();
  const rootUri = pathToFileURL(copy).href;
  /** @type {any} */
  const init = await rpc.sendRequest("initialize", {
    processId: process.pid,
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: "copy" }],
    capabilities: {
      textDocument: { publishDiagnostics: {}, diagnostic: {} },
      workspace: { configuration: true },
    },
  });
  const pull = Boolean(init.capabilities.diagnosticProvider);
  rpc.sendNotification("initialized", {});
  const path = join(copy, project.file);
  const uri = pathToFileURL(path).href;
  const base = readFileSync(path, "utf8");
  const languageId = Object.entries(definition.extensions).find(([ext]) => project.file.endsWith(ext))?.[1];
  rpc.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text: base } });
  for (let waited = 0; !latest.has(uri) && waited < 30_000; waited += 50) await sleep(50);
  /** @type {number[]} */
  const times = [];
  let correct = 0;
  for (let i = 1; i <= NAIVE; i++) {
    t = performance.now();
    const text = edited(base, project.line(i));
    writeFileSync(path, text);
    rpc.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: i + 1 },
      contentChanges: [{ text }],
    });
    await sleep(2000);
    if (pull) {
      /** @type {any} */
      const report = await rpc.sendRequest("textDocument/diagnostic", { textDocument: { uri } });
      latest.set(uri, report.items ?? []);
    }
    const messages = (latest.get(uri) ?? []).map((d) => d.message).join("\n");
    times.push(performance.now() - t);
    if (messages.includes(project.undeclared(i)) === (i % 2 === 1)) correct++;
  }
  child.kill("SIGKILL");
  rpc.dispose();
  rmSync(copy, { recursive: true, force: true });
  return { copyMs, p50: percentile(times, 50), correct };
}

const makers = { typescript: typescriptProject, python: pythonProject, go: goProject, c: cProject };
const rows = [];
for (const [language, make] of Object.entries(makers)) {
  if (!wantedLanguages.has(language)) continue;
  const project = make();
  if (!project) {
    log(`${language}: no project available, skipped`);
    rows.push({ language, skipped: "no project available" });
    continue;
  }
  try {
    new Registry().get(language).resolveServer();
  } catch (error) {
    log(`${language}: ${error.message}`);
    rows.push({ language, skipped: error.message });
    continue;
  }
  log(`${language}: ${project.name}, ${project.files} files, editing ${project.file}`);
  const umbra = await measureUmbra(project);
  log(
    `  umbra cold ${round(umbra.coldMs)} ms, warm p50 ${round(umbra.warmP50)} ms (p95 ${round(umbra.warmP95)}), ` +
      `with ${umbra.checked} importers p50 ${round(umbra.crossP50)} ms (p95 ${round(umbra.crossP95)})`,
  );
  const naive = NAIVE > 0 ? await measureNaive(project) : undefined;
  if (naive) log(`  naive p50 ${round(naive.p50)} ms (copy ${round(naive.copyMs)} ms)`);
  rows.push({ language, project: project.name, files: project.files, file: project.file, umbra, naive });
}

const hostPeak = peakRssMiB(process.pid);
const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const lines = [
  `Warm: ${ITERATIONS} one-line edits per mode and language; naive: ${NAIVE}. Host process peak RSS ${round(hostPeak)} MiB. ` +
    `Load average at the end: ${load}.`,
  "",
  "| language | project (files) | server | cold first lint | warm p50 / p95, file only | warm p50 / p95, + importers (n) | correct | partial | crashes | server peak RSS (tree) | naive p50 (copy) | naive correct |",
  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];
for (const row of rows) {
  if (!row.umbra) {
    lines.push(`| ${row.language} | skipped: ${row.skipped} | | | | | | | | | | |`);
    continue;
  }
  const { umbra, naive } = row;
  lines.push(
    `| ${row.language} | ${row.project} (${row.files}) | ${umbra.server} | ${round(umbra.coldMs)} ms | ` +
      `**${round(umbra.warmP50)}** / ${round(umbra.warmP95)} ms | **${round(umbra.crossP50)}** / ${round(umbra.crossP95)} ms (${umbra.checked}) | ` +
      `${umbra.correct}/${2 * ITERATIONS} | ${umbra.partial} | ${umbra.crashes} | ` +
      `${round(umbra.serverPeakMiB)} MiB | ${naive ? `${round(naive.p50)} ms (${round(naive.copyMs)} ms)` : "-"} | ` +
      `${naive ? `${naive.correct}/${NAIVE}` : "-"} |`,
  );
}
for (const row of rows)
  if (row.umbra?.partialReasons.length)
    lines.push("", `${row.language} partial: ${row.umbra.partialReasons.join("; ")}`);
const table = lines.join("\n");
console.log(table);
mkdirSync(OUT, { recursive: true });
writeFileSync(
  join(OUT, "lint.json"),
  JSON.stringify({ rows, hostPeakMiB: hostPeak, iterations: ITERATIONS }, null, 2),
);
writeFileSync(join(OUT, "lint.md"), `${table}\n`);
