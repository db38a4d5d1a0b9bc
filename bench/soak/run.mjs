#!/usr/bin/env node
// @ts-check
/**
 * Soak: for --minutes (default 15), mixed lint / definition / references requests on each language at
 * once, against real projects, through the product path (a shadow branch, the sandboxed branch
 * launcher: bench/lint/product.mjs). One loop per language, one request at a time each:
 *   50 % lint of a one-line edit of one of ten files (every other edit adds an undeclared name), with
 *        cross-file checks; 25 % definition and 25 % references at an identifier of such a file.
 * Reported per language: requests, crashes (must be 0), restarts (server starts after the first,
 * unresponsive restarts), failures (timeouts, a server gone), refusals (the server answered with an
 * error, e.g. "no identifier found" or gopls' "no package metadata" for a project it cannot load), partial lints (with the servers' reasons), wrong lints (the undeclared
 * name missing, or reported when absent, in a lint that is not partial), p50/p95 latency per kind, and
 * the server's resident memory (its whole process tree, sampled every 5 s) after the first minute, at
 * the end and at its peak, against the stated bound (--rss-bound-mib, default 2048 per server).
 * Not run in CI. Projects: flask (Python), hono (TypeScript, falling back to umbra's src/), wcslib (C)
 * from the fetched mirrors under ../.mirror; Go's own encoding/json as a module, and cobra (whose
 * dependencies are not downloaded: gopls cannot load it, every lint must say so).
 * Usage: node bench/soak/run.mjs [--minutes 15] [--languages python,typescript,go,go-cobra,c]
 *        [--rss-bound-mib 2048] [--lint-timeout-ms N]
 * Needs `npm run build` first. Writes bench/out/soak.{json,md}.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { productHost, rssSampler } from "../lint/product.mjs";
import {
  cobraProject,
  cProject,
  goProject,
  honoProject,
  percentile,
  pythonProject,
  ROOT,
  treeRssMiB,
  typescriptProject,
} from "../lint/projects.mjs";

const { values } = parseArgs({
  options: {
    "lint-timeout-ms": { type: "string" },
    minutes: { type: "string", default: "15" },
    languages: { type: "string", default: "python,typescript,go,go-cobra,c" },
    "rss-bound-mib": { type: "string", default: "2048" },
  },
});
const DURATION_MS = Number(values.minutes) * 60_000;
const RSS_BOUND = Number(values["rss-bound-mib"]);
const OUT = join(ROOT, "bench", "out");
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const round = (/** @type {number} */ x) => Math.round(x);

const EXTENSIONS = { python: /\.py$/, typescript: /\.ts$/, go: /\.go$/, c: /\.c$/ };

/** Ten mid-size source files of the project, spread over its tree. @param {string} root @param {RegExp} ext */
function pickFiles(root, ext) {
  /** @type {string[]} */
  const found = [];
  const walk = (/** @type {string} */ rel) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else if (ext.test(entry.name) && !/(_test\.go|\.test\.ts|\.d\.ts)$/.test(entry.name)) {
        const lines = readFileSync(join(root, path), "utf8").split("\n").length;
        if (lines > 80 && lines < 3000) found.push(path);
      }
    }
  };
  walk("");
  found.sort();
  const step = Math.max(1, Math.floor(found.length / 10));
  return found.filter((_, i) => i % step === 0).slice(0, 10);
}

