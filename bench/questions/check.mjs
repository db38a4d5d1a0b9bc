#!/usr/bin/env node
// @ts-check
/**
 * Check every answer of the question set at its pinned commit, read straight from the git mirrors:
 * `node bench/questions/check.mjs [--set FILE] [--mirrors DIR]`. With `--find REPO PATH SYMBOL` it
 * prints where SYMBOL's last name is defined in PATH at the pinned commit (for writing answers).
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { mirrorOf } from "../lib/checkout.mjs";
import { run } from "../lib/proc.mjs";
import { answerProblem, findDefinitions, loadSet } from "./set.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_SET = join(HERE, "questions.json");
export const DEFAULT_MIRRORS = resolve(HERE, "..", "..", "..", ".mirror");

/**
 * The texts of `paths` at `commit` in a git directory (null for a path absent there), in one git call.
 * @param {string} gitDir
 * @param {string} commit
 * @param {readonly string[]} paths
 * @returns {Promise<Map<string, string | null>>}
 */
export async function filesAt(gitDir, commit, paths) {
  const unique = [...new Set(paths)];
  const res = await run("git", ["--git-dir", gitDir, "cat-file", "--batch"], {
    input: `${unique.map((p) => `${commit}:${p}`).join("\n")}\n`,
  });
  if (res.code !== 0) throw new Error(`git cat-file in ${gitDir} exited ${res.code}: ${res.stderr.trim()}`);
  const buf = Buffer.from(res.stdout, "utf8");
  /** @type {Map<string, string | null>} */
  const out = new Map();
  let at = 0;
  for (const path of unique) {
    const nl = buf.indexOf(10, at);
    const header = buf.subarray(at, nl).toString("utf8");
    at = nl + 1;
    const m = /^[0-9a-f]+ blob (\d+)$/.exec(header);
    if (!m) {
      out.set(path, null);
      continue;
    }
    const size = Number(m[1]);
    out.set(path, buf.subarray(at, at + size).toString("utf8"));
    at += size + 1;
  }
  return out;
}

/**
 * Every problem with the answers of a set at their pinned commits (empty when all are right).
 * @param {import("./set.mjs").QuestionSet} set
 * @param {string} mirrors
 * @returns {Promise<string[]>}
 */
export async function checkAnswers(set, mirrors) {
  /** @type {string[]} */
  const problems = [];
  for (const [repo, pin] of Object.entries(set.repos)) {
    const gitDir = await mirrorOf({ mirrors, work: "" }, repo);
    if (!gitDir) {
      problems.push(`${repo}: no mirror under ${mirrors}`);
      continue;
    }
    const qs = set.questions.filter((q) => q.repo === repo);
    const texts = await filesAt(
      gitDir,
      pin.commit,
      qs.flatMap((q) => q.answers.map((a) => a.path)),
    );
    for (const q of qs)
      for (const a of q.answers) {
        const p = answerProblem(a, texts.get(a.path) ?? null, pin.language);
        if (p) problems.push(`${q.id}: ${p}`);
      }
  }
  return problems;
}

async function main() {
  const { values, positionals } = parseArgs({
    options: {
      set: { type: "string" },
      mirrors: { type: "string" },
      find: { type: "boolean", default: false },
    },
    allowPositionals: true,
  });
  const mirrors = resolve(values.mirrors ?? DEFAULT_MIRRORS);
  const set = await loadSet(resolve(values.set ?? DEFAULT_SET));
  if (values.find) {
    const [repo, path, symbol] = positionals;
    const pin = repo ? set.repos[repo] : undefined;
    const gitDir = repo ? await mirrorOf({ mirrors, work: "" }, repo) : null;
    if (!pin || !gitDir || !path || !symbol)
      throw new Error("--find wants REPO PATH SYMBOL, REPO pinned in the set");
    const text = (await filesAt(gitDir, pin.commit, [path])).get(path) ?? null;
    if (text === null) throw new Error(`${path}: no such file at ${pin.commit}`);
    const name = /** @type {string} */ (symbol.split(".").pop());
    for (const d of findDefinitions(text, name, pin.language))
      process.stdout.write(`${JSON.stringify({ path, symbol, lines: [d.start, d.end] })}  ${d.line}\n`);
    return;
  }
  const problems = await checkAnswers(set, mirrors);
  const n = set.questions.reduce((k, q) => k + q.answers.length, 0);
  if (problems.length) {
    process.stderr.write(
      `questions: ${problems.length} of ${n} answers wrong:\n  ${problems.join("\n  ")}\n`,
    );
    process.exitCode = 1;
  } else process.stdout.write(`questions: all ${n} answers of ${set.questions.length} questions check out\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`questions: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
