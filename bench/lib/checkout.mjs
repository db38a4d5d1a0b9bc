// @ts-check
/**
 * Working clones of the local git mirrors, laid out at a commit: shared by the benchmarks that index
 * real repositories (bench/retrieval, bench/questions).
 */
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { runChecked } from "./proc.mjs";

/** Where the mirrors and the working clones live. @typedef {{mirrors: string, work: string}} CloneOptions */

/** @param {string} repo owner/name */
export function repoKey(repo) {
  return repo.replace("/", "+");
}

/** @param {string} p */
export async function exists(p) {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The mirror a repository's working clone borrows objects from, or null when there is none.
 * @param {CloneOptions} opts
 * @param {string} repo
 */
export async function mirrorOf(opts, repo) {
  const m = join(opts.mirrors, repoKey(repo), "repo");
  return (await exists(m)) ? m : null;
}

/**
 * Make sure the working clone of a repository exists; return its path.
 * @param {CloneOptions} opts
 * @param {string} repo
 */
export async function ensureClone(opts, repo) {
  const dir = join(opts.work, "repos", repoKey(repo));
  if (await exists(join(dir, ".git"))) return dir;
  await mkdir(dirname(dir), { recursive: true });
  await rm(dir, { recursive: true, force: true });
  const mirror = await mirrorOf(opts, repo);
  if (mirror) {
    process.stderr.write(`cloning ${repo} from ${mirror} (shared objects)\n`);
    await runChecked("git", ["clone", "-q", "--shared", "--no-checkout", mirror, dir]);
  } else {
    throw new Error(
      `no mirror of ${repo} under ${opts.mirrors}: bring a full clone there as ${repoKey(repo)}/repo`,
    );
  }
  // Objects borrowed from the mirror must never be pruned from under us.
  await runChecked("git", ["-C", dir, "config", "gc.auto", "0"]);
  return dir;
}

/**
 * Lay the clone out at a commit, leaving out files whose blobs the mirror lacks (mirrors may omit
 * their largest files); untracked and ignored files are removed. Unchanged files keep their mtime.
 * @param {string} dir
 * @param {string} commit
 * @returns {Promise<string[]>} the paths left out
 */
export async function checkout(dir, commit) {
  const tree = await runChecked("git", ["-C", dir, "ls-tree", "-r", "-z", commit]);
  /** @type {Map<string, string[]>} blob -> paths */
  const blobs = new Map();
  for (const rec of tree.stdout.split("\0")) {
    const tab = rec.indexOf("\t");
    const [, type, hash] = rec.slice(0, tab).split(" ");
    if (type !== "blob" || !hash) continue;
    const paths = blobs.get(hash) ?? [];
    paths.push(rec.slice(tab + 1));
    blobs.set(hash, paths);
  }
  const check = await runChecked("git", ["-C", dir, "cat-file", "--batch-check=%(objectname)"], {
    input: `${[...blobs.keys()].join("\n")}\n`,
  });
  const absent = check.stdout
    .split("\n")
    .filter((l) => l.endsWith(" missing"))
    .flatMap((l) => blobs.get(l.slice(0, -" missing".length)) ?? [])
    .sort();
  // Non-cone sparse checkout: everything but the absent files.
  const patterns = ["/*", ...absent.map((p) => `!/${p.replace(/[\\*?[\]!#]/g, "\\$&")}`)];
  const gitDir = (await runChecked("git", ["-C", dir, "rev-parse", "--absolute-git-dir"])).stdout.trim();
  await mkdir(join(gitDir, "info"), { recursive: true });
  await writeFile(join(gitDir, "info", "sparse-checkout"), `${patterns.join("\n")}\n`);
  await runChecked("git", ["-C", dir, "config", "core.sparseCheckout", "true"]);
  await runChecked("git", ["-C", dir, "config", "core.sparseCheckoutCone", "false"]);
  await runChecked("git", ["-C", dir, "checkout", "-f", "-q", "--detach", commit]);
  await runChecked("git", ["-C", dir, "clean", "-fdxq"]);
  return absent;
}

/**
 * Tracked files of the checkout: regular files only (no symlinks, no submodules).
 * @param {string} dir
 * @returns {Promise<{path: string, blob: string}[]>}
 */
export async function trackedFiles(dir) {
  const res = await runChecked("git", ["-C", dir, "ls-files", "-s", "-z"]);
  /** @type {{path: string, blob: string}[]} */
  const entries = [];
  for (const rec of res.stdout.split("\0")) {
    if (!rec) continue;
    const tab = rec.indexOf("\t");
    const [mode, blob] = rec.slice(0, tab).split(" ");
    if (!blob || (mode !== "100644" && mode !== "100755")) continue;
    entries.push({ path: rec.slice(tab + 1), blob });
  }
  return entries;
}
