import { execFile } from "node:child_process";
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { errorCode } from "./errors.js";
import { IgnoreRules, type SourcedPattern, segmentMatches } from "./ignore-match.js";
import { readIfRegular } from "./rooted.js";

export type { SourcedPattern } from "./ignore-match.js";

/** Ignore files honoured in every folder of a workspace, in the order they are applied (later wins). */
export const GIT_IGNORE_FILES = [".gitignore"] as const;
export const UMBRA_IGNORE_FILES = [".cursorignore", ".umbraignore"] as const;
export const IGNORE_FILE_NAMES: ReadonlySet<string> = new Set([...GIT_IGNORE_FILES, ...UMBRA_IGNORE_FILES]);

/**
 * The rules in force in one folder. Git rules (.gitignore, .git/info/exclude, global excludes) and umbra
 * rules (.umbraignore, .cursorignore) are kept apart so that a negation in one cannot re-include a path the
 * other excludes: a path is skipped when either set excludes it.
 */
export interface IgnoreContext {
  git?: IgnoreRules;
  umbra?: IgnoreRules;
}

const IGNORE_CASE = process.platform === "darwin" || process.platform === "win32";

/** Escapes glob syntax in a literal folder path so it can prefix a pattern. */
function escapeGlob(literal: string): string {
  const escaped = literal.replace(/[\\*?[\]]/g, "\\$&");
  return escaped.startsWith("#") || escaped.startsWith("!") ? `\\${escaped}` : escaped;
}

/**
 * One line of an ignore file as git reads it: without the CR before its LF, cut at a NUL (git reads it as
 * a C string), and without trailing spaces unless escaped (`a\ ` keeps one, `a\\ ` none: there the
 * backslash is escaped, not the space).
 */
function readLine(line: string): string {
  const withoutCr = line.endsWith("\r") ? line.slice(0, -1) : line;
  const nul = withoutCr.indexOf("\0");
  const text = nul < 0 ? withoutCr : withoutCr.slice(0, nul);
  let trailingSpaces = -1;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === " ") {
      if (trailingSpaces < 0) trailingSpaces = i;
      continue;
    }
    if (text[i] === "\\" && ++i === text.length) return text;
    trailingSpaces = -1;
  }
  return trailingSpaces < 0 ? text : text.slice(0, trailingSpaces);
}

/**
 * Rewrites one line of an ignore file that lives in `baseDir` (posix, relative to the workspace root, ""
 * for the root) into an equivalent pattern relative to the root, so that rules of nested files can be
 * evaluated together with git's precedence (the last matching rule wins, deeper files come later).
 * Returns undefined for blank lines, comments and patterns that match nothing.
 */
export function rebasePattern(line: string, baseDir: string): string | undefined {
  const trimmed = readLine(line);
  if (trimmed === "" || trimmed.startsWith("#")) return undefined;
  if (baseDir === "") return trimmed;
  const negative = trimmed.startsWith("!");
  const body = negative ? trimmed.slice(1) : trimmed;
  const dirOnly = body.endsWith("/");
  let core = dirOnly ? body.slice(0, -1) : body;
  if (core === "" || core === "/") return undefined;
  // A slash at the start or in the middle anchors the pattern to its file's folder; otherwise it matches
  // at any depth below that folder.
  const anchored = core.includes("/");
  if (core.startsWith("/")) core = core.slice(1);
  const rebased = `${escapeGlob(baseDir)}/${anchored ? "" : "**/"}${core}${dirOnly ? "/" : ""}`;
  return negative ? `!${rebased}` : rebased;
}

/**
 * Rewrites one line of an ignore file that lives `prefix` folders above the workspace root (e.g. the
 * repository's top-level .gitignore when the root is `repo/packages/app`: prefix `["packages", "app"]`)
 * into a pattern relative to the root. Unanchored patterns apply at any depth, so they stay as they are;
 * an anchored one applies only if its leading segments match the prefix, and is cut to what follows.
 * Patterns that cannot reach below the root are dropped.
 */
