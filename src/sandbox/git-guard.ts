/**
 * The git guard: whatever a sandboxed command writes in the user's folder, the user's own git runs no
 * code that the command chose. Git runs what its configuration names (core.fsmonitor, hooks, filter and
 * diff drivers, core.sshCommand, …), so every file from which git takes configuration or hooks is kept
 * read-only in the sandbox (`gitControlPaths().protect`, added to the policy's protectedPaths; absent
 * ones get the helper's read-only placeholder in a branch, and are checked after a run in the user's
 * folder like every absent protected path: absent-guard.ts).
 * The others — absent files that git would choke on if a folder stood in their place (`commondir`,
 * `config.worktree`, include targets, the control files of nested repositories) and new `.git` entries
 * anywhere in the folder (a new nested repository or gitlink: the sandbox cannot deny a name everywhere)
 * — are checked after the run (`checkGitAfterRun`): what appeared is moved out of the folder into the
 * data directory (quarantine, nothing is lost) and reported.
 *
 * Git itself is asked for its effective configuration (`git config --show-origin --get-regexp`), as the
 * user's git would read it (system, global, repository, worktree, includes), rather than a parser of our
 * own that could drift from git's rules. That call reads configuration files only: it never reads the
 * index (so no core.fsmonitor), runs no hooks, and runs no pager (stdout is a pipe, GIT_PAGER=cat);
 * `-c core.fsmonitor=false` and a cleaned environment are kept as belts and braces.
 */
import { execFile } from "node:child_process";
import type { Dirent } from "node:fs";
import { cp, lstat, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { workspaceDir } from "../config/paths.js";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { shownPath } from "../workspace/errors.js";
import { readOptionalText, UMBRA_IGNORE_FILES } from "../workspace/ignore-rules.js";
import { createLimiter } from "../workspace/limit.js";
import { type FindWorkspacePathsOptions, findWorkspacePaths } from "./workspace-walk.js";

const UMBRA_IGNORE_NAMES: ReadonlySet<string> = new Set(UMBRA_IGNORE_FILES);

/** Files and folders of a git directory that decide what git runs. */
const CONTROL_FILES = ["config", "hooks", "commondir", "config.worktree"] as const;
/** Folders of a git directory that hold no other git directory (not searched for module gitdirs). */
const PLAIN_GITDIR_FOLDERS = new Set(["objects", "refs", "logs", "info", "hooks", "lfs", "rr-cache"]);
/** At most this many nested repositories and module / worktree git directories are looked at. */
const MAX_GIT_DIRS = 256;
/** At most this many configuration files are followed through include.path / includeIf.*.path. */
const MAX_INCLUDES = 64;

/** Variables that would make git look at another repository than the folder's own. */
const REPOSITORY_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
];

interface GitRun {
  code: number;
  stdout: string;
}

