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

/** The matches of ripgrep's --json output (a cut last line is left out). */
export function parseRipgrep(stdout: string): GrepMatch[] {
  const matches: GrepMatch[] = [];
  for (const line of stdout.split("\n")) {
    if (!line) continue;
    let event: {
      type: string;
      data: { path?: { text?: string }; line_number?: number; lines?: { text?: string } };
    };
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    if (event.type !== "match") continue;
    matches.push({
      path: (event.data.path?.text ?? "").replace(/^\.\//, ""),
      line: event.data.line_number ?? 0,
      text: (event.data.lines?.text ?? "").replace(/\r?\n$/, ""),
    });
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
  const gitArgs = ["grep", "-n", "-I", "--untracked", options.fixed ? "-F" : "-E"];
  if (options.ignoreCase) gitArgs.push("-i");
  const git = await run(
    "git",
    [...gitArgs, "-e", pattern, ...(options.below ? ["--", options.below] : [])],
    root,
  );
  if (git.code !== 0 && git.code !== 1)
    throw new Error(`neither ripgrep nor git grep could search ${root}: ${git.stderr.trim()}`);
  return git.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      // `.` stops at a carriage return or line separator, where the pattern cannot match: it only went
      // on trying after every `:N:` of the line (quadratic)
      const match = /[\r\u2028\u2029]/.test(line) ? null : /^(.*?):(\d+):(.*)$/.exec(line);
      return { path: match?.[1] ?? "", line: Number(match?.[2] ?? 0), text: match?.[3] ?? "" };
    });
}
