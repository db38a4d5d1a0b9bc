#!/usr/bin/env node
// @ts-check
/**
 * Held-out bug-report tasks: the fix-note tasks of fragments.mjs (base commit, gold files), with the
 * problem statement replaced by the GitHub issue the fix closed — its title and its opening post, as
 * SWE-bench builds its problem statements. The issue texts come from a file of looked-up threads (one
 * JSON object per line: instance_id, status "issue", title, excerpt — the thread as a search result
 * gives it: a header, "# Title", then "author · description · date" and the post, then comments),
 * gathered by hand with the library's issues corpus; this script only joins and parses them, offline.
 * See bench/retrieval/README.md, "Held-out bug reports".
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readRows } from "../lib/umbra-cli.mjs";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const USAGE = `usage: node bench/retrieval/reports.mjs --tasks FILE --found FILE [options]

  --tasks FILE   fix-note tasks from fragments.mjs (repeatable)
  --found FILE   looked-up issue threads, JSONL (repeatable)
  --out FILE     tasks JSONL (default bench/.work/heldout/reports.jsonl)
  -h, --help
`;

/** @param {string} msg @returns {never} */
function usage(msg) {
  process.stderr.write(`reports: ${msg}\n${USAGE}`);
  process.exit(2);
}

/** @param {Record<string, unknown>} t */
const isFixNoteTask = (t) =>
  typeof t.instance_id === "string" && Array.isArray(t.files) && t.files.every((p) => typeof p === "string");

const POST_HEAD = /^\S+ · (description|comment|review|review thread) · \d{4}-\d\d-\d\d$/;

/**
 * The opening post of a thread excerpt, or null when the excerpt does not start at it (a later
 * turn, or comments only).
 * @param {string} excerpt
 * @returns {string | null}
 */
export function openingPost(excerpt) {
  const lines = excerpt.split("\n");
  const start = lines.findIndex((l) => POST_HEAD.test(l));
  if (start < 0 || !lines[start].includes(" · description · ")) return null;
  const body = [];
  for (let i = start + 1; i < lines.length; i++) {
    if (POST_HEAD.test(lines[i]) && lines[i - 1].trim() === "") break;
    body.push(lines[i]);
  }
  const text = body.join("\n").trim();
  return text === "" ? null : text;
}

async function main() {
  const { values } = parseArgs({
    options: {
      tasks: { type: "string", multiple: true },
      found: { type: "string", multiple: true },
      out: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (!values.tasks?.length) usage("--tasks is required");
  if (!values.found?.length) usage("--found is required");
  const out = resolve(values.out ?? join(PROJECT_ROOT, "bench", ".work", "heldout", "reports.jsonl"));

  /** @type {Map<string, Record<string, unknown>>} */
  const tasks = new Map();
  for (const f of values.tasks) {
    for (const t of await readRows(f, isFixNoteTask, "a fix-note task (instance_id, files)"))
      tasks.set(String(t.instance_id), t);
  }
  const counts = { threads: 0, notIssue: 0, noTask: 0, noPost: 0, duplicateIssue: 0, kept: 0, namesPath: 0 };
  /** @type {Set<string>} */
  const seenIssues = new Set();
  const kept = [];
  for (const f of values.found) {
    for (const row of await readRows(f)) {
      counts.threads++;
      if (row.status !== "issue" || typeof row.excerpt !== "string") {
        counts.notIssue++;
        continue;
      }
      const task = tasks.get(String(row.instance_id));
      if (!task) {
        counts.noTask++;
        continue;
      }
      const post = openingPost(row.excerpt);
      if (post === null) {
        counts.noPost++;
        continue;
      }
      const url = String(row.issue_url);
      if (seenIssues.has(url)) {
        counts.duplicateIssue++;
        continue;
      }
      seenIssues.add(url);
      const statement = `${String(row.title).trim()}\n\n${post}`;
      const files = /** @type {string[]} */ (task.files);
      const namesPath = files.some((p) => statement.includes(p));
      if (namesPath) counts.namesPath++;
      kept.push({
        instance_id: task.instance_id,
        repo: task.repo,
        base_commit: task.base_commit,
        problem_statement: statement,
        files,
        fix_commit: task.fix_commit,
        issue_url: url,
        names_path: namesPath,
      });
    }
  }
  counts.kept = kept.length;
  kept.sort((a, b) => String(a.instance_id).localeCompare(String(b.instance_id)));
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, kept.map((t) => `${JSON.stringify(t)}\n`).join(""));
  process.stdout.write(
    `reports: ${counts.kept} tasks written to ${out} (of ${counts.threads} threads: ${counts.notIssue} not an issue, ` +
      `${counts.noTask} without a task, ${counts.noPost} without the opening post, ${counts.duplicateIssue} an issue ` +
      `already used; ${counts.namesPath} kept tasks name a gold file's path)\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`reports: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
