#!/usr/bin/env node
// @ts-check
/**
 * Retrieval ablation, in process: the same tasks as bench/retrieval/run.mjs, searched with several
 * search-option variants side by side (legs on/off, leg weights, file-role prior, fusion constant), so a
 * design choice — such as which embedder's vector leg to keep — is made by measurement.
 *
 *   node bench/retrieval/ablation.mjs [REPO_FILTER] [VARIANTS_JSON] [--show]
 *   node bench/retrieval/ablation.mjs sphinx '{"default":{},"no-vector":{"weights":{"vector":0}}}'
 *
 * Uses the tasks of ../shared/eval/swebench-dev.jsonl, the working clones under bench/.work/repos (made by
 * run.mjs) and UMBRA_HOME=bench/.work/umbra-home; $ABLATION_TASKS, $ABLATION_REPOS and $UMBRA_HOME replace
 * them (two runs at once need clones of their own: each checks out the tasks' commits in place;
 * bench/semantic/README.md compares two embedders this way). $ABLATION_DIST names another build to run
 * (see bench/lib/ablation.mjs).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ablationArgs, loadEngine, ROOT } from "../lib/ablation.mjs";
import { checkout } from "../lib/checkout.mjs";
import { readRows } from "../lib/umbra-cli.mjs";

const { indexWorkspace, openIndex, search, loadConfig } = await loadEngine();
const { repoFilter, variants, show } = ablationArgs(
  '{"default":{},"no-vector":{"weights":{"vector":0}},"no-file-leg":{"weights":{"file":0}},"no-path-leg":{"weights":{"path":0}},"no-exact":{"weights":{"exact":0}},"no-import-boost":{"importBoost":0},"no-prior":{"prior":false}}',
);
const env = {
  ...process.env,
  UMBRA_HOME: process.env.UMBRA_HOME ?? join(ROOT, "bench", ".work", "umbra-home"),
};
const config = loadConfig({ env: {} });
const tasksFile = process.env.ABLATION_TASKS ?? join(ROOT, "..", "shared", "eval", "swebench-dev.jsonl");
const tasks = (await readRows(tasksFile)).filter((task) => String(task.repo).includes(repoFilter));
const repos = process.env.ABLATION_REPOS ?? join(ROOT, "bench", ".work", "repos");
const clone = (/** @type {string} */ repo) => join(repos, repo.replace("/", "+"));
const commitTime = (/** @type {{repo: string, base_commit: string}} */ t) =>
  Number(
    execFileSync("git", ["-C", clone(t.repo), "show", "-s", "--format=%ct", t.base_commit], {
      encoding: "utf8",
    }),
  );
tasks.sort((a, b) => a.repo.localeCompare(b.repo) || commitTime(a) - commitTime(b));

/** @type {Record<string, {n: number, a1: number, a5: number, a10: number, mrr: number}>} */
const stats = Object.fromEntries(
  Object.keys(variants).map((name) => [name, { n: 0, a1: 0, a5: 0, a10: 0, mrr: 0 }]),
);
for (const task of tasks) {
  const dir = clone(task.repo);
  try {
    await checkout(dir, task.base_commit); // leaves out files whose blobs the mirror lacks
  } catch {
    process.stderr.write(`skip ${task.instance_id}: checkout failed\n`);
    continue;
  }
  await indexWorkspace(dir, { config, env });
  const index = await openIndex(dir, config, env);
  const gold = task.files.filter((/** @type {string} */ f) => existsSync(join(dir, f)));
  if (gold.length === 0) continue;
  for (const [name, options] of Object.entries(variants)) {
    const hits = await search(index, task.problem_statement, { limit: 200, ...options });
    /** @type {string[]} */
    const files = [];
    for (const hit of hits) if (!files.includes(hit.path)) files.push(hit.path);
    const ranks = gold.map((/** @type {string} */ g) => files.indexOf(g) + 1 || Number.POSITIVE_INFINITY);
    const worst = Math.max(...ranks);
    const s = stats[name];
    if (!s) continue;
    s.n++;
    if (worst <= 1) s.a1++;
    if (worst <= 5) s.a5++;
    if (worst <= 10) s.a10++;
    s.mrr += 1 / Math.min(...ranks);
    if (show && worst > 5)
      process.stdout.write(
        `${name} ${task.instance_id} gold=${gold} ranks=${ranks} top=${files.slice(0, 5)}\n`,
      );
  }
  index.close();
}
process.stdout.write(
  "| variant | n | Acc@1 | Acc@5 | Acc@10 | MRR |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
);
for (const [name, s] of Object.entries(stats)) {
  const f = (/** @type {number} */ x) => (x / Math.max(1, s.n)).toFixed(3);
  process.stdout.write(`| ${name} | ${s.n} | ${f(s.a1)} | ${f(s.a5)} | ${f(s.a10)} | ${f(s.mrr)} |\n`);
}
