import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { shownPath } from "../workspace/errors.js";
import { umbraIgnoreMatcher } from "../workspace/ignore-rules.js";
import { hardLinksToHidden } from "../workspace/scan.js";
import { onRunningEngine } from "./engine-use.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

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
export async function grep(
  root: string,
  pattern: string,
  options: { fixed?: boolean; ignoreCase?: boolean } = {},
): Promise<GrepMatch[]> {
  const found = await rawGrep(root, pattern, options);
  const ignored = umbraIgnoreMatcher(root);
  const kept: GrepMatch[] = [];
  for (const match of found) if (!(await ignored(match.path))) kept.push(match);
  // another name (a hard link) of a hidden file is hidden too
  const links = await hardLinksToHidden(
    root,
    kept.map((match) => match.path),
  );
  return kept.filter((match) => !links.has(match.path));
}

/** ripgrep (the root's own ignore files given to it), else git grep. */
async function rawGrep(
  root: string,
  pattern: string,
  options: { fixed?: boolean; ignoreCase?: boolean } = {},
): Promise<GrepMatch[]> {
  const rgArgs = ["--json", "--max-filesize", "1M"];
  for (const file of [".umbraignore", ".cursorignore"]) {
    if (existsSync(join(root, file))) rgArgs.push("--ignore-file", file);
  }
  if (options.fixed) rgArgs.push("--fixed-strings");
  if (options.ignoreCase) rgArgs.push("--ignore-case");
  const rg = await run("rg", [...rgArgs, "--", pattern, "."], root);
  if (!rg.missing) {
    if (rg.code !== 0 && rg.code !== 1) throw new Error(`rg failed: ${rg.stderr.trim().split("\n")[0]}`);
    const matches: GrepMatch[] = [];
    for (const line of rg.stdout.split("\n")) {
      if (!line) continue;
      const event = JSON.parse(line) as {
        type: string;
        data: { path?: { text?: string }; line_number?: number; lines?: { text?: string } };
      };
      if (event.type !== "match") continue;
      matches.push({
        path: (event.data.path?.text ?? "").replace(/^\.\//, ""),
        line: event.data.line_number ?? 0,
        text: (event.data.lines?.text ?? "").replace(/\r?\n$/, ""),
      });
    }
    return matches;
  }
  const gitArgs = ["grep", "-n", "-I", "--untracked", options.fixed ? "-F" : "-E"];
  if (options.ignoreCase) gitArgs.push("-i");
  const git = await run("git", [...gitArgs, "-e", pattern], root);
  if (git.code !== 0 && git.code !== 1)
    throw new Error(`neither ripgrep nor git grep could search ${root}: ${git.stderr.trim()}`);
  return git.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const match = /^(.*?):(\d+):(.*)$/.exec(line);
      return { path: match?.[1] ?? "", line: Number(match?.[2] ?? 0), text: match?.[3] ?? "" };
    });
}

/** The most matches the engine returns in one answer. */
const ALL_MATCHES = 1_000_000;

export function registerGrep(program: Command): void {
  program
    .command("grep")
    .description("exact or regex search through ripgrep (git grep when ripgrep is missing)")
    .argument("<pattern>", "regular expression (or a fixed string with -F)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("-F, --fixed", "treat the pattern as a fixed string")
    .option("-i, --ignore-case", "case-insensitive")
    .option("--json", "print a JSON array of {path, line, text}")
    .action(
      async (
        pattern: string,
        options: { root?: string; fixed?: boolean; ignoreCase?: boolean; json?: boolean },
      ) => {
        const root = await commandRoot(options.root);
        const served = await onRunningEngine("grep", "grep", {
          root,
          pattern,
          fixed: options.fixed === true,
          ignoreCase: options.ignoreCase === true,
          limit: ALL_MATCHES,
        });
        // the engine stops at its largest limit; past it this process greps everything itself
        const matches = served && !served.truncated ? served.matches : await grep(root, pattern, options);
        if (options.json) return printJson(matches);
        for (const m of matches) process.stdout.write(`${shownPath(m.path)}:${m.line}:${m.text}\n`);
        if (matches.length === 0) process.exitCode = 1;
      },
    );
}
