/**
 * The workspace's past commits: what each one's message says and which files it changed. A bug report
 * often reads like the message of an earlier fix of the same feature, and that fix names the file the
 * report's words do not (sympy: "ask(Q.finite(…))" → `assumptions/handlers/calculus.py`). Read with
 * `git log` through the one door for untrusted repositories (git-read.ts), only for a repository whose
 * `.git` is a real folder at the workspace's root, and only up to HEAD: what came before the checkout.
 */
import { lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type GitRun, readGit } from "../workspace/git-read.js";

/** The newest commits read of each kind (plain commits, and merges along the first-parent line). */
export const HISTORY_COMMITS = 5000;
/** A commit that changes more files than this (a mass rename, a reformat) says nothing about any one. */
export const MAX_FILES_PER_COMMIT = 20;
/** The most of a message kept: a pasted log says nothing a subject does not. */
const MAX_MESSAGE_CHARS = 4000;
/** The most output read from one git log; a longer one counts as unreadable. */
const MAX_LOG_BYTES = 64 * 1024 * 1024;
const LOG_TIMEOUT_MS = 30_000;

/** Around each commit in the log's format: its message between these, then its NUL-ended file names. */
const START = "\x01";
const END = "\x02";
const FORMAT = `--format=${"%x01"}%B${"%x02"}`;

export interface PastCommit {
  message: string;
  /** Workspace-relative paths the commit changed. */
  files: string[];
}

/** The commits of `git log -z --name-only --format=%x01%B%x02` output, newest first. */
export function parseCommitLog(text: string): PastCommit[] {
  const commits: PastCommit[] = [];
  for (const entry of text.split(START).slice(1)) {
    const end = entry.indexOf(END);
    if (end < 0) continue;
    const files = entry
      .slice(end + 1)
      .split("\0")
      .map((name) => (name.startsWith("\n") ? name.slice(1) : name))
      .filter((name) => name !== "");
    commits.push({ message: entry.slice(0, Math.min(end, MAX_MESSAGE_CHARS)), files });
  }
  return commits;
}

/** The commits worth remembering: some files changed, and not too many. */
export function telling(commits: readonly PastCommit[], maxFiles = MAX_FILES_PER_COMMIT): PastCommit[] {
  return commits
    .map((commit) => ({ ...commit, files: [...new Set(commit.files)] }))
    .filter((commit) => commit.files.length > 0 && commit.files.length <= maxFiles);
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

/**
 * The newest commits up to `head`: plain commits, and merges along the first-parent line with all that
 * they brought in (a pull request's title names what its commits did together).
 */
export async function readHistory(
  root: string,
  head: string,
  options: HistoryOptions = {},
): Promise<PastCommit[]> {
  const common = [
    "log",
    "-z",
    "--name-only",
    FORMAT,
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-show-signature",
    "-n",
    String(options.maxCommits ?? HISTORY_COMMITS),
  ];
  const run = (kind: string[]) =>
    readGit([...common, ...kind, head, "--"], root, {
      ...gitOptions(root, options),
      maxBytes: MAX_LOG_BYTES,
      timeoutMs: LOG_TIMEOUT_MS,
    });
  const [plain, merges] = await Promise.all([
    run(["--no-merges"]),
    run(["--merges", "--first-parent", "--diff-merges=first-parent"]),
  ]);
  options.signal?.throwIfAborted();
  return [...readOf(plain), ...readOf(merges)];
}

/**
 * The commits a run printed. A run that stopped part way (an object missing from a partial or damaged
 * clone, a time-out) keeps the commits before the one it stopped in.
 */
function readOf(run: GitRun): PastCommit[] {
  const commits = parseCommitLog(run.stdout);
  return run.code === 0 ? commits : commits.slice(0, -1);
}

function gitOptions(root: string, options: HistoryOptions) {
  return {
    env: { ...(options.env ?? process.env), GIT_CEILING_DIRECTORIES: dirname(root) },
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
