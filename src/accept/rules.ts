/**
 * What an accepted diff may write into the user's folder. The diff is split into its per-file sections
 * (git's format, as src/shadow/diff.ts writes it); each section is judged against the accept rules and
 * either kept or refused with a reason. The rules:
 *
 * - never a protected path: anything with a `.git` component (any case, as git itself refuses), editor
 *   and umbra settings (`.vscode`, `.idea`, `.umbra`, `*.code-workspace`), ignore files and
 *   `.gitmodules` at any depth, and whatever the sandbox keeps read-only in this folder (the git control
 *   files of the git guard, the core.hooksPath folder, include targets — also those that do not exist
 *   yet —, configured protected paths);
 * - never a hidden path (.umbraignore / .cursorignore, configured hidden paths), nor anything below one;
 * - never a symbolic link that points outside the folder (absolute, or climbing out with `..`, also
 *   `name/..`, which climbs from wherever a link `name` leads), into git metadata, or at a protected or
 *   hidden path; links inside are fine;
 * - never a gitlink (mode 160000) or an unknown mode; a new file may be executable (100755, shown in the
 *   diff), an existing one is never made executable; setuid/setgid bits cannot be expressed in a diff;
 * - never replace a folder by a file or a link, nor write through a file or link of the user's where
 *   the diff expects a folder;
 * - never delete (or rename away) a file that git cannot restore: untracked or ignored in a repository,
 *   or any file in a folder that is no repository.
 */
import { execFile } from "node:child_process";
import { lstat } from "node:fs/promises";
import { join, posix } from "node:path";
import { isAtOrBelow } from "../shadow/relpath.js";

/** A change of the diff that was not applied, and why. */
export interface Refusal {
  path: string;
  why: string;
}

/** One file's section of a git diff. */
export interface DiffSection {
  text: string;
  /** The path before (undefined for an added file). */
  oldPath: string | undefined;
  /** The path after (undefined for a deleted file). */
  newPath: string | undefined;
  oldMode: string | undefined;
  newMode: string | undefined;
  /** The target of a symbolic link the section writes (mode 120000). */
  linkTarget: string | undefined;
  /** The file is over the diff's size limit: the section names it but does not carry its content. */
  large?: true;
}

const OCTAL = /^[0-7]{3}/;

/** A C-quoted git path (`"a\tb"`) starting at `text[0]`: [path, rest], or undefined. */
function unquote(text: string): [string, string] | undefined {
  if (!text.startsWith('"')) return undefined;
  const bytes: number[] = [];
  const named: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '"': 34, "\\": 92 };
  for (let i = 1; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '"') return [Buffer.from(bytes).toString("utf8"), text.slice(i + 1)];
    if (ch !== "\\") {
      bytes.push(...Buffer.from(ch, "utf8"));
      continue;
    }
    const next = text.slice(i + 1);
    if (OCTAL.test(next)) {
      bytes.push(Number.parseInt(next.slice(0, 3), 8));
      i += 3;
    } else if (next[0] !== undefined && named[next[0]] !== undefined) {
      bytes.push(named[next[0]] as number);
      i += 1;
    } else return undefined;
  }
  return undefined;
}

/** A path as a header line gives it (quoted or not), without the `a/` or `b/` prefix. */
function headerPath(value: string, prefix: string): string | undefined {
  const quoted = unquote(value);
  const path = quoted && quoted[1].trim() === "" ? quoted[0] : quoted ? undefined : value.replace(/\t$/, "");
  if (path === undefined) return undefined;
  if (path === "/dev/null") return path;
  return prefix && path.startsWith(prefix) ? path.slice(prefix.length) : prefix ? undefined : path;
}

