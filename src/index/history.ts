/**
 * Which files change together, read from the workspace's own git history. A bug report names one place;
 * its fix often changes a second file too, and that file has changed beside the first one before. The
 * history is read with `git log` through the one door for untrusted repositories (git-read.ts), only for a
 * repository whose `.git` is a real folder at the workspace's root, and only at HEAD: what came before the
 * checked-out commit. Only pairs of files the index holds are kept.
 */
import { lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { readGit } from "../workspace/git-read.js";

/** The newest commits read (git log -n). */
export const HISTORY_COMMITS = 2000;
/** A commit that changes more files than this (a mass rename, a reformat) says nothing about pairs. */
export const MAX_FILES_PER_COMMIT = 20;
/** The most output read from git log; a longer one is cut, and the history is not used. */
const MAX_LOG_BYTES = 64 * 1024 * 1024;
const LOG_TIMEOUT_MS = 20_000;

/** Between commits in `git log -z --name-only --format=%x01`: the format line, then NUL-ended names. */
const COMMIT_MARK = "\x01";

/** How often files changed, alone and together: `pairs.get(a).get(b)` commits changed both. */
export interface CoChanges {
  commits: Map<string, number>;
  pairs: Map<string, Map<string, number>>;
}

/** The changed files of each commit in `git log -z --name-only --format=%x01` output, newest first. */
export function parseNameLog(text: string): string[][] {
  const commits: string[][] = [];
  for (const field of text.split("\0")) {
    // the format line is "\x01", and the first name after it follows a line break
    if (field === COMMIT_MARK) commits.push([]);
    else {
      const name = field.startsWith("\n") ? field.slice(1) : field;
      if (name !== "") commits.at(-1)?.push(name);
    }
  }
  return commits;
}

/**
 * How often the files `kept` changed, and changed together, in `commits` (each a list of changed paths);
 * commits of more than `maxFiles` files are passed over.
 */
export function countCoChanges(
  commits: readonly (readonly string[])[],
  kept: (path: string) => boolean,
  maxFiles = MAX_FILES_PER_COMMIT,
): CoChanges {
  const counts = new Map<string, number>();
  const pairs = new Map<string, Map<string, number>>();
  for (const commit of commits) {
    if (commit.length > maxFiles) continue;
    const files = [...new Set(commit)].filter(kept);
    for (const a of files) {
      counts.set(a, (counts.get(a) ?? 0) + 1);
      for (const b of files) {
        if (a === b) continue;
        let partners = pairs.get(a);
        if (!partners) {
          partners = new Map();
          pairs.set(a, partners);
        }
        partners.set(b, (partners.get(b) ?? 0) + 1);
      }
    }
  }
  return { commits: counts, pairs };
}

export interface HistoryOptions {
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  maxCommits?: number;
}

/**
 * The commit HEAD names at `root`, when `root` holds a repository of its own (`.git` a real folder, not a
 * link or a file naming another place); git looks no higher than `root`.
 */
export async function historyHead(root: string, options: HistoryOptions = {}): Promise<string | undefined> {
  const dotGit = await lstat(join(root, ".git")).catch(() => undefined);
  if (!dotGit?.isDirectory()) return undefined;
  const run = await readGit(
    ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
    root,
    gitOptions(root, options),
  );
  const head = run.stdout.trim();
  return run.code === 0 && /^[0-9a-f]{40,64}$/.test(head) ? head : undefined;
}

/** The changed files of the newest commits up to `head` (merges left out: their changes are their commits'). */
export async function readHistory(
  root: string,
  head: string,
  options: HistoryOptions = {},
): Promise<string[][] | undefined> {
  const run = await readGit(
    [
      "log",
      "-z",
      "--name-only",
      `--format=%x01`,
      "--no-merges",
      "--no-renames",
      "--no-ext-diff",
      "--no-textconv",
      "--no-show-signature",
      "-n",
      String(options.maxCommits ?? HISTORY_COMMITS),
      head,
      "--",
    ],
    root,
    { ...gitOptions(root, options), maxBytes: MAX_LOG_BYTES, timeoutMs: LOG_TIMEOUT_MS },
  );
  return run.code === 0 ? parseNameLog(run.stdout) : undefined;
}

function gitOptions(root: string, options: HistoryOptions) {
  return {
    env: { ...(options.env ?? process.env), GIT_CEILING_DIRECTORIES: dirname(root) },
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