/** Positions (1-based) of identifiers that occur at least twice in the file, skipping comments roughly. @param {string} text */
function identifierPositions(text) {
  const counts = new Map();
  for (const word of text.match(/[A-Za-z_]\w{3,}/g) ?? []) counts.set(word, (counts.get(word) ?? 0) + 1);
  /** @type {{ line: number, column: number, word: string }[]} */
  const out = [];
  text.split("\n").forEach((line, i) => {
    if (/^\s*(#|\/\/|\/?\*)/.test(line)) return;
    // Code only: not after a line comment, not inside a string (an even number of quotes before).
    const code = line.split(/\s(?:#|\/\/)/)[0] ?? "";
    for (const m of code.matchAll(/[A-Za-z_]\w{3,}/g)) {
      const before = code.slice(0, m.index ?? 0);
      if ((before.match(/["'`]/g)?.length ?? 0) % 2 === 1) continue;
      if ((counts.get(m[0]) ?? 0) >= 2) out.push({ line: i + 1, column: (m.index ?? 0) + 1, word: m[0] });
    }
  });
  return out;
}

/** The kinds of request, in turn: half lints, a quarter each definition and references. */
const KINDS = ["lint", "definition", "lint", "references"];

/** @param {import("../lint/projects.mjs").Project} project */
async function soak(project) {
  const files = pickFiles(
    project.root,
    EXTENSIONS[/** @type {keyof typeof EXTENSIONS} */ (project.language)],
  );
  const texts = new Map(files.map((f) => [f, readFileSync(join(project.root, f), "utf8")]));
  const positions = new Map(files.map((f) => [f, identifierPositions(texts.get(f) ?? "")]));
  const product = await productHost(project.root, { lintTimeoutMs: values["lint-timeout-ms"] });
  const { host, branch } = product;
  const pids = () => host.status().map((/** @type {{pid?: number}} */ s) => s.pid);
  const memory = rssSampler(pids, 5000);
  /** @type {Record<string, number[]>} */
  const latency = { lint: [], definition: [], references: [] };
  /** @type {Map<string, number>} */
  const errors = new Map();
  /** @type {Set<string>} */
  const partialReasons = new Set();
  let partial = 0;
  let wrong = 0;
  let rssAfterMinute = Number.NaN;
  const started = performance.now();
  let i = 0;
  try {
    while (performance.now() - started < DURATION_MS) {
      i++;
      if (Number.isNaN(rssAfterMinute) && performance.now() - started > 60_000)
        rssAfterMinute = Math.max(
          0,
          ...pids()
            .map(treeRssMiB)
            .filter((x) => !Number.isNaN(x)),
        );
      // Files and positions in a fixed, spread-out order (steps prime to the list lengths).
      const file = files[(i * 7) % files.length] ?? "";
      const kind = KINDS[i % KINDS.length] ?? "lint";
      const t = performance.now();
      try {
        if (kind === "lint") {
          const base = texts.get(file) ?? "";
          const result = await host.lint(branch, file, {
            content: `${base.endsWith("\n") ? base : `${base}\n`}${project.line(i)}\n`,
          });
          if (result.partial) {
            partial++;
            for (const reason of result.partialReasons) partialReasons.add(reason);
          } else {
            const named = result.introduced.some((/** @type {{message: string}} */ d) =>
              d.message.includes(project.undeclared(i)),
            );
            if (named !== (i % 2 === 1)) wrong++;
          }
        } else {
          const list = positions.get(file) ?? [];
          const at = list[(i * 7919) % Math.max(1, list.length)];
          if (!at) continue;
          const position = { line: at.line, column: at.column };
          if (kind === "definition") await host.definition(branch, file, position);
          else await host.references(branch, file, position);
        }
        latency[kind]?.push(performance.now() - t);
      } catch (error) {
        const key = `${kind}: ${/** @type {{code?: string}} */ (error).code ?? "error"}`;
        errors.set(key, (errors.get(key) ?? 0) + 1);
        if ((errors.get(key) ?? 0) <= 3)
          log(`  ${project.language} ${key}: ${/** @type {Error} */ (error).message}`);
      }
    }
  } finally {
    memory.sample();
    memory.stop();
  }
  const status = host.status()[0];
  const rssEnd = Math.max(
    0,
    ...pids()
      .map(treeRssMiB)
      .filter((x) => !Number.isNaN(x)),
  );
  await product.close();
  const stat = (/** @type {number[]} */ xs) => ({
    n: xs.length,
    p50: percentile(xs, 50),
    p95: percentile(xs, 95),
  });
  return {
    language: project.language,
    project: project.name,
    server: status?.server ?? "?",
    minutes: (performance.now() - started) / 60_000,
    requests: Object.values(latency).reduce((n, xs) => n + xs.length, 0),
    lint: stat(latency.lint ?? []),
    definition: stat(latency.definition ?? []),
    references: stat(latency.references ?? []),
    crashes: status?.crashes ?? 0,
    restarts: Math.max(0, (status?.starts ?? 1) - 1),
    unresponsiveRestarts: status?.unresponsiveRestarts ?? 0,
    errors: Object.fromEntries(errors),
    partial,
    partialReasons: [...partialReasons].slice(0, 5),
    wrong,
    rssAfterMinuteMiB: rssAfterMinute,
    rssEndMiB: rssEnd,
    rssPeakMiB: memory.peak(),
  };
}

const makers = {
  python: () => pythonProject(),
  typescript: () => honoProject() ?? typescriptProject(),
  go: () => goProject(),
  // cobra's module dependencies are not downloaded (no network): every lint must come back partial.
  "go-cobra": () => cobraProject(),
  c: () => cProject(),
};
const wanted = (values.languages ?? "").split(",");
/** @type {import("../lint/projects.mjs").Project[]} */
const projects = [];
for (const language of wanted) {
  const project = makers[/** @type {keyof typeof makers} */ (language)]?.();
  if (project) projects.push(project);
  else log(`${language}: no project available, skipped`);
}
log(`soak: ${values.minutes} min on ${projects.map((p) => p.name).join(", ")}, all at once`);
const rows = await Promise.all(projects.map((project) => soak(project)));

const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const ms = (/** @type {{n: number, p50: number, p95: number}} */ s) =>
  s.n === 0 ? "-" : `${round(s.p50)} / ${round(s.p95)} ms (${s.n})`;
const lines = [
  `${values.minutes} min per language, all languages at once; RSS bound ${RSS_BOUND} MiB per server. Load average at the end: ${load}.`,
  "",
  "| language | project | server | requests | crashes | restarts | failures | refusals | partial lints | wrong lints | lint p50 / p95 (n) | definition p50 / p95 (n) | references p50 / p95 (n) | server RSS 1 min / end / peak | within bound |",
  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
];
for (const row of rows) {
  const count = (/** @type {boolean} */ refused) =>
    Object.entries(row.errors)
      .filter(([key]) => key.endsWith("server-error") === refused)
      .reduce((n, [, x]) => n + x, 0);
  lines.push(
    `| ${row.language} | ${row.project} | ${row.server} | ${row.requests} | **${row.crashes}** | ${row.restarts} | ${count(false)} | ${count(true)} | ${row.partial} | ${row.wrong} | ` +
      `${ms(row.lint)} | ${ms(row.definition)} | ${ms(row.references)} | ` +
      `${round(row.rssAfterMinuteMiB)} / ${round(row.rssEndMiB)} / ${round(row.rssPeakMiB)} MiB | ${row.rssPeakMiB <= RSS_BOUND ? "yes" : "**no**"} |`,
  );
}
for (const row of rows) {
  if (Object.keys(row.errors).length) lines.push("", `${row.language} errors: ${JSON.stringify(row.errors)}`);
  if (row.partialReasons.length) lines.push("", `${row.language} partial: ${row.partialReasons.join("; ")}`);
}
const table = lines.join("\n");
console.log(table);
mkdirSync(OUT, { recursive: true });
writeFileSync(
  join(OUT, "soak.json"),
  JSON.stringify({ minutes: Number(values.minutes), rssBoundMiB: RSS_BOUND, rows }, null, 2),
);
writeFileSync(join(OUT, "soak.md"), `${table}\n`);
const failed = rows.some((row) => row.crashes > 0 || row.rssPeakMiB > RSS_BOUND);
process.exitCode = failed ? 1 : 0;