/** The two paths of `diff --git a/X b/Y`. */
function gitLinePaths(rest: string): [string, string] | undefined {
  const first = unquote(rest);
  if (first) {
    const second = unquote(first[1].trimStart());
    if (first[0].startsWith("a/") && second?.[0].startsWith("b/"))
      return [first[0].slice(2), second[0].slice(2)];
    const plain = first[1].trimStart();
    if (first[0].startsWith("a/") && plain.startsWith("b/")) return [first[0].slice(2), plain.slice(2)];
    return undefined;
  }
  // Unquoted: the same path twice (`a/P b/P`), or a quoted second one.
  const half = (rest.length - 5) / 2;
  const path = rest.slice(2, 2 + half);
  if (Number.isInteger(half) && rest === `a/${path} b/${path}`) return [path, path];
  const split = rest.indexOf(' "b/');
  const second = split >= 0 ? unquote(rest.slice(split + 1)) : undefined;
  if (rest.startsWith("a/") && second) return [rest.slice(2, split), second[0].slice(2)];
  return undefined;
}

/**
 * The two paths of a rename or copy from its `rename from` / `rename to` (or copy) headers: its
 * `diff --git a/X b/Y` line cannot be split when X and Y differ and are not quoted, as git writes them.
 */
function movePaths(lines: readonly string[]): [string, string] | undefined {
  let from: string | undefined;
  let to: string | undefined;
  for (const line of lines.slice(1)) {
    if (line.startsWith("@@") || line.startsWith("--- ")) break;
    const [key, value] = splitHeader(line);
    if (key === "rename from" || key === "copy from") from = headerPath(value, "");
    else if (key === "rename to" || key === "copy to") to = headerPath(value, "");
  }
  return from !== undefined && to !== undefined ? [from, to] : undefined;
}

/** Splits a git diff into its file sections; text before the first `diff --git` line is dropped. */
export function splitDiff(diff: string): (DiffSection | { text: string; unreadable: true })[] {
  const parts = diff.split(/(?=^diff --git )/m).filter((part) => part.startsWith("diff --git "));
  return parts.map((text) => {
    const lines = text.split("\n");
    const paths = gitLinePaths((lines[0] as string).slice("diff --git ".length)) ?? movePaths(lines);
    if (!paths) return { text, unreadable: true as const };
    let [oldPath, newPath]: [string | undefined, string | undefined] = paths;
    let oldMode: string | undefined;
    let newMode: string | undefined;
    let added = false;
    let deleted = false;
    const plus: string[] = [];
    let inHunk = false;
    for (const line of lines.slice(1)) {
      if (inHunk) {
        if (line.startsWith("+")) plus.push(line.slice(1));
        continue;
      }
      const [key, value] = splitHeader(line);
      if (key === "new file mode") {
        added = true;
        newMode = value;
      } else if (key === "deleted file mode") {
        deleted = true;
        oldMode = value;
      } else if (key === "old mode") oldMode = value;
      else if (key === "new mode") newMode = value;
      else if (key === "index") {
        const mode = / ([0-7]{6})$/.exec(value)?.[1];
        if (mode) oldMode = newMode = mode;
      } else if (key === "rename from" || key === "copy from") oldPath = headerPath(value, "");
      else if (key === "rename to" || key === "copy to") newPath = headerPath(value, "");
      else if (line.startsWith("@@")) inHunk = true;
    }
    if (added) oldPath = undefined;
    if (deleted) newPath = undefined;
    if ((oldPath === undefined && !added) || (newPath === undefined && !deleted))
      return { text, unreadable: true as const };
    const linkTarget = newMode === "120000" ? plus.join("\n") : undefined;
    // a file over the diff's size limit is named, not carried (src/shadow/diff.ts): applying the section
    // would leave an empty file where the agent's is
    const large = lines.some((line) => line.startsWith("Large file ")) ? true : undefined;
    return { text, oldPath, newPath, oldMode, newMode, linkTarget, ...(large ? { large } : {}) };
  });
}

const HEADER_KEYS = [
  "new file mode",
  "deleted file mode",
  "old mode",
  "new mode",
  "index",
  "rename from",
  "rename to",
  "copy from",
  "copy to",
];

