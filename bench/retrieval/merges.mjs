#!/usr/bin/env node
// @ts-check
/**
 * Held-out retrieval tasks from merged pull requests, for repositories without changelog fragments
 * (sympy): a first-parent merge commit "Merge pull request #N from …" whose pull request changed 1–3
 * source files that exist at the base and at least one test file is a task, as SWE-bench builds its
 * own — base commit the merge's first parent, gold files the source files the pull request changed,
 * instance `<owner>__<name>-<N>`. The problem statement is the pull request's title, a placeholder:
 * reports.mjs replaces it with the issue the pull request closed, looked up by hand.
 * Reads the local git mirror only; writes a tasks JSONL. See bench/retrieval/README.md.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { mirrorOf } from "../lib/checkout.mjs";
import { firstParentLog } from "../lib/history.mjs";
import { runChecked } from "../lib/proc.mjs";
import { positiveInt } from "../lib/umbra-cli.mjs";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAX_SOURCE_FILES = 3;

/** @type {Record<string, { source: (p: string) => boolean, test: (p: string) => boolean }>} */
const REPOS = {
  "sympy/sympy": {
    source: (p) => p.startsWith("sympy/") && p.endsWith(".py") && !p.includes("/tests/"),
    test: (p) => /\/tests\/test_[^/]*\.py$/.test(p),
  },
  // the years SWE-bench's requests tasks come from: urllib3, chardet and idna vendored under requests/packages/
  "psf/requests": {
    source: (p) => /^requests\/[^/]+\.py$/.test(p),
    test: (p) => /^(tests\/)?test_[^/]*\.py$/.test(p),
  },
};

const USAGE = `usage: node bench/retrieval/merges.mjs --repo OWNER/NAME [options]

  --repo OWNER/NAME   one of ${Object.keys(REPOS).join(", ")}
  --since DATE        first merge date (default 2023-01-01)
  --until DATE        last merge date (default 2025-06-01)
  --every K           keep every K-th eligible merge, newest first (default 4) …
  --offset I          … starting with the I-th (default 0), for a second sample beside a first
  --mirrors DIR       git mirrors (default ../.mirror)
  --out FILE          tasks JSONL (default bench/.work/heldout/merges.jsonl)
  -h, --help
`;

/** @param {string} msg @returns {never} */
function usage(msg) {
  process.stderr.write(`merges: ${msg}\n${USAGE}`);
  process.exit(2);
}

async function main() {
  const { values } = parseArgs({
    options: {
      repo: { type: "string" },
      since: { type: "string", default: "2023-01-01" },
      until: { type: "string", default: "2025-06-01" },
      every: { type: "string", default: "4" },
      offset: { type: "string", default: "0" },
      mirrors: { type: "string", default: join(PROJECT_ROOT, "..", ".mirror") },
      out: { type: "string", default: join(PROJECT_ROOT, "bench", ".work", "heldout", "merges.jsonl") },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const repo = values.repo ?? usage("--repo is required");
  const cfg = REPOS[repo] ?? usage(`unknown repository ${repo}`);
  const every = positiveInt(values.every, "every", usage) ?? 4;
  const offset = Number(values.offset);
  if (!Number.isInteger(offset) || offset < 0 || offset >= every)
    usage("--offset takes a whole number below --every");
  const gitDir =
    (await mirrorOf({ mirrors: resolve(values.mirrors), work: "" }, repo)) ?? usage(`no mirror of ${repo}`);
  const merges = await firstParentLog(gitDir, [
    "--merges",
    `--since=${values.since}`,
    `--until=${values.until}`,
  ]);
  const counts = {
    merges: merges.length,
    notPullRequest: 0,
    noTest: 0,
    sourceFiles: 0,
    eligible: 0,
    kept: 0,
  };
  const owner = repo.replace("/", "__");
  const tasks = [];
  for (const { hash, parents, subject, changes: changed } of merges) {
    const number = /^Merge pull request #(\d+) from /.exec(subject)?.[1];
    const base = parents[0];
    if (!number || !base) {
      counts.notPullRequest++;
      continue;
    }
    if (!changed.some((c) => cfg.test(c.path))) {
      counts.noTest++;
      continue;
    }
    const source = changed.filter((c) => cfg.source(c.path));
    const files = source
      .filter((c) => c.status !== "A")
      .map((c) => c.path)
      .sort();
    if (source.length > MAX_SOURCE_FILES || files.length === 0) {
      counts.sourceFiles++;
      continue;
    }
    if (counts.eligible++ % every !== offset) continue;
    // the pull request's title: the first line of the merge's body
    const body = (await runChecked("git", ["--git-dir", gitDir, "log", "-1", "--format=%b", hash])).stdout;
    const [title = ""] = body.split("\n");
    tasks.push({
      instance_id: `${owner}-${number}`,
      repo,
      number: Number(number),
      base_commit: base,
      problem_statement: title.trim(),
      files,
      fix_commit: hash,
    });
  }
  counts.kept = tasks.length;
  const out = resolve(values.out);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, tasks.map((t) => `${JSON.stringify(t)}\n`).join(""));
  process.stdout.write(`merges: ${tasks.length} tasks written to ${out} (${JSON.stringify(counts)})\n`);
}

main().catch((err) => {
  process.stderr.write(`merges: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