export function rebaseFromAncestor(line: string, prefix: readonly string[]): string | undefined {
  const trimmed = readLine(line);
  if (trimmed === "" || trimmed.startsWith("#")) return undefined;
  const negative = trimmed.startsWith("!");
  const body = negative ? trimmed.slice(1) : trimmed;
  const dirOnly = body.endsWith("/");
  const core = dirOnly ? body.slice(0, -1) : body;
  if (core === "" || core === "/") return undefined;
  if (!core.includes("/")) return trimmed;
  const segments = core.replace(/^\//, "").split("/");
  let i = 0;
  for (; i < prefix.length && i < segments.length; i++) {
    const segment = segments[i] as string;
    // `**` may stand for the rest of the prefix and any depth below the root.
    if (segment === "**")
      return `${negative ? "!" : ""}**/${segments.slice(i + 1).join("/")}${dirOnly ? "/" : ""}`;
    if (!segmentMatches(segment, prefix[i] as string, { ignoreCase: IGNORE_CASE })) return undefined;
  }
  if (i === segments.length) return undefined; // matches the root or a folder above it, not below
  return `${negative ? "!" : ""}/${segments.slice(i).join("/")}${dirOnly ? "/" : ""}`;
}

/**
 * Rules of the git repository that encloses `root` when `root` is a folder inside it rather than its top:
 * the `.gitignore` of every folder from the repository's top down to `root`'s parent, then the
 * repository's `.git/info/exclude`, rebased onto `root`. Empty when `root` is not inside a repository.
 */
export async function enclosingRepositoryRules(root: string): Promise<SourcedPattern[]> {
  const top = await findRepositoryTop(root);
  if (top === undefined || top === root) return [];
  const ancestors: string[] = [];
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    ancestors.unshift(dir);
    if (dir === top) break;
  }
  const rebaseAll = (text: string, from: string, mark: string) => {
    const prefix = relative(from, root).split("/");
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    return body.split("\n").flatMap((line) => {
      const pattern = rebaseFromAncestor(line, prefix);
      return pattern === undefined ? [] : [{ pattern, mark }];
    });
  };
  const patterns: SourcedPattern[] = [];
  const infoExclude = await findInfoExclude(top);
  const infoText = infoExclude ? await readOptionalText(infoExclude) : undefined;
  if (infoText) patterns.push(...rebaseAll(infoText, top, join(relative(root, top), ".git/info/exclude")));
  for (const dir of ancestors) {
    const text = await readOptionalText(join(dir, ".gitignore"));
    if (text) patterns.push(...rebaseAll(text, dir, join(relative(root, dir), ".gitignore")));
  }
  return patterns;
}

/** Parses the text of an ignore file found in `baseDir` into root-relative patterns marked with `source`. */
export function parseIgnoreFile(text: string, baseDir: string, source: string): SourcedPattern[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const patterns: SourcedPattern[] = [];
  for (const line of body.split("\n")) {
    const pattern = rebasePattern(line, baseDir);
    if (pattern !== undefined) patterns.push({ pattern, mark: source });
  }
  return patterns;
}

/** A rule set holding the parent's rules followed by `patterns` (which take precedence). */
export function extendRules(
  parent: IgnoreRules | undefined,
  patterns: readonly SourcedPattern[],
): IgnoreRules | undefined {
  if (patterns.length === 0) return parent;
  return parent ? parent.extend(patterns) : IgnoreRules.compile(patterns, { ignoreCase: IGNORE_CASE });
}

/**
 * Which ignore file excludes `relPath` (posix, relative to the root), or undefined when none does.
 * Directories are tested with a trailing slash so that directory-only patterns (`logs/`) apply.
 */
export function matchIgnore(context: IgnoreContext, relPath: string, isDir: boolean): string | undefined {
  const subject = isDir ? `${relPath}/` : relPath;
  for (const rules of [context.umbra, context.git]) {
    const verdict = rules?.test(subject);
    if (verdict?.ignored) return verdict.mark;
  }
  return undefined;
}

/**
 * Reads a regular text file, or undefined when it is missing, cannot be read or is no regular file: a
 * FIFO that a command named `.gitignore` or `.git` is opened without blocking and never read (a read
 * would wait for a writer forever). See readOptionalTextSync for the synchronous form.
 */
export async function readOptionalText(file: string): Promise<string | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    if (!(await handle.stat()).isFile()) return undefined;
    return await handle.readFile("utf8");
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** Ignore files larger than this are not read by the sandbox's walk (nobody writes 1 MiB of rules). */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/**
 * readOptionalText, synchronous, for the sandbox's workspace walk: a regular file of at most 1 MiB, else
 * undefined (a FIFO or a huge file a command made cannot hang or exhaust the next start).
 */