/** Runs git for reading only: no fsmonitor, no pager, no prompt, no repository chosen by the environment. */
function readGit(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<GitRun> {
  const clean: NodeJS.ProcessEnv = { ...env, GIT_PAGER: "cat", PAGER: "cat", GIT_TERMINAL_PROMPT: "0" };
  clean.GIT_OPTIONAL_LOCKS = "0";
  for (const name of REPOSITORY_VARIABLES) delete clean[name];
  return new Promise((done) => {
    const child = execFile(
      "git",
      ["-c", "core.fsmonitor=false", ...args],
      { cwd, env: clean, timeout: 20_000, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout) => done({ code: error ? 1 : 0, stdout }),
    );
    child.stdin?.end();
  });
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function isAtOrBelow(path: string, parent: string): boolean {
  return path === parent || path.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** `~/x` and relative paths as git resolves a path-valued setting. */
function gitPath(value: string, base: string, home: string): string {
  if (value === "~") return home;
  if (value.startsWith("~/")) return join(home, value.slice(2));
  return resolve(base, value);
}

interface Repository {
  top: string;
  gitDir: string;
  commonDir: string;
}

/** The repository git finds from `dir` (undefined outside any, or when git cannot tell). */
async function repositoryAt(dir: string, env: NodeJS.ProcessEnv): Promise<Repository | undefined> {
  const run = await readGit(
    ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel"],
    dir,
    env,
  );
  const [gitDir, commonDir, top] = run.stdout.split("\n");
  if (run.code !== 0 || !gitDir || !commonDir || !top) return undefined;
  return { gitDir, commonDir, top };
}

/** The settings of `keys` git sees in `dir` (or in one `file`), each with the file it came from. */
async function settings(
  keys: string,
  where: { dir: string } | { file: string },
  env: NodeJS.ProcessEnv,
): Promise<{ origin: string | undefined; key: string; value: string }[]> {
  const cwd = "dir" in where ? where.dir : dirname(where.file);
  const args = ["config", "--null", "--show-origin"];
  if ("file" in where) args.push("--file", where.file);
  const run = await readGit([...args, "--get-regexp", keys], cwd, env);
  if (run.code !== 0) return [];
  const fields = run.stdout.split("\0");
  const out: { origin: string | undefined; key: string; value: string }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i] as string;
    const entry = fields[i + 1] as string;
    const newline = entry.indexOf("\n");
    const key = newline < 0 ? entry : entry.slice(0, newline);
    const value = newline < 0 ? "" : entry.slice(newline + 1);
    // Origins are "file:PATH" (relative to the directory git ran in) or "command line:" etc.
    const file = origin.startsWith("file:") ? resolve(cwd, origin.slice(5)) : undefined;
    out.push({ origin: file, key: key.toLowerCase(), value });
  }
  return out;
}

const INCLUDE_KEYS = "^(include\\.path|includeif\\..+\\.path)$";

/**
 * The effective core.hooksPath of the repository at `top` and every file named by include.path and
 * includeIf.*.path (whatever their condition: it may hold later), followed into the included files.
 */
async function hooksAndIncludes(
  top: string,
  env: NodeJS.ProcessEnv,
  home: string,
): Promise<{ hooksPath: string | undefined; includes: string[] }> {
  const found = await settings(
    `^(core\\.hookspath|include\\.path|includeif\\..+\\.path)$`,
    { dir: top },
    env,
  );
  let hooksPath: string | undefined;
  const includes = new Set<string>();
  const read = new Set<string>();
  const queue: { origin: string | undefined; value: string }[] = [];
  for (const { origin, key, value } of found) {
    if (origin) read.add(origin);
    if (key === "core.hookspath") hooksPath = value === "" ? undefined : gitPath(value, top, home);
    else queue.push({ origin, value });
  }
  while (queue.length > 0 && includes.size < MAX_INCLUDES) {
    const { origin, value } = queue.shift() as { origin: string | undefined; value: string };
    if (value === "") continue;
    const target = gitPath(value, origin ? dirname(origin) : top, home);
    if (includes.has(target)) continue;
    includes.add(target);
    // A file git did not read (its condition does not hold now): follow its own includes too.
    if (read.has(target) || !(await exists(target))) continue;
    read.add(target);
    for (const entry of await settings(INCLUDE_KEYS, { file: target }, env))
      queue.push({ origin: target, value: entry.value });
  }
  return { hooksPath, includes: [...includes] };
}

/**
 * The git directories below `commonDir/modules` (submodules, at any depth) and `commonDir/worktrees`
 * (linked worktrees): folders holding a HEAD.
 */
async function moduleAndWorktreeGitDirs(commonDir: string, limit: number): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    if (found.length >= limit || depth > 8) return;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const isGitDir = entries.some((entry) => entry.name === "HEAD" && entry.isFile());
    if (isGitDir) found.push(dir);
    for (const entry of entries) {
      if (!entry.isDirectory() || (isGitDir && PLAIN_GITDIR_FOLDERS.has(entry.name))) continue;
      await visit(join(dir, entry.name), depth + 1);
    }
  };
  await visit(join(commonDir, "modules"), 0);
  const worktrees = await readdir(join(commonDir, "worktrees"), { withFileTypes: true }).catch(
    () => [] as Dirent[],
  );
  for (const entry of worktrees)
    if (entry.isDirectory()) found.push(join(commonDir, "worktrees", entry.name));
  return found.slice(0, limit);
}

