#!/usr/bin/env node
// @ts-check
/**
 * Many branches on one shared language server. Each of N branches changes one of ten files (so ten
 * branches share each file, with different content) by appending a line that uses an undeclared name
 * unique to the branch, then asks R lint requests of that file, each with a further edit unique to the
 * request; all requests are issued at once and the host interleaves them on one server.
 * Checked for every answer: the branch's own names are there (its change in `diagnostics`, the request's
 * edit as the only `introduced` one) and no other branch's name appears anywhere in it.
 * Baseline in the same run: one server per branch, measured for a few branches (start time, memory).
 * Usage: node bench/branches/run.mjs [--branches 100] [--requests 2] [--python-requests 1] [--lint-timeout-ms N]
 *        [--languages typescript,python] [--baseline 3] [--cross-file typescript,python]
 * `--cross-file` lists the languages whose lints also check the edited file's importers; `--name` names
 * the output files (default "branches").
 * Servers start as the product starts them (a shadow branch, the sandboxed branch launcher); every
 * benchmark branch is a real fork of the project. Needs `npm run build` first. Writes bench/out/<name>.{json,md}.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { productHost, rssSampler } from "../lint/product.mjs";
import { peakRssMiB, percentile, pythonProject, ROOT, typescriptProject } from "../lint/projects.mjs";

const { values } = parseArgs({
  options: {
    "lint-timeout-ms": { type: "string" },
    branches: { type: "string", default: "100" },
    requests: { type: "string", default: "2" },
    "python-requests": { type: "string", default: "1" },
    languages: { type: "string", default: "typescript,python" },
    baseline: { type: "string", default: "3" },
    "cross-file": { type: "string", default: "typescript" },
    name: { type: "string", default: "branches" },
  },
});
const BRANCHES = Number(values.branches);
const BASELINE = Number(values.baseline);
const CROSS_FILE = new Set((values["cross-file"] ?? "").split(","));
const OUT = join(ROOT, "bench", "out");
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const round = (/** @type {number} */ x) => Math.round(x);

/** Ten mid-size files of the project to edit (sorted, skipping tiny ones). @param {string} root @param {string} dir @param {string} ext */
function pickFiles(root, dir, ext) {
  /** @type {string[]} */
  const found = [];
  const walk = (/** @type {string} */ rel) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(ext) && readFileSync(join(root, path), "utf8").split("\n").length > 60)
        found.push(path);
    }
  };
  walk(dir);
  found.sort();
  const step = Math.max(1, Math.floor(found.length / 10));
  return found.filter((_, i) => i % step === 0).slice(0, 10);
}

/** @param {{ language: string, root: string, name: string }} project @param {string[]} files @param {{ tag: (k: number) => string, req: (k: number, r: number) => string, names: RegExp }} syntax @param {number} requests */
async function measure(project, files, syntax, requests) {
  // The servers run in one shadow branch through the product's sandboxed launcher; every benchmark
  // branch is a real fork of the project with its edit held in memory, served by those servers.
  let t = performance.now();
  const product = await productHost(project.root, { lintTimeoutMs: values["lint-timeout-ms"] });
  const { host } = product;
  const bases = new Map(files.map((f) => [f, readFileSync(join(project.root, f), "utf8")]));
  const branches = [];
  for (let k = 0; k < BRANCHES; k++) {
    const file = files[k % files.length] ?? "";
    const branch = await product.fork();
    const edited = `${bases.get(file)}${syntax.tag(k)}\n`;
    branch.write(file, edited);
    branches.push({ k, file, branch, edited });
  }
  const forkMs = performance.now() - t;
  log(`  ${BRANCHES} forks in ${round(forkMs)} ms`);
  // Warm the server up (start, project load) outside the measurement.
  t = performance.now();
  await host.lint(product.branch, files[0] ?? "");
  const coldMs = performance.now() - t;
  const memory = rssSampler(() => host.status().map((/** @type {{pid?: number}} */ s) => s.pid), 100);
  /** @type {number[]} */
  const latencies = [];
  /** @type {Map<number, number>} */
  const firstAnswer = new Map();
  let contaminated = 0;
  let errors = 0;
  let wrong = 0;
  let partial = 0;
  t = performance.now();
  const started = t;
  await Promise.all(
    branches.flatMap(({ k, file, branch }) =>
      Array.from({ length: requests }, async (_, r) => {
        const submitted = performance.now();
        const content = `${branches[k]?.edited}${syntax.req(k, r)}\n`;
        let result;
        try {
          result = await host.lint(branch, file, { content, crossFile: CROSS_FILE.has(project.language) });
        } catch (error) {
          errors++;
          if (errors <= 3) log(`  lint failed for branch ${k}: ${/** @type {Error} */ (error).message}`);
          return;
        }
        const done = performance.now();
        latencies.push(done - submitted);
        if (!firstAnswer.has(k)) firstAnswer.set(k, done - started);
        if (result.partial) partial++;
        const seen = [...JSON.stringify(result).matchAll(syntax.names)].map((m) => Number(m[1]));
        if (seen.some((other) => other !== k)) contaminated++;
        const own = result.diagnostics.map((/** @type {{message: string}} */ d) => d.message).join("\n");
        const introduced = result.introduced.map((/** @type {{message: string}} */ d) => d.message);
        const tagName = syntax.tag(k).match(syntax.names)?.[0] ?? "?";
        const reqName = syntax.req(k, r).match(syntax.names)?.[0] ?? "?";
        if (!own.includes(tagName) || introduced.length !== 1 || !introduced[0]?.includes(reqName)) {
          wrong++;
          if (wrong <= 3) log(`  unexpected answer for branch ${k}: ${JSON.stringify(result).slice(0, 500)}`);
        }
      }),
    ),
  );
  const wallMs = performance.now() - t;
  memory.stop();
  const firsts = [...firstAnswer.values()];
  const result = {
    language: project.language,
    project: project.name,
    crossFile: CROSS_FILE.has(project.language),
    branches: BRANCHES,
    requests: BRANCHES * requests,
    coldMs,
    forkMs,
    wallMs,
    perSecond: (BRANCHES * requests) / (wallMs / 1000),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    firstAnswerP50: percentile(firsts, 50),
    firstAnswerMax: Math.max(...firsts),
    serverPeakMiB: memory.peak(),
    openDocuments: host.status()[0]?.openDocuments ?? 0,
    crashes: host.status()[0]?.crashes ?? 0,
    restarts: Math.max(0, (host.status()[0]?.starts ?? 1) - 1),
    errors,
    contaminated,
    wrong,
    partial,
  };
  await product.close();

  // Baseline: one server per branch (its own shadow branch and sandboxed server), for a few branches.
  /** @type {number[]} */
  const starts = [];
  /** @type {number[]} */
  const rss = [];
  for (let k = 0; k < BASELINE; k++) {
    const { file, edited } = branches[k] ?? branches[0];
    const s = performance.now();
    const own = await productHost(project.root, { lintTimeoutMs: values["lint-timeout-ms"] });
    const ownMemory = rssSampler(
      () => own.host.status().map((/** @type {{pid?: number}} */ st) => st.pid),
      100,
    );
    own.branch.write(file, edited);
    await own.host.lint(own.branch, file, { content: `${edited}${syntax.req(k, 0)}\n` });
    starts.push(performance.now() - s);
    ownMemory.sample();
    ownMemory.stop();
    rss.push(ownMemory.peak());
    await own.close();
  }
  const meanRss = rss.reduce((a, b) => a + b, 0) / Math.max(1, rss.length);
  return {
    ...result,
    baseline: {
      servers: BASELINE,
      startP50: percentile(starts, 50),
      rssPerServerMiB: meanRss,
      rssFor100MiB: meanRss * BRANCHES,
    },
  };
}