function splitHeader(line: string): [string | undefined, string] {
  for (const key of HEADER_KEYS) if (line.startsWith(`${key} `)) return [key, line.slice(key.length + 1)];
  return [undefined, ""];
}

// ---------------------------------------------------------------------------------------------------
// The rules

/** A name as case-insensitive and Windows/macOS file systems see it: `.GIT`, `.git.`, `.g\u200cit`. */
function folded(name: string): string {
  return name
    .normalize("NFC")
    .replace(/[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g, "")
    .replace(/[. ]+$/, "")
    .toLowerCase();
}

const IGNORE_NAMES = new Set([".gitignore", ".umbraignore", ".cursorignore"]);

/** Why a path's own name makes it protected (any depth), or undefined. */
function protectedName(path: string): string | undefined {
  const parts = path.split("/").map(folded);
  if (parts.some((part) => part === ".git" || part === "git~1"))
    return "git metadata (.git) is never written by an accept";
  if (parts.some((part) => part === ".vscode" || part === ".idea")) return "editor settings are protected";
  if (parts.some((part) => part === ".umbra")) return "umbra's settings are protected";
  const name = parts[parts.length - 1] ?? "";
  if (name.endsWith(".code-workspace")) return "editor settings are protected";
  if (IGNORE_NAMES.has(name)) return "ignore files are protected";
  if (name === ".gitmodules") return "submodule definitions (.gitmodules) are protected";
  return undefined;
}

/** Whether `path` is a plain relative path: no empty, `.` or `..` component, no NUL, not absolute. */
function plainPath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.includes("\0")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

export interface AcceptContext {
  root: string;
  /** Workspace-relative paths the sandbox keeps read-only, each with a reason. */
  protectedPaths: readonly { path: string; why: string }[];
  /** Workspace-relative hidden paths (existing). */
  hiddenPaths: readonly string[];
  /** Whether a path (new or not) matches the .umbraignore / .cursorignore rules. */
  isHidden(path: string): Promise<boolean>;
  /** Paths git can restore (in the index); undefined when the folder is no repository. */
  tracked: ReadonlySet<string> | undefined;
}

/** Why `path` may never be written whatever the folder holds (its name, protection, hiding), or undefined. */
async function pathRefusal(path: string, ctx: AcceptContext): Promise<string | undefined> {
  if (!plainPath(path)) return "not a plain path inside the folder";
  const name = protectedName(path);
  if (name) return name;
  const guarded = ctx.protectedPaths.find((entry) => isAtOrBelow(path, entry.path));
  if (guarded) return guarded.why;
  if (ctx.hiddenPaths.some((hidden) => isAtOrBelow(path, hidden)) || (await ctx.isHidden(path)))
    return "hidden by an ignore file (.umbraignore / .cursorignore): the agent could not see it";
  return undefined;
}

/** The first existing entry on the way to `path` (its folders) that is a link or no folder. */
async function brokenWay(path: string, root: string): Promise<{ dir: string; link: boolean } | undefined> {
  const parts = path.split("/");
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const info = await lstat(join(root, dir)).catch(() => undefined);
    if (!info) return undefined;
    if (info.isSymbolicLink() || !info.isDirectory()) return { dir, link: info.isSymbolicLink() };
  }
  return undefined;
}

/** Why writing (creating or changing) `path` is refused, or undefined. */
async function writeRefusal(path: string, ctx: AcceptContext): Promise<string | undefined> {
  const why = await pathRefusal(path, ctx);
  if (why) return why;
  const way = await brokenWay(path, ctx.root);
  if (way?.link) return `${way.dir} is a symbolic link in your folder`;
  if (way) return `would replace your file ${way.dir} by a folder`;
  const info = await lstat(join(ctx.root, path)).catch(() => undefined);
  if (info?.isDirectory()) return "would replace your folder (and everything in it) by a file";
  return undefined;
}

