import { execFile } from "node:child_process";
import { lstat, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Refusal } from "../accept/rules.js";
import { screenDiff } from "../accept/screen.js";
import type { UmbraConfig } from "../config/config.js";
import { type GitRefusal, openSandbox } from "../sandbox/index.js";
import type { ChangeDetail, GitMode } from "../shadow/changes.js";
import { formatDiff } from "../shadow/diff.js";

export type { Refusal } from "../accept/rules.js";

/** A file the agent changed: the user's content when the diff was made (base) and the agent's (ours). */
export interface ChangedFile {
  path: string;
  kind: "added" | "modified" | "deleted";
  /** Text of the user's file when the diff was made; undefined when absent or not text. */
  base?: string | undefined;
  /** Text of the branch's file; undefined when deleted or not text. */
  ours?: string | undefined;
}

export interface ApplyResult {
  applied: boolean;
  /** How it was applied: `git apply`, `git apply --3way`, `3-way merge`, or `none`. */
  method: string;
  conflicts: string[];
  message: string;
  /** Changes of the diff that were not applied, and why (see accept.ts); the rest was applied. */
  refused: Refusal[];
}

export interface ApplyOptions {
  /** The effective configuration of the folder (default: loaded for it). */
  config?: UmbraConfig;
  env?: NodeJS.ProcessEnv;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function git(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    // No core.fsmonitor: a folder's git must not start programs while umbra applies a diff.
    const argv = ["-c", "core.fsmonitor=false", ...args];
    execFile("git", argv, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The folder's path inside its git repository (`sub/dir/`), "" at the top, undefined outside any. */
async function repoPrefix(root: string): Promise<string | undefined> {
  const result = await git(["rev-parse", "--show-prefix"], root);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** The user's file as text (a link or anything but a regular file reads as absent). */
async function readCurrent(root: string, path: string): Promise<{ text: string; mode: GitMode } | undefined> {
  try {
    const info = await lstat(join(root, path));
    if (!info.isFile()) return undefined;
    return { text: await readFile(join(root, path), "utf8"), mode: info.mode & 0o111 ? "100755" : "100644" };
  } catch {
    return undefined;
  }
}

type Merge =
  | { path: string; text: string | undefined; current: { text: string; mode: GitMode } | undefined }
  | { path: string; conflict: string };

/** A 3-way merge of one file (the user's current content, the base the agent saw, the agent's), in memory. */
async function mergeFile(root: string, file: ChangedFile, scratch: string, n: number): Promise<Merge> {
  const found = await readCurrent(root, file.path);
  const current = found?.text;
  if (file.kind !== "deleted" && file.ours === undefined)
    return { path: file.path, conflict: "not a text file" };
  if (current === file.base || current === file.ours)
    return { path: file.path, text: file.ours, current: found };
  if (file.kind === "deleted") return { path: file.path, conflict: "you changed a file the agent deleted" };
  if (file.kind === "added")
    return { path: file.path, conflict: "you created a file the agent also created" };
  if (current === undefined) return { path: file.path, conflict: "you deleted a file the agent changed" };
  if (file.base === undefined || file.ours === undefined)
    return { path: file.path, conflict: "not a text file" };
  const [mine, base, theirs] = ["current", "base", "agent"].map((name) => join(scratch, `${n}.${name}`));
  await writeFile(mine as string, current);
  await writeFile(base as string, file.base);
  await writeFile(theirs as string, file.ours);
  const merged = await git(
    [
      "merge-file",
      "-p",
      "-L",
      "yours",
      "-L",
      "base",
      "-L",
      "agent",
      mine as string,
      base as string,
      theirs as string,
    ],
    scratch,
  );
  if (merged.code === 0) return { path: file.path, text: merged.stdout, current: found };
  if (merged.code > 0 && merged.code < 128)
    return { path: file.path, conflict: `${merged.code} conflicting change(s)` };
  return { path: file.path, conflict: `git merge-file failed: ${merged.stderr.trim()}` };
}

/** The paths `git apply` would touch for `patchFile` (its own reading of the patch); undefined if unreadable. */
async function patchPaths(patchFile: string, cwd: string): Promise<Set<string> | undefined> {
  const run = await git(["apply", "--numstat", "-z", patchFile], cwd);
  if (run.code !== 0) return undefined;
  const paths = new Set<string>();
  const tokens = run.stdout.split("\0");
  for (let i = 0; i < tokens.length; i++) {
    const match = /^(?:\d+|-)\t(?:\d+|-)\t([\s\S]*)$/.exec(tokens[i] as string);
    if (!match) continue;
    if (match[1]) paths.add(match[1]);
    else {
      paths.add(tokens[i + 1] ?? "");
      paths.add(tokens[i + 2] ?? "");
      i += 2;
    }
  }
  return paths;
}

/** A patch that turns the user's current files into the merged texts (text files only). */
function mergedPatch(merges: readonly Merge[]): Promise<string> {
  const changes: ChangeDetail[] = [];
  for (const merge of merges) {
    if ("conflict" in merge || merge.text === merge.current?.text) continue;
    const { path, text, current } = merge;
    const mode = current?.mode ?? "100644";
    const side = (content: string) => ({ mode, load: async () => Buffer.from(content) });
    changes.push({
      path,
      kind: current === undefined ? "added" : text === undefined ? "deleted" : "modified",
      ...(current ? { old: side(current.text) } : {}),
      ...(text !== undefined ? { new: side(text) } : {}),
    });
  }
  return formatDiff(changes, async () => undefined, { includeIgnored: true });
}

function refusedNote(refused: readonly Refusal[]): string {
  return refused.length ? `; ${refused.length} change(s) refused (see the list)` : "";
}

/**
 * Applies the agent's diff to the user's folder. First the accept rules (accept.ts) drop every change
 * that may not be written — protected or hidden paths, links out of the folder, gitlinks, an existing
 * file made executable, a folder replaced, a file git cannot restore deleted — and list it in
 * `refused`; the rest applies (git's own reading of the remaining patch must name no other path, else
 * nothing is applied). Then `git apply --check` and `git apply`. When the check fails because the user
 * changed the same files since, each file is merged three ways (the user's current content, the content
 * the diff was made against, the agent's) first, in memory: if any file conflicts nothing is written and
 * the conflicts are reported; otherwise the result is written (with `git apply --3way` when the folder is
 * in a git repository that can do it, else as a patch of the merged texts, also through `git apply`,
 * which never writes through a symbolic link).
 */
export async function applyDiff(
  root: string,
  diff: string,
  files: readonly ChangedFile[],
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const none = (message: string, extra: Partial<ApplyResult> = {}): ApplyResult => ({
    applied: false,
    method: "none",
    conflicts: [],
    message,
    refused: [],
    ...extra,
  });
  if (diff.trim() === "") return none("nothing to apply");
  const { kept, refused } = await screenDiff(root, diff, options);
  if (kept.length === 0)
    return none(`nothing applied: every change of the diff was refused${refusedNote(refused)}`, { refused });
  const keptPaths = new Set(kept.flatMap((s) => [s.oldPath, s.newPath].filter((p) => p !== undefined)));
  const keptFiles = files.filter((file) => keptPaths.has(file.path));
  const scratch = await mkdtemp(join(tmpdir(), "umbra-apply-"));
  try {
    const patchFile = join(scratch, "agent.diff");
    await writeFile(patchFile, kept.map((section) => section.text).join(""));
    const seen = await patchPaths(patchFile, scratch);
    if (seen && [...seen].some((path) => !keptPaths.has(path)))
      return none("not applied: the diff holds changes umbra could not check; nothing was changed", {
        refused,
      });
    const prefix = await repoPrefix(root);
    const directory = prefix ? [`--directory=${prefix.replace(/\/$/, "")}`] : [];
    const check = await git(["apply", "--check", ...directory, patchFile], root);
    if (check.code === 0) {
      const applied = await git(["apply", ...directory, patchFile], root);
      if (applied.code === 0)
        return {
          applied: true,
          method: "git apply",
          conflicts: [],
          message: `applied ${kept.length} file(s) with git apply${refusedNote(refused)}`,
          refused,
        };
      return none(`git apply failed: ${applied.stderr.trim()}`, { refused });
    }
    const merges: Merge[] = [];
    for (const [n, file] of keptFiles.entries()) merges.push(await mergeFile(root, file, scratch, n));
    const conflicts = merges.flatMap((m) => ("conflict" in m ? [`${m.path}: ${m.conflict}`] : []));
    if (conflicts.length > 0 || merges.length === 0) {
      const reason = conflicts.length
        ? `the diff conflicts with changes in your folder (${conflicts.join("; ")})`
        : `git apply cannot apply it (${check.stderr.trim()})`;
      return none(`not applied: ${reason}; nothing was changed`, { conflicts, refused });
    }
    if (prefix !== undefined) {
      const threeWay = await git(["apply", "--3way", ...directory, patchFile], root);
      if (threeWay.code === 0)
        return {
          applied: true,
          method: "git apply --3way",
          conflicts: [],
          message: `applied with git apply --3way${refusedNote(refused)}`,
          refused,
        };
    }
    const mergedFile = join(scratch, "merged.diff");
    await writeFile(mergedFile, await mergedPatch(merges));
    const written = await git(["apply", ...directory, mergedFile], root);
    if (written.code !== 0) return none(`git apply failed: ${written.stderr.trim()}`, { refused });
    return {
      applied: true,
      method: "3-way merge",
      conflicts: [],
      message: `applied ${merges.length} file(s) with a 3-way merge (your folder had changed since the agent started)${refusedNote(refused)}`,
      refused,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export interface TestRun {
  command: string;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  notes: string[];
  /** Git metadata the command planted in the folder, moved out of it (see sandbox/git-guard.ts). */
  refused: GitRefusal[];
}

/** Runs the test command sandboxed in the user's folder (after an apply). */
export async function runTests(
  root: string,
  command: string,
  config: UmbraConfig,
  options: {
    env?: NodeJS.ProcessEnv;
    onOutput?: (chunk: string) => void;
    signal?: AbortSignal;
  } = {},
): Promise<TestRun> {
  const sandbox = await openSandbox({
    workspace: root,
    config,
    flags: { mode: "workspace-write", network: false },
    ...(options.env ? { env: options.env } : {}),
  });
  const result = await sandbox.run("sh", ["-c", command], {
    cwd: root,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onOutput ? { onStdout: options.onOutput, onStderr: options.onOutput } : {}),
  });
  const check = result.git;
  return {
    command,
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    output: `${result.stdout}${result.stderr}`,
    notes: [...result.notes.map((note) => note.message), ...(check?.warnings ?? [])],
    refused: check?.refused ?? [],
  };
}