/** The gitdir a `.git` file names (`gitdir: PATH`, relative to the file's folder), if it is one. */
async function gitFileTarget(file: string): Promise<string | undefined> {
  try {
    const info = await lstat(file);
    if (!info.isFile() || info.size > 4096) return undefined;
    const match = /^gitdir: (.+?)\r?\n?$/.exec(await readFile(file, "utf8"));
    return match?.[1] ? resolve(dirname(file), match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export interface GitControlPaths {
  /** To keep read-only in the sandbox (absent ones: a placeholder in a branch, see absent-guard.ts). */
  protect: string[];
  /** Absent inside the workspace, not protectable without breaking git: checked after the run. */
  watch: string[];
  /** The effective hooks folders (core.hooksPath), absolute. */
  hooksPaths: string[];
  /** Every git directory looked at (the workspace's own, modules, worktrees, nested repositories). */
  gitDirs: string[];
  /** Where module and worktree git directories live (`<common dir>` of each repository in the workspace). */
  commonDirs: string[];
  /** What was there before the run, to tell afterwards what the command replaced or planted. */
  before: GitBefore;
  warnings: string[];
}

/** The state before a run that checkGitAfterRun compares with. */
export interface GitBefore {
  /** When the guard looked, on the filesystems' clock (ms): control files changed later are the command's. */
  since: number;
  /** Device and inode of each `.git` folder of the workspace and its nested repositories, by absolute path. */
  dotGitIds: ReadonlyMap<string, string>;
}

/** Files of a bare-looking git directory that decide what git runs there (see looksLikeGitDir). */
const BARE_CONTROL_FILES = ["HEAD", "config", "commondir", "config.worktree", "hooks"] as const;
/** Without a stamp file, a control file changed up to this long before the guard looked counts as new. */
const CLOCK_SLACK_MS = 2_000;

/**
 * "Now" on the filesystems' clock (coarse: it may lag Date.now() by a tick), read as the change time of
 * a stamp file written in the data directory: a file changed after the guard looked has a later one.
 */
async function filesystemNow(root: string, env: NodeJS.ProcessEnv): Promise<number> {
  const file = join(workspaceDir(root, env), "git-guard.stamp");
  try {
    await privateDir(dirname(file));
    await writeFile(file, `${process.pid} ${Date.now()}\n`, { mode: PRIVATE_FILE });
    return (await lstat(file)).ctimeMs;
  } catch {
    return Date.now() - CLOCK_SLACK_MS;
  }
}

function identity(info: { dev: number; ino: number }): string {
  return `${info.dev}:${info.ino}`;
}

/**
 * What keeps the user's git from running a command's code, for the workspace `root` (absolute, real)
 * and the `.git` entries found in it below the top (`nested`, absolute): for each repository (the one
 * `root` lies in and every nested one) its `.git` file, the control files of its git directory, common
 * directory, modules and worktrees, its effective hooks folder and its include targets. A workspace
 * that has no `.git` of its own gets one protected (moved out after the run when a command made it): a
 * command may not make it a repository.
 */
export async function gitControlPaths(
  root: string,
  nested: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<GitControlPaths> {
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const since = await filesystemNow(root, env);
  const dotGitIds = new Map<string, string>();
  const protect = new Set<string>();
  const absent = new Set<string>();
  const hooksPaths = new Set<string>();
  const gitDirs = new Set<string>();
  const commonDirs = new Set<string>();
  const warnings: string[] = [];
  const limit = createLimiter(8);

  const top = join(root, ".git");
  if (!(await exists(top))) protect.add(top);
  const dirs = [root, ...nested.slice(0, MAX_GIT_DIRS).map((entry) => dirname(entry))];
  if (nested.length > MAX_GIT_DIRS)
    warnings.push(
      `the workspace holds more than ${MAX_GIT_DIRS} nested git repositories; only the first ${MAX_GIT_DIRS} are guarded`,
    );
  await Promise.all(
    dirs.map((dir) =>
      limit(async () => {
        // A `.git` file or link names the git directory: it stays as it is (a folder is guarded inside).
        const dotGit = join(dir, ".git");
        const kind = await lstat(dotGit).catch(() => undefined);
        if (kind && !kind.isDirectory()) protect.add(dotGit);
        if (kind?.isDirectory()) dotGitIds.set(dotGit, identity(kind));
        const target = await gitFileTarget(dotGit);
        if (target) gitDirs.add(target);
        // Both asked at once; the settings count only when `dir` is a repository's top (or the workspace).
        const [repo, hooks] = await Promise.all([repositoryAt(dir, env), hooksAndIncludes(dir, env, home)]);
        // An empty or broken nested .git is no repository: git goes on to the folder above.
        if (!repo || (dir !== root && repo.top !== dir)) return;
        gitDirs.add(repo.gitDir);
        gitDirs.add(repo.commonDir);
        if (isAtOrBelow(repo.commonDir, root)) commonDirs.add(repo.commonDir);
        for (const gitDir of await moduleAndWorktreeGitDirs(repo.commonDir, MAX_GIT_DIRS))
          gitDirs.add(gitDir);
        const { hooksPath, includes } =
          dir === repo.top ? hooks : await hooksAndIncludes(repo.top, env, home);
        if (hooksPath) {
          hooksPaths.add(hooksPath);
          protect.add(hooksPath);
        }
        for (const file of includes) ((await exists(file)) ? protect : absent).add(file);
      }),
    ),
  );
  for (const gitDir of gitDirs) {
    if (!(await exists(gitDir))) {
      absent.add(gitDir);
      continue;
    }
    for (const name of CONTROL_FILES) {
      const path = join(gitDir, name);
      ((await exists(path)) ? protect : absent).add(path);
    }
  }
  // Absent ones inside the workspace are checked after the run (an absent top .git/hooks is protected
  // too: PROTECTED_WORKSPACE_PATHS).
  const watch = [...absent].filter((path) => isAtOrBelow(path, root) && !protect.has(path));
  return {
    protect: [...protect].sort(),
    watch: watch.sort(),
    hooksPaths: [...hooksPaths].sort(),
    gitDirs: [...gitDirs].sort(),
    commonDirs: [...commonDirs].sort(),
    before: { since, dotGitIds },
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------------
// After the run

/** What the guard needs to check a run in the user's folder afterwards (see resolvePolicy). */
export interface GitGuard {
  /** The workspace (absolute, real). */
  root: string;
  /** Workspace-relative `.git` entries before the run; undefined when the walk could not see them all. */
  entries: ReadonlySet<string> | undefined;
  /** Absent control paths to check (absolute). */
  watch: readonly string[];
  /** Module and worktree git directories before the run (absolute). */
  gitDirs: ReadonlySet<string>;
  /** The effective hooks folders (absolute). */
  hooksPaths: readonly string[];
  /** Where module and worktree git directories live (absolute, inside the workspace). */
  commonDirs: readonly string[];
  /** What was there before the run (absent: only new `.git` entries and control files are found). */
  before?: GitBefore;
  /** The ignore files before the run (absolute): a new .umbraignore, .cursorignore, or a `.gitignore`
   * that is a FIFO or device, is the command's. */
  ignoreFiles?: ReadonlySet<string>;
  /**
   * How the policy walked the workspace (its cache file included): the walk after the run is the same
   * one, so that it lists only the folders the command changed (see workspace-walk.ts) and sees `.git`
   * entries exactly as the walk before it did.
   */
  walk: FindWorkspacePathsOptions;
}

/** A git entry a command created that the guard moved out of the user's folder. */
export interface GitRefusal {
  /** Workspace-relative. */
  path: string;
  why: string;
  /** Where it is now (in the data directory). */
  movedTo: string;
}

export interface GitCheck {
  refused: GitRefusal[];
  warnings: string[];
}

/** A path the guard found in the user's folder after a run (absolute), and why it must go. */
export interface FoundPath {
  abs: string;
  why: string;
}

/**
 * Moves each of `found` (absolute, in the workspace `root`) into the quarantine; a path at or below one
 * moved already is skipped (it went with it). Says what went where, and what could not be moved.
 */
export async function moveOutOfFolder(
  root: string,
  found: readonly FoundPath[],
  env: NodeJS.ProcessEnv,
): Promise<GitCheck> {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const refused: GitRefusal[] = [];
  const warnings: string[] = [];
  const done: string[] = [];
  for (const { abs, why } of found) {
    if (done.some((moved) => isAtOrBelow(abs, moved))) continue;
    done.push(abs);
    const path = relative(root, abs).split(sep).join("/");
    try {
      refused.push({ path, why, movedTo: await quarantine(root, abs, stamp, env) });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      warnings.push(
        `could not move ${shownPath(path)} out of your folder (${reason}): remove it before running git there`,
      );
    }
  }
  return { refused, warnings };
}

/**
 * Why a new ignore file (`.gitignore`, `.umbraignore`, `.cursorignore`) must go, or undefined when it
 * is harmless: an umbra ignore file that could un-hide (see unhides), or any that is no file (a FIFO or
 * device: git, ripgrep and umbra would hang reading it). One that only hides more stays.
 */
export async function newIgnoreFileRisk(abs: string): Promise<string | undefined> {
  const name = basename(abs);
  if (UMBRA_IGNORE_NAMES.has(name) && (await unhides(abs)))
    return `a new ${name} with a \`!\` line, which would un-hide a file: un-hiding is the user's to write, not a command's`;
  if (await isSpecialFile(abs))
    return `a new ${name} that is no file: git, ripgrep and umbra would hang reading it`;
  return undefined;
}

/**
 * Whether an umbra ignore file could make a match visible again: a `!` line (a negation), or content
 * that cannot be read as a regular file. Without one, a new ignore file can only hide more.
 */
async function unhides(path: string): Promise<boolean> {
  const text = await readOptionalText(path);
  return text === undefined || text.split(/\r?\n/).some((line) => line.trimStart().startsWith("!"));
}

/** A FIFO, socket or device (not a file, folder or link). */
async function isSpecialFile(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info !== undefined && !info.isFile() && !info.isDirectory() && !info.isSymbolicLink();
}

/** An empty folder: what the sandbox's placeholders are, and no repository (git looks past it). */
async function isEmptyDir(path: string): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  if (!info?.isDirectory()) return false;
  return (await readdir(path).catch(() => ["?"])).length === 0;
}

/**
 * Moves `abs` into the workspace's quarantine folder of the data directory; returns where it went. A
 * `.git` is renamed `.git.quarantined` there, so that no git run in that folder takes it for a repository.
 */
async function quarantine(root: string, abs: string, stamp: string, env: NodeJS.ProcessEnv): Promise<string> {
  const base = join(workspaceDir(root, env), "quarantine", stamp);
  const moved = join(base, relative(root, abs));
  const destination = basename(moved) === ".git" ? `${moved}.quarantined` : moved;
  await privateDir(base);
  await privateDir(dirname(destination));
  try {
    await rename(abs, destination);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    // a FIFO or device holds nothing to keep (and cannot be copied): it is only removed
    if (await isSpecialFile(abs)) await writeFile(destination, "", { mode: PRIVATE_FILE });
    else
      await cp(abs, destination, {
        recursive: true,
        verbatimSymlinks: true,
        errorOnExist: true,
        force: false,
      });
    await rm(abs, { recursive: true, force: true });
  }
  return destination;
}

/**
 * After a command ran with the user's folder writable: moves every new `.git` entry (a nested
 * repository, a gitlink's `.git` file, a `.git` symlink), every new module or worktree git directory and
 * every watched control path that appeared, and every path of `appeared` (absent protected paths that
 * appeared, see absent-guard.ts), out of the folder into `<data>/workspaces/<id>/quarantine/<time>/`,
 * and says which and why. Empty folders are left: they are no repository (and may be an older
 * version's placeholders).
 */
export async function checkGitAfterRun(
  guard: GitGuard,
  env: NodeJS.ProcessEnv = process.env,
  appeared: readonly FoundPath[] = [],
): Promise<GitCheck> {
  const warnings: string[] = [];
  // a .git folder renamed away and replaced: the new one is moved out below, the old one put back
  const replaced = guard.before
    ? await replacedDotGits(guard.before)
    : { found: [], restores: [], warnings: [] };
  const found: FoundPath[] = replaced.found.map((abs) => ({
    abs,
    why: "the command replaced this .git folder by one of its own: git run here would use its configuration and hooks",
  }));
  warnings.push(...replaced.warnings);
  for (const path of guard.watch) {
    if (await exists(path))
      found.push({
        abs: path,
        why: "a git control file the command created: it could make your git run a program it chose",
      });
  }
  for (const commonDir of guard.commonDirs) {
    for (const gitDir of await moduleAndWorktreeGitDirs(commonDir, MAX_GIT_DIRS)) {
      if (!guard.gitDirs.has(gitDir))
        found.push({
          abs: gitDir,
          why: "a new submodule or worktree git directory: its configuration and hooks are the command's",
        });
    }
  }
  if (guard.entries === undefined) {
    warnings.push("the folder has too many entries to check it for new git repositories made by the command");
  } else {
    const after = findWorkspacePaths(guard.root, guard.walk);
    const originals = new Set(replaced.restores.map((restore) => restore.original));
    const planted = after.bareGitDirs.filter((rel) => !originals.has(join(guard.root, rel)));
    if (guard.before) found.push(...(await plantedBareGitDirs(guard.root, planted, guard.before.since)));
    for (const rel of after.truncated ? [] : after.gitEntries) {
      if (guard.entries.has(rel)) continue;
      found.push({
        abs: join(guard.root, rel),
        why:
          rel === ".git"
            ? "the command made this folder a git repository: git run here would use its configuration and hooks"
            : "a new nested git repository or gitlink: git run there (a shell prompt, git status) would use its configuration and hooks",
      });
    }
    for (const abs of after.truncated ? [] : after.ignoreFiles) {
      if (!guard.ignoreFiles || guard.ignoreFiles.has(abs)) continue;
      const why = await newIgnoreFileRisk(abs);
      if (why) found.push({ abs, why });
    }
  }
  const kept: FoundPath[] = [];
  for (const entry of [...found, ...appeared])
    if (!(await isEmptyDir(entry.abs)) || replaced.found.includes(entry.abs)) kept.push(entry);
  const moved = await moveOutOfFolder(guard.root, kept, env);
  warnings.push(...moved.warnings);
  for (const { dotGit, original } of replaced.restores) {
    const path = relative(guard.root, dotGit).split(sep).join("/");
    const from = relative(guard.root, original).split(sep).join("/");
    try {
      if (await exists(dotGit)) throw new Error(`${path} is still there`);
      await rename(original, dotGit);
      warnings.push(`the command had renamed ${path} to ${shownPath(from)}; umbra put it back`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      warnings.push(
        `the command renamed ${path} to ${shownPath(from)}, and umbra could not put it back (${reason})`,
      );
    }
  }
  return { refused: moved.refused, warnings };
}

/**
 * The folders among `bareDirs` (workspace-relative) that hold a HEAD and objects and refs (or a
 * commondir naming them) — a git directory to git, which uses it when run in that folder or below it
 * (`core.worktree` even gives it a work tree)
 * — and whose control files changed during the run: their HEAD is moved out, which makes the folder no
 * git directory. Older ones (a test fixture of the user's) are left.
 */
async function plantedBareGitDirs(
  root: string,
  bareDirs: readonly string[],
  since: number,
): Promise<{ abs: string; why: string }[]> {
  const out: { abs: string; why: string }[] = [];
  for (const rel of bareDirs) {
    const dir = join(root, rel);
    const changed = await Promise.all(
      BARE_CONTROL_FILES.map((name) =>
        lstat(join(dir, name)).then(
          (info) => info.ctimeMs > since,
          () => false,
        ),
      ),
    );
    if (changed.some(Boolean))
      out.push({
        abs: join(dir, "HEAD"),
        why: "the command made this folder a git directory (HEAD with objects and refs, or a commondir): git run there would use its configuration and hooks",
      });
  }
  return out;
}

/**
 * `.git` folders that the command replaced (renamed away, then a new one made in their place): the new
 * one is moved out; the old one is put back when it is still beside it under another name.
 */
async function replacedDotGits(before: GitBefore): Promise<{
  found: string[];
  restores: { dotGit: string; original: string }[];
  warnings: string[];
}> {
  const found: string[] = [];
  const restores: { dotGit: string; original: string }[] = [];
  const warnings: string[] = [];
  for (const [dotGit, id] of before.dotGitIds) {
    const now = await lstat(dotGit).catch(() => undefined);
    if (now && identity(now) === id) continue;
    const folder = dirname(dotGit);
    let original: string | undefined;
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const info = await lstat(join(folder, name)).catch(() => undefined);
      if (info && identity(info) === id) original = join(folder, name);
    }
    if (now) found.push(dotGit);
    if (original) restores.push({ dotGit, original });
    else
      warnings.push(
        `the command removed or moved ${shownPath(dotGit)}, and umbra found it nowhere beside it: look for it before running git there`,
      );
  }
  return { found, restores, warnings };
}

/** The lines `umbra` prints on stderr for a check. */
export function formatGitCheck(check: GitCheck): string {
  const lines = [
    ...check.refused.map(
      (refusal) =>
        `umbra: refused ${shownPath(refusal.path)}: ${refusal.why}; moved to ${shownPath(refusal.movedTo)}`,
    ),
    ...check.warnings.map((warning) => `umbra: warning: ${warning}`),
  ];
  return lines.length ? `${lines.join("\n")}\n` : "";
}