/** Why removing `path` from the user's folder is refused, or undefined. */
function removeRefusal(path: string, ctx: AcceptContext): string | undefined {
  if (ctx.tracked === undefined)
    return "umbra deletes only files git can restore, and this folder is not a git repository";
  if (!ctx.tracked.has(path))
    return "umbra deletes only files git can restore, and this file is not committed";
  return undefined;
}

/** Why a link to `target` placed at `path` is refused, or undefined. */
async function linkRefusal(path: string, target: string, ctx: AcceptContext): Promise<string | undefined> {
  if (target === "" || target.includes("\n") || target.includes("\0")) return "not a valid link target";
  const outside = `a symbolic link to ${target}, outside the folder`;
  if (target.startsWith("/")) return outside;
  // `name/..` climbs from wherever `name` leads, and `name` may be a link (of the user's, of this diff,
  // or made later): only leading `..` components climb folders known to be real (the link's own).
  const parts = target.split("/");
  const firstName = parts.findIndex((part) => part !== "..");
  if (firstName >= 0 && parts.slice(firstName).includes(".."))
    return `a symbolic link to ${target}: a \`..\` after a name may lead anywhere through a link`;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === ".." || resolved.startsWith("../")) return outside;
  if (resolved === ".") return undefined;
  const why = await pathRefusal(resolved, ctx);
  if (why) return `a symbolic link to ${resolved}: ${why}`;
  // Through a link of the user's folder (the target itself or a folder on the way), it may lie anywhere.
  if ((await brokenWay(`${resolved}/x`, ctx.root))?.link) return `${outside} (through a link of yours)`;
  return undefined;
}

/** The refusals of one section (empty: it may be applied). */
export async function judgeSection(section: DiffSection, ctx: AcceptContext): Promise<Refusal[]> {
  const { oldPath, newPath, oldMode, newMode } = section;
  const refusals: Refusal[] = [];
  const refuse = (path: string, why: string | undefined) => {
    if (why) refusals.push({ path, why });
  };
  if (section.large)
    refuse(
      newPath ?? oldPath ?? "?",
      "the file is over the diff's size limit, so the diff does not carry it",
    );
  if (newPath !== undefined) {
    refuse(newPath, await writeRefusal(newPath, ctx));
    if (newMode === "160000") refuse(newPath, "a gitlink (nested repository) is never created by an accept");
    else if (newMode !== undefined && !["100644", "100755", "120000"].includes(newMode))
      refuse(newPath, `unknown file mode ${newMode}`);
    if (newMode === "100755" && oldPath !== undefined && oldMode !== "100755")
      refuse(newPath, "would make an existing file executable");
    if (section.linkTarget !== undefined)
      refuse(newPath, await linkRefusal(newPath, section.linkTarget, ctx));
  }
  if (oldPath !== undefined && oldPath !== newPath) {
    refuse(oldPath, await writeRefusal(oldPath, ctx));
    refuse(oldPath, removeRefusal(oldPath, ctx));
  }
  if (oldPath !== undefined && newPath !== undefined && oldPath === newPath && oldMode !== newMode) {
    if (oldMode === "120000" || newMode === "120000")
      refuse(newPath, "would turn a file into a symbolic link or back");
  }
  // Only the first reason per path: one line each for the user.
  return refusals.filter((r, i) => refusals.findIndex((o) => o.path === r.path) === i);
}

// ---------------------------------------------------------------------------------------------------
// The context, read from the user's folder

/** The paths among `paths` that the repository's index holds; undefined outside a repository. */
export function trackedPaths(root: string, paths: readonly string[]): Promise<Set<string> | undefined> {
  return new Promise((done) => {
    if (paths.length === 0) return done(new Set());
    execFile(
      "git",
      ["-c", "core.fsmonitor=false", "--literal-pathspecs", "ls-files", "-z", "--", ...paths],
      { cwd: root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } },
      (error, stdout) => done(error ? undefined : new Set(stdout.split("\0").filter(Boolean))),
    );
  });
}
