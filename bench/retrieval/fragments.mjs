#!/usr/bin/env node
// @ts-check
/**
 * Held-out retrieval tasks from towncrier news fragments: in a repository whose changes carry a
 * fragment file (pytest `changelog/<n>.bugfix.rst`, pip `news/<n>.bugfix.rst`, twisted
 * `src/twisted/…/newsfragments/<n>.bugfix`), a first-parent commit that ADDS one bugfix fragment
 * is a task: the fragment's text is the problem statement, the commit's first parent is the base
 * commit, and the source files the commit changed (existing at the base) are the gold files.
 * Reads the local git mirrors only; writes a tasks JSONL for bench/retrieval/run.mjs --tasks.
 * See bench/retrieval/README.md, "Held-out tasks from changelog fragments".
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { mirrorOf } from "../lib/checkout.mjs";
import { firstParentLog } from "../lib/history.mjs";
import { runChecked } from "../lib/proc.mjs";
import { isTestPath } from "./bm25.mjs";

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAX_SOURCE_FILES = 3;

/**
 * @typedef {object} RepoConfig
 * @property {RegExp} fragment a bugfix fragment's path; group 1 is its number
 * @property {RegExp} unnumbered a bugfix fragment without a number (orphan, uuid): counted, not used
 * @property {(path: string) => boolean} source whether a path is project source (tests excluded below)
 * @property {string} [note]
 */

/** @type {Record<string, RepoConfig>} */
const REPOS = {
  "pytest-dev/pytest": {
    fragment: /^changelog\/(\d+)\.bugfix(?:\.\d+)?(?:\.rst)?$/,
    unnumbered: /^changelog\/[^/]*\.bugfix(?:\.\d+)?(?:\.rst)?$/,
    source: (p) => p.startsWith("src/") && p.endsWith(".py"),
  },
  "pypa/pip": {
    fragment: /^news\/(\d+)\.bugfix(?:\.\d+)?(?:\.rst)?$/,
    unnumbered: /^news\/[^/]*\.bugfix(?:\.\d+)?(?:\.rst)?$/,
    source: (p) => p.startsWith("src/pip/") && !p.startsWith("src/pip/_vendor/") && p.endsWith(".py"),
  },
  "twisted/twisted": {
    fragment: /^src\/twisted\/(?:[^/]+\/)*newsfragments\/(\d+)\.bugfix(?:\.\d+)?(?:\.rst)?$/,
    unnumbered: /^src\/twisted\/(?:[^/]+\/)*newsfragments\/[^/]*\.bugfix(?:\.\d+)?(?:\.rst)?$/,
    source: (p) => p.startsWith("src/twisted/") && p.endsWith(".py"),
  },
  // Opt-in: pylint's fixes are three fragment types, and its package is not under src/.
  "pylint-dev/pylint": {
    fragment: /^doc\/whatsnew\/fragments\/(\d+)\.(?:bugfix|false_positive|false_negative)$/,
    unnumbered: /^doc\/whatsnew\/fragments\/[^/]*\.(?:bugfix|false_positive|false_negative)$/,
    source: (p) => p.startsWith("pylint/") && p.endsWith(".py"),
    note: "bugfix, false_positive and false_negative fragments",
  },
  // Opt-in: a third held-out pair (session of 2026-12-07); the package is at the root (aiohttp) or, in
  // later commits, under src/ (trio).
  "aio-libs/aiohttp": {
    fragment: /^CHANGES\/(\d+)\.bugfix(?:\.rst)?$/,
    unnumbered: /^CHANGES\/[^/]*\.bugfix(?:\.rst)?$/,
    source: (p) => p.startsWith("aiohttp/") && (p.endsWith(".py") || p.endsWith(".pyx")),
  },
  "python-trio/trio": {
    fragment: /^newsfragments\/(\d+)\.bugfix(?:\.rst)?$/,
    unnumbered: /^newsfragments\/[^/]*\.bugfix(?:\.rst)?$/,
    source: (p) => (p.startsWith("src/trio/") || p.startsWith("trio/")) && p.endsWith(".py"),
  },
  // Opt-in only: attrs has no bugfix type, its `change` fragments mix fixes and features.
  "python-attrs/attrs": {
    fragment: /^changelog\.d\/(\d+)\.change\.(?:md|rst)$/,
    unnumbered: /^changelog\.d\/[^/]*\.change\.(?:md|rst)$/,
    source: (p) => p.startsWith("src/") && (p.endsWith(".py") || p.endsWith(".pyi")),
    note: "change fragments (attrs has no bugfix type): fixes and features",
  },
};
const DEFAULT_REPOS = ["pytest-dev/pytest", "pypa/pip", "twisted/twisted"];

const USAGE = `usage: node bench/retrieval/fragments.mjs [options]

  --repo OWNER/NAME   repository (repeatable; default ${DEFAULT_REPOS.join(", ")};
                      also known: ${Object.keys(REPOS)
                        .filter((r) => !DEFAULT_REPOS.includes(r))
                        .join(", ")})
  --per-repo N        most recent tasks kept per repository (default 40)
  --mirrors DIR       git mirrors, DIR/<owner>+<name>/repo (default ../.mirror)
  --out FILE          tasks JSONL (default bench/.work/heldout/fragments.jsonl)
  -h, --help
`;

