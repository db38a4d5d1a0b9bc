// @ts-check
/**
 * A git mirror's first-parent history with each commit's changes, read in one `git log`: shared by the
 * scripts that build retrieval tasks from real fixes (bench/retrieval/fragments.mjs, merges.mjs).
 */
import { runChecked } from "./proc.mjs";

/**
 * @typedef {object} Change
 * @property {string} status A, M, D or T (renames are split: --no-renames)
 * @property {string} mode mode on the commit's side
 * @property {string} blob blob on the commit's side
 * @property {string} path
 */

/**
 * @typedef {object} Commit
 * @property {string} hash
 * @property {string[]} parents
 * @property {string} subject
 * @property {Change[]} changes against the first parent
 */

/**
 * The default branch's first-parent history, newest first, each commit with its raw diff against
 * its first parent (a merge's diff too: --diff-merges=first-parent).
 * @param {string} gitDir
 * @param {string[]} [select] more `git log` arguments that choose the commits (`--merges`, `--since=…`)
 * @returns {Promise<Commit[]>}
 */
export async function firstParentLog(gitDir, select = []) {
  const res = await runChecked("git", [
    "--git-dir",
    gitDir,
    "log",
    "--first-parent",
    ...select,
    "--diff-merges=first-parent",
    "--raw",
    "--no-abbrev",
    "--no-renames",
    "-z",
    "--format=@%H %P%x09%s",
    "HEAD",
  ]);
  /** @type {Commit[]} */
  const commits = [];
  const tokens = res.stdout.split("\0");
  for (let i = 0; i < tokens.length; i++) {
    const tok = (tokens[i] ?? "").replace(/^\n+/, "");
    if (tok.startsWith("@")) {
      const tab = tok.indexOf("\t");
      const [hash, ...parents] = tok
        .slice(1, tab < 0 ? undefined : tab)
        .trim()
        .split(" ");
      const subject = tab < 0 ? "" : tok.slice(tab + 1).trim();
      if (hash) commits.push({ hash, parents: parents.filter(Boolean), subject, changes: [] });
    } else if (tok.startsWith(":")) {
      const [, dstMode, , dstBlob, status] = tok.slice(1).split(" ");
      const path = tokens[++i] ?? "";
      const current = commits[commits.length - 1];
      if (current && dstMode && dstBlob && status)
        current.changes.push({ status: status.slice(0, 1), mode: dstMode, blob: dstBlob, path });
    }
  }
  return commits;
}
