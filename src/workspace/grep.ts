import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { umbraIgnoreMatcher } from "./ignore-rules.js";
import { hardLinksToHidden } from "./scan.js";

export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string; missing: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", (error: NodeJS.ErrnoException) =>
      resolve({ code: null, stdout, stderr: error.message, missing: error.code === "ENOENT" }),
    );
    child.on("close", (code) => resolve({ code, stdout, stderr, missing: false }));
  });
}

/**
 * Exact or regex search with ripgrep, falling back to git grep; what .umbraignore and .cursorignore match
 * (at any depth, as they are now) is never a match.
 */
export async function grep(root: string, pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
  return visibleMatches(root, await rawGrep(root, pattern, options));
}

export interface GrepOptions {
  fixed?: boolean;
  ignoreCase?: boolean;
  /** Only below this workspace-relative folder (or this file). */
  below?: string;
}

/** ripgrep's arguments for a search of `root` (run in it) with its umbra ignore files. */
export function ripgrepArgs(root: string, pattern: string, options: GrepOptions = {}): string[] {
  const args = ["--json", "--max-filesize", "1M"];
  for (const file of [".umbraignore", ".cursorignore"]) {
    if (existsSync(join(root, file))) args.push("--ignore-file", file);
  }
  if (options.fixed) args.push("--fixed-strings");
  if (options.ignoreCase) args.push("--ignore-case");
  return [...args, "--", pattern, options.below ? `./${options.below}` : "."];
}

/** ripgrep's `--json` text: UTF-8 as `text`, other bytes as base64 `bytes` (read as UTF-8, lossily). */
interface RipgrepData {
  text?: string;
  bytes?: string;
}

/**
 * The matches of ripgrep's --json output (a cut last line is left out). A line that is not UTF-8 is read
 * lossily; a match in a file whose name is not UTF-8 is left out (no path could name that file again).
 */
export function parseRipgrep(stdout: string): GrepMatch[] {
  const matches: GrepMatch[] = [];
  for (const line of stdout.split("\n")) {
    if (!line) continue;
    let event: { type: string; data: { path?: RipgrepData; line_number?: number; lines?: RipgrepData } };
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    const path = event.data?.path?.text;
    if (event.type !== "match" || path === undefined) continue;
    const lines = event.data.lines;
    const text = lines?.text ?? Buffer.from(lines?.bytes ?? "", "base64").toString("utf8");
    matches.push({
      path: path.replace(/^\.\//, ""),
      line: event.data.line_number ?? 0,
      text: text.replace(/\r?\n$/, ""),
    });
  }
  return matches;
}

/**
 * The matches of `git grep -z -n` output: each is `path NUL line NUL text LF`. The path may hold any byte
 * but NUL (a newline, `:12:`), the text none of NUL and LF (-I leaves binary files out), so the output is
 * read field by field rather than line by line. A carriage return before the LF is dropped, as ripgrep's is.
 */
export function parseGitGrep(stdout: string): GrepMatch[] {
  const matches: GrepMatch[] = [];
  let at = 0;
  while (at < stdout.length) {
    const pathEnd = stdout.indexOf("\0", at);
    const lineEnd = pathEnd < 0 ? -1 : stdout.indexOf("\0", pathEnd + 1);
    if (lineEnd < 0) break;
    let textEnd = stdout.indexOf("\n", lineEnd + 1);
    if (textEnd < 0) textEnd = stdout.length;
    const line = Number(stdout.slice(pathEnd + 1, lineEnd));
    if (Number.isInteger(line) && line > 0)
      matches.push({
        path: stdout.slice(at, pathEnd),
        line,
        text: stdout.slice(lineEnd + 1, stdout[textEnd - 1] === "\r" ? textEnd - 1 : textEnd),
      });
    at = textEnd + 1;
  }
  return matches;
}

/** Drops matches in files the umbra ignore files hide now, and in other names (hard links) of hidden files. */
async function visibleMatches(root: string, found: readonly GrepMatch[]): Promise<GrepMatch[]> {
  const ignored = umbraIgnoreMatcher(root);
  const kept: GrepMatch[] = [];
  for (const match of found) if (!(await ignored(match.path))) kept.push(match);
  const links = await hardLinksToHidden(
    root,
    kept.map((match) => match.path),
  );
  return kept.filter((match) => !links.has(match.path));
}

/** ripgrep (the root's own ignore files given to it), else git grep. */
async function rawGrep(root: string, pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
  const rg = await run("rg", ripgrepArgs(root, pattern, options), root);
  if (!rg.missing) {
    if (rg.code !== 0 && rg.code !== 1) throw new Error(`rg failed: ${rg.stderr.trim().split("\n")[0]}`);
    return parseRipgrep(rg.stdout);
  }
  const gitArgs = ["grep", "-z", "-n", "-I", "--untracked", options.fixed ? "-F" : "-E"];
  if (options.ignoreCase) gitArgs.push("-i");
  const git = await run(
    "git",
    [...gitArgs, "-e", pattern, ...(options.below ? ["--", options.below] : [])],
    root,
  );
  if (git.code !== 0 && git.code !== 1)
    throw new Error(`neither ripgrep nor git grep could search ${root}: ${git.stderr.trim()}`);
  return parseGitGrep(git.stdout);
}