const rows = [];
if ((values.languages ?? "").includes("typescript")) {
  const project = typescriptProject();
  const files = pickFiles(project.root, "src", ".ts");
  log(
    `typescript: ${BRANCHES} branches × ${values.requests} requests over ${files.length} files of ${project.name}`,
  );
  rows.push(
    await measure(
      project,
      files,
      {
        tag: (k) => `export const branchTag${k} = undeclaredInBranch${k};`,
        req: (k, r) => `export const request${k}x${r} = undeclaredRequest${k}x${r};`,
        names: /undeclared(?:InBranch|Request)(\d+)/g,
      },
      Number(values.requests),
    ),
  );
}
if ((values.languages ?? "").includes("python")) {
  const project = pythonProject();
  if (project) {
    const files = pickFiles(project.root, "src", ".py");
    log(
      `python: ${BRANCHES} branches × ${values["python-requests"]} requests over ${files.length} files of ${project.name}`,
    );
    rows.push(
      await measure(
        project,
        files,
        {
          tag: (k) => `branch_tag_${k} = undeclared_in_branch_${k}`,
          req: (k, r) => `request_${k}_${r} = undeclared_request_${k}_x${r}`,
          names: /undeclared_(?:in_branch|request)_(\d+)/g,
        },
        Number(values["python-requests"]),
      ),
    );
  }
}

const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const lines = [
  `Host process peak RSS ${round(peakRssMiB(process.pid))} MiB. Load average at the end: ${load}.`,
  "",
  "| language | project | cross-file checks | branches × requests | wall | requests/s | latency p50 / p95 | first answer per branch p50 / max | server peak RSS (tree) | contaminated | wrong | partial | errors | crashes / restarts | baseline: own server per branch (start p50, RSS each → ×N) |",
  "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
];
for (const row of rows) {
  lines.push(
    `| ${row.language} | ${row.project} | ${row.crossFile ? "importers (≤16)" : "off"} | ${row.branches} × ${row.requests / row.branches} | ${(row.wallMs / 1000).toFixed(1)} s | ` +
      `**${row.perSecond.toFixed(1)}** | ${round(row.p50)} / ${round(row.p95)} ms | ${round(row.firstAnswerP50)} / ${round(row.firstAnswerMax)} ms | ` +
      `${round(row.serverPeakMiB)} MiB | ${row.contaminated} | ${row.wrong} | ${row.partial} | ${row.errors} | ${row.crashes} / ${row.restarts} | ` +
      (row.baseline.servers > 0
        ? `${round(row.baseline.startP50)} ms, ${round(row.baseline.rssPerServerMiB)} MiB → ${(row.baseline.rssFor100MiB / 1024).toFixed(1)} GiB |`
        : "not measured |"),
  );
}
const table = lines.join("\n");
console.log(table);
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, `${values.name}.json`), JSON.stringify(rows, null, 2));
writeFileSync(join(OUT, `${values.name}.md`), `${table}\n`);
