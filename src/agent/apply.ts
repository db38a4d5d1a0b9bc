import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { UmbraConfig } from "../config/config.js";
import { explain, loadAdminPolicy, resolvePolicy, runSandboxed } from "../sandbox/index.js";

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
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function git(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
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

async function readCurrent(root: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(join(root, path), "utf8");
  } catch {
    return undefined;
  }
}

type Merge = { path: string; text: string | undefined } | { path: string; conflict: string };

/** A 3-way merge of one file (the user's current content, the base the agent saw, the agent's), in memory. */
async function mergeFile(root: string, file: ChangedFile, scratch: string, n: number): Promise<Merge> {
  const current = await readCurrent(root, file.path);
  if (current === file.base) return { path: file.path, text: file.ours };
  if (current === file.ours) return { path: file.path, text: file.ours };
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
  if (merged.code === 0) return { path: file.path, text: merged.stdout };
  if (merged.code > 0 && merged.code < 128)
    return { path: file.path, conflict: `${merged.code} conflicting change(s)` };
  return { path: file.path, conflict: `git merge-file failed: ${merged.stderr.trim()}` };
}

/**
 * Applies the agent's diff to the user's folder: `git apply --check`, then `git apply`. When the check
 * fails because the user changed the same files since, each file is merged three ways (the user's
 * current content, the content the diff was made against, the agent's) first, in memory: if any file
 * conflicts nothing is written and the conflicts are reported; otherwise the result is written (with
 * `git apply --3way` when the folder is in a git repository that can do it, else the merged texts).
 */
export async function applyDiff(
  root: string,
  diff: string,
  files: readonly ChangedFile[],
): Promise<ApplyResult> {
  if (diff.trim() === "")
    return { applied: false, method: "none", conflicts: [], message: "nothing to apply" };
  const scratch = await mkdtemp(join(tmpdir(), "umbra-apply-"));
  try {
    const patchFile = join(scratch, "agent.diff");
    await writeFile(patchFile, diff);
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
          message: `applied ${files.length} file(s) with git apply`,
        };
      return {
        applied: false,
        method: "none",
        conflicts: [],
        message: `git apply failed: ${applied.stderr.trim()}`,
      };
    }
    const merges: Merge[] = [];
    for (const [n, file] of files.entries()) merges.push(await mergeFile(root, file, scratch, n));
    const conflicts = merges.flatMap((m) => ("conflict" in m ? [`${m.path}: ${m.conflict}`] : []));
    if (conflicts.length > 0) {
      return {
        applied: false,
        method: "none",
        conflicts,
        message: `not applied: the diff conflicts with changes in your folder (${conflicts.join("; ")}); nothing was changed`,
      };
    }
    if (prefix !== undefined) {
      const threeWay = await git(["apply", "--3way", ...directory, patchFile], root);
      if (threeWay.code === 0)
        return {
          applied: true,
          method: "git apply --3way",
          conflicts: [],
          message: "applied with git apply --3way",
        };
    }
    for (const merge of merges) {
      if ("conflict" in merge) continue;
      const target = join(root, merge.path);
      if (merge.text === undefined) await unlink(target).catch(() => undefined);
      else {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, merge.text);
      }
    }
    return {
      applied: true,
      method: "3-way merge",
      conflicts: [],
      message: `applied ${merges.length} file(s) with a 3-way merge (your folder had changed since the agent started)`,
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
}

/** Runs the test command sandboxed in the user's folder (after an apply). */
export async function runTests(
  root: string,
  command: string,
  config: UmbraConfig,
  options: {
    env?: NodeJS.ProcessEnv;
    onOutput?: (chunk: string) => void;
    unsandboxed?: boolean;
    signal?: AbortSignal;
  } = {},
): Promise<TestRun> {
  const { policy } = await resolvePolicy({
    workspace: root,
    config: config.sandbox,
    flags: { mode: "workspace-write", network: false },
    admin: await loadAdminPolicy(),
    ...(options.env ? { env: options.env } : {}),
    walk: config.index.excludeDirs ? { excludeDirs: config.index.excludeDirs } : {},
  });
  const result = await runSandboxed(policy, "sh", ["-c", command], {
    cwd: root,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.unsandboxed ? { unsandboxed: true } : {}),
    ...(options.onOutput ? { onStdout: options.onOutput, onStderr: options.onOutput } : {}),
  });
  return {
    command,
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    output: `${result.stdout}${result.stderr}`,
    notes: explain(result, policy, { cwd: root }).map((note) => note.message),
  };
}