export function readOptionalTextSync(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > MAX_IGNORE_FILE_BYTES) return undefined;
    return readFileSync(fd, "utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function gitConfigExcludesFile(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((done) => {
    try {
      execFile(
        "git",
        ["config", "--global", "--path", "--get", "core.excludesFile"],
        { env, timeout: 5000, windowsHide: true, encoding: "utf8" },
        (error, stdout) => {
          const value = error ? "" : stdout.trim();
          done(value === "" ? undefined : value);
        },
      );
    } catch {
      done(undefined);
    }
  });
}

/**
 * Where git's global excludes file is: `core.excludesFile` from the global git config (when git is
 * installed), else `$XDG_CONFIG_HOME/git/ignore`, else `~/.config/git/ignore`. The file may not exist.
 */
export async function findGlobalExcludesFile(
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const home = env.HOME || homedir();
  const configured = await gitConfigExcludesFile(env);
  if (configured !== undefined) return isAbsolute(configured) ? configured : resolve(home, configured);
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "git", "ignore");
  return home ? join(home, ".config", "git", "ignore") : undefined;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The top level of the git repository that holds `root` (`root` itself or an ancestor), if any. */
export async function findRepositoryTop(root: string): Promise<string | undefined> {
  for (let dir = root; ; dir = dirname(dir)) {
    if (await exists(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The git directory of the repository whose top level is `root` (following a `.git` file, `gitdir: …`,
 * as in worktrees and submodules) and its common directory (shared by a repository's worktrees).
 */
export async function findGitDir(root: string): Promise<{ gitDir: string; commonDir: string } | undefined> {
  const dotGit = join(root, ".git");
  try {
    const info = await stat(dotGit);
    if (info.isDirectory()) return { gitDir: dotGit, commonDir: dotGit };
    if (!info.isFile()) return undefined;
  } catch {
    return undefined;
  }
  const text = await readOptionalText(dotGit);
  // The line's text without the blanks around it (one blank if it is nothing else, as `(.+?)\s*$` read
  // it): not the shortest text before blanks and the line's end, which read a run of blanks again from
  // each of them.
  const match = text === undefined ? null : /^gitdir:\s*(\S(?:.*\S)?|.)\s*$/m.exec(text);
  if (!match?.[1]) return undefined;
  const gitDir = resolve(root, match[1]);
  const common = (await readOptionalText(join(gitDir, "commondir")))?.trim();
  return { gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
}

/** The `info/exclude` file of the repository whose top level is `root`. */
export async function findInfoExclude(root: string): Promise<string | undefined> {
  const git = await findGitDir(root);
  return git && join(git.commonDir, "info", "exclude");
}

/**
 * The umbra rules of a folder as they are now: `(path, isDir)` tells whether its .umbraignore /
 * .cursorignore files (nested, git syntax) match the workspace-relative `path` or a folder above it.
 * The ignore files are read from `root` without following any link, each folder's once per matcher:
 * make a new matcher to see later edits.
 */
export function umbraIgnoreMatcher(root: string): (path: string, isDir?: boolean) => Promise<boolean> {
  const contexts = new Map<string, Promise<IgnoreContext>>();
  const context = (dir: string): Promise<IgnoreContext> => {
    let found = contexts.get(dir);
    if (!found) {
      found = (async () => {
        const parent = dir === "" ? {} : await context(parentFolder(dir));
        let rules = parent.umbra;
        for (const name of UMBRA_IGNORE_FILES) {
          const source = dir === "" ? name : `${dir}/${name}`;
          const text = mayExist(root, source)
            ? await readIfRegular(root, source).catch(() => undefined)
            : undefined;
          if (text) rules = extendRules(rules, parseIgnoreFile(text.toString("utf8"), dir, source));
        }
        return rules ? { umbra: rules } : {};
      })();
      contexts.set(dir, found);
    }
    return found;
  };
  return async (path, isDir = false) => {
    const parts = path.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const sub = parts.slice(0, i).join("/");
      if (matchIgnore(await context(parentFolder(sub)), sub, i < parts.length || isDir)) return true;
    }
    return false;
  };
}

/**
 * Whether anything may be at `rel`: one lstat, before the rooted read (which opens every folder on the way,
 * a dozen calls). Most folders hold no ignore file, and a search checks every folder above each hit. Only
 * "nothing there" skips the read; whatever is there is read (or refused) by the rooted reader.
 */
function mayExist(root: string, rel: string): boolean {
  try {
    // "nothing there" as undefined, not an error: making the error costs five times the lstat
    return lstatSync(join(root, rel), { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    const code = errorCode(error);
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}

/** The workspace-relative folder of `path` ("" at the top). */
function parentFolder(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}