/** @param {string} msg @returns {never} */
function usage(msg) {
  process.stderr.write(`fragments: ${msg}\n${USAGE}`);
  process.exit(2);
}

/**
 * Light removal of RST / Markdown markup, keeping the words: roles (`:func:\`~a.b\`` → `a.b`,
 * `:ref:\`title <label>\`` → `title`), links, literals, emphasis, directive lines.
 * @param {string} text
 */
function stripMarkup(text) {
  return (
    text
      .replace(/\r\n?/g, "\n")
      // RST directives and comments (`.. code-block:: python`, `.. note::`): drop the marker line.
      .replace(/^[ \t]*\.\. [\w:-]+::.*$/gm, "")
      // :pep:`8` → PEP 8; :role:`title <target>` → title; :role:`~a.b` / `!a.b` → a.b
      .replace(/:pep:`(\d+)`/g, "PEP $1")
      .replace(/:[\w:+.-]+:`([^`<]*?)\s*<[^`>]*>`/g, "$1")
      .replace(/:[\w:+.-]+:`[~!]?([^`]*)`/g, "$1")
      // `text <url>`_ and `text`__ → text
      .replace(/`([^`<]*?)\s*<[^`>]*>`_{1,2}/g, "$1")
      .replace(/`([^`]+)`_{1,2}/g, "$1")
      // Markdown links and images: [text](url) → text
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      // ``literal`` and `literal`
      .replace(/``([^`]+)``/g, "$1")
      .replace(/`([^`]+)`/g, "$1")
      .replace(/`+/g, "")
      // **strong**, *emphasis*
      .replace(/\*\*([^*\n]+)\*\*/g, "$1")
      .replace(/(^|[\s(])\*([^*\s][^*\n]*?)\*(?=[\s).,;:!?]|$)/gm, "$1$2")
      .replace(/[ \t]+$/gm, "")
      .replace(/\n{3,}/g, "\n\n")
      .trim()
  );
}

/**
 * Whether a fragment names one of the changed files by its path (the repository path, or that
 * path below `src/`), which would make the task trivial.
 * @param {string} text
 * @param {string[]} files
 */
function namesChangedFile(text, files) {
  return files.some((f) => {
    const forms = [f];
    if (f.startsWith("src/")) forms.push(f.slice(4));
    return forms.some((p) => p.includes("/") && text.includes(p));
  });
}

/**
 * Whether a fragment names one of the changed files as a dotted module (`twisted.names.dns` for
 * `src/twisted/names/dns.py`): kept, but flagged, since that is a strong hint.
 * @param {string} text
 * @param {string[]} files
 */
function namesChangedModule(text, files) {
  return files.some((f) => {
    const mod = f
      .replace(/^src\//, "")
      .replace(/(?:\/__init__)?\.pyi?$/, "")
      .replaceAll("/", ".");
    return mod.includes(".") && new RegExp(`(?<![\\w.])${mod.replaceAll(".", "\\.")}(?![\\w])`).test(text);
  });
}

/** @typedef {import("../lib/history.mjs").Change} Change */

/**
 * A fragment's text at the commit; a symlinked fragment is read through its link.
 * @param {string} gitDir
 * @param {string} commit
 * @param {Change} change
 */
async function fragmentText(gitDir, commit, change) {
  const blob = (await runChecked("git", ["--git-dir", gitDir, "cat-file", "blob", change.blob])).stdout;
  if (change.mode !== "120000") return blob;
  const target = posix.normalize(posix.join(posix.dirname(change.path), blob.trim()));
  return (await runChecked("git", ["--git-dir", gitDir, "show", `${commit}:${target}`])).stdout;
}

/**
 * @typedef {object} FragmentTask
 * @property {string} instance_id
 * @property {string} repo
 * @property {string} base_commit
 * @property {string} problem_statement
 * @property {string[]} files
 * @property {string} fix_commit
 * @property {string} fragment
 * @property {boolean} names_module the text names a changed file as a dotted module
 */

/**
 * @param {string} gitDir
 * @param {string} repo
 * @param {RepoConfig} cfg
 * @param {number} perRepo
 */
async function tasksOf(gitDir, repo, cfg, perRepo) {
  const commits = await firstParentLog(gitDir);
  const counts = {
    commits: commits.length,
    withFragment: 0,
    unnumbered: 0,
    severalFragments: 0,
    noSourceFile: 0,
    tooManySourceFiles: 0,
    onlyNewSourceFiles: 0,
    emptyText: 0,
    duplicateNumber: 0,
    namesChangedFile: 0,
    kept: 0,
    keptNamingModule: 0,
  };
  /** @type {FragmentTask[]} */
  const tasks = [];
  /** @type {Set<string>} */
  const ids = new Set();
  const owner = repo.replace("/", "__");
  for (const c of commits) {
    if (tasks.length >= perRepo) break;
    const added = c.changes.filter((ch) => ch.status === "A");
    const fragments = added.filter((ch) => cfg.fragment.test(ch.path));
    if (fragments.length === 0) {
      if (added.some((ch) => cfg.unnumbered.test(ch.path))) counts.unnumbered++;
      continue;
    }
    counts.withFragment++;
    const parent = c.parents[0];
    if (!parent) continue;
    if (fragments.length > 1) {
      counts.severalFragments++;
      continue;
    }
    const fragment = /** @type {Change} */ (fragments[0]);
    const source = c.changes.filter((ch) => cfg.source(ch.path) && !isTestPath(ch.path));
    if (source.length === 0) {
      counts.noSourceFile++;
      continue;
    }
    if (source.length > MAX_SOURCE_FILES) {
      counts.tooManySourceFiles++;
      continue;
    }
    // Against the first parent without rename detection, every status but A is a path of the base.
    const files = source
      .filter((ch) => ch.status !== "A")
      .map((ch) => ch.path)
      .sort();
    if (files.length === 0) {
      counts.onlyNewSourceFiles++;
      continue;
    }
    const number = /** @type {string} */ (cfg.fragment.exec(fragment.path)?.[1]);
    const id = `${owner}-${number}`;
    if (ids.has(id)) {
      counts.duplicateNumber++;
      continue;
    }
    const raw = await fragmentText(gitDir, c.hash, fragment);
    const text = stripMarkup(raw);
    if (!text) {
      counts.emptyText++;
      continue;
    }
    if (namesChangedFile(raw, files) || namesChangedFile(text, files)) {
      counts.namesChangedFile++;
      continue;
    }
    ids.add(id);
    const namesModule = namesChangedModule(text, files);
    if (namesModule) counts.keptNamingModule++;
    tasks.push({
      instance_id: id,
      repo,
      base_commit: parent,
      problem_statement: text,
      files,
      fix_commit: c.hash,
      fragment: fragment.path,
      names_module: namesModule,
    });
  }
  counts.kept = tasks.length;
  return { tasks, counts };
}

async function main() {
  const { values } = parseArgs({
    options: {
      repo: { type: "string", multiple: true },
      "per-repo": { type: "string" },
      mirrors: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const repos = values.repo ?? DEFAULT_REPOS;
  for (const r of repos) if (!REPOS[r]) usage(`no fragment layout known for ${r}`);
  const perRepo = values["per-repo"] === undefined ? 40 : Number(values["per-repo"]);
  if (!Number.isInteger(perRepo) || perRepo < 1) usage("--per-repo wants a positive integer");
  const mirrors = resolve(values.mirrors ?? join(PROJECT_ROOT, "..", ".mirror"));
  const out = resolve(values.out ?? join(PROJECT_ROOT, "bench", ".work", "heldout", "fragments.jsonl"));

  /** @type {FragmentTask[]} */
  const all = [];
  const rows = [];
  for (const repo of [...repos].sort()) {
    const cfg = /** @type {RepoConfig} */ (REPOS[repo]);
    const gitDir = await mirrorOf({ mirrors, work: "" }, repo);
    if (!gitDir) usage(`no mirror of ${repo} under ${mirrors} (fetch github:${repo})`);
    const head = (await runChecked("git", ["--git-dir", gitDir, "rev-parse", "HEAD"])).stdout.trim();
    const { tasks, counts } = await tasksOf(gitDir, repo, cfg, perRepo);
    all.push(...tasks);
    rows.push({ repo, head: head.slice(0, 12), ...counts, ...(cfg.note ? { note: cfg.note } : {}) });
  }
  const num = (/** @type {string} */ id) => Number(id.slice(id.lastIndexOf("-") + 1));
  all.sort((a, b) => a.repo.localeCompare(b.repo) || num(a.instance_id) - num(b.instance_id));
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, all.map((t) => `${JSON.stringify(t)}\n`).join(""));

  for (const r of rows) {
    process.stdout.write(
      `${r.repo} @ ${r.head}: ${r.kept} tasks (from ${r.withFragment} commits adding a bugfix fragment, newest first, ` +
        `of ${r.commits} first-parent commits); dropped: ${r.severalFragments} several fragments, ` +
        `${r.noSourceFile} no source file, ${r.tooManySourceFiles} over ${MAX_SOURCE_FILES} source files, ` +
        `${r.onlyNewSourceFiles} only new source files, ${r.emptyText} empty text, ` +
        `${r.duplicateNumber} duplicate number, ${r.namesChangedFile} naming a changed file's path; ` +
        `${r.unnumbered} unnumbered fragments ignored; ${r.keptNamingModule} kept tasks name a changed module (names_module)${r.note ? ` [${r.note}]` : ""}\n`,
    );
  }
  process.stdout.write(`fragments: ${all.length} tasks written to ${out}\n`);
}

main().catch((err) => {
  process.stderr.write(`fragments: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
