#!/usr/bin/env node
// @ts-check
/**
 * The questions benchmark in process: the same questions, checkouts and scorer as run.mjs, searched with
 * `search()` of one or more builds and search-option variants side by side in one process (no CLI start-up
 * per question), so a ranking change is measured in seconds and compared with the build before it.
 *
 *   node bench/questions/inprocess.mjs [--set FILE] [--dist DIR]... [--variants JSON] [--repo NAME]... [--show]
 *
 * `--set` names the question set (default bench/questions/questions.json; the held-out set is
 * bench/questions/heldout.json).
 *
 * `--dist` (repeatable; default this tree's dist/) names builds' dist folders (builds that read the same
 * index format); `--variants` a JSON object of SearchOptions by name (default `{"default":{}}`). Every
 * build runs every variant. Checkouts: those of run.mjs (`--work`/repos, cloned from `--mirrors` when
 * absent), indexed with the first build under UMBRA_HOME (default: run.mjs's for its default command, so
 * the index it built is reused). `--show` prints, per question and system, the answer's file and symbol
 * ranks and the first five hits.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { checkout, ensureClone } from "../lib/checkout.mjs";
import { foldToFiles } from "../retrieval/metrics.mjs";
import { umbraHome } from "./home.mjs";
import { aggregate, fileRank, symbolRank } from "./score.mjs";
import { loadSet } from "./set.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    set: { type: "string" },
    dist: { type: "string", multiple: true },
    variants: { type: "string", default: '{"default":{}}' },
    repo: { type: "string", multiple: true },
    show: { type: "boolean", default: false },
    work: { type: "string", default: join(ROOT, "bench", ".work") },
    mirrors: { type: "string", default: join(ROOT, "..", ".mirror") },
  },
});
const dists = (values.dist ?? [join(ROOT, "dist")]).map((d) => resolve(d));
/** @type {Record<string, Record<string, unknown>>} */
const variants = JSON.parse(values.variants ?? "{}");
const env = {
  ...process.env,
  // run.mjs's data dir for its default command: the index it built is reused
  UMBRA_HOME: process.env.UMBRA_HOME ?? umbraHome(values.work),
  UMBRA_ENGINE: "off",
};
const builds = await Promise.all(
  dists.map(async (dist, i) => ({
    name: dists.length > 1 ? `build ${i + 1}` : "build",
    indexWorkspace: (await import(join(dist, "index", "indexer.js"))).indexWorkspace,
    openIndex: (await import(join(dist, "index", "open.js"))).openIndex,
    search: (await import(join(dist, "index", "search", "searcher.js"))).search,
    config: (await import(join(dist, "config", "config.js"))).loadConfig({ env: {} }),
  })),
);

const set = await loadSet(resolve(values.set ?? join(ROOT, "bench", "questions", "questions.json")));
const repos = Object.keys(set.repos).filter(
  (r) => !values.repo?.length || values.repo.some((f) => r.includes(f)),
);
/** @type {Map<string, {repo: string, file: number | null, symbol: number | null}[]>} */
const ranks = new Map();
for (const repo of repos) {
  const dir = await ensureClone({ mirrors: values.mirrors, work: values.work }, repo);
  await checkout(dir, set.repos[repo]?.commit ?? "");
  const first = builds[0];
  if (!first) throw new Error("no build");
  await first.indexWorkspace(dir, { config: first.config, env });
  for (const build of builds) {
    const index = await build.openIndex(dir, build.config, env);
    for (const q of set.questions.filter((q) => q.repo === repo)) {
      for (const [variant, options] of Object.entries(variants)) {
        const system = `${build.name} ${variant}`;
        const hits = await build.search(index, q.question, { limit: 50, ...options });
        const r = { repo, file: fileRank(foldToFiles(hits), q.answers), symbol: symbolRank(hits, q.answers) };
        ranks.set(system, [...(ranks.get(system) ?? []), r]);
        if (values.show) {
          const top = hits
            .slice(0, 5)
            .map(
              (/** @type {{path: string, startLine: number, symbol: string}} */ h) =>
                `${h.path}:${h.startLine} ${h.symbol}`,
            )
            .join(" | ");
          process.stdout.write(
            `${q.id}\t${system}\tfile ${r.file ?? "-"}\tsymbol ${r.symbol ?? "-"}\twant ${q.answers.map((a) => `${a.path} ${a.symbol}`).join(", ")}\n    ${top}\n`,
          );
        }
      }
    }
    index.close();
  }
}
const f3 = (/** @type {number | null} */ x) => (x === null ? "–" : x.toFixed(3));
process.stdout.write(
  "| scope | system | n | file@1 | file@5 | symbol@1 | symbol@5 | MRR |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
);
for (const scope of ["all", ...repos]) {
  for (const [system, rs] of ranks) {
    const m = aggregate(rs.filter((r) => scope === "all" || r.repo === scope));
    process.stdout.write(
      `| ${scope} | ${system} | ${m.n} | ${f3(m.file1)} | ${f3(m.file5)} | ${f3(m.symbol1)} | ${f3(m.symbol5)} | ${f3(m.mrr)} |\n`,
    );
  }
}
