import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { z } from "zod";

const run = promisify(execFile);

/** Where a task's starting repository comes from. */
export type TaskSource =
  | { kind: "dir"; dir: string; exclude?: string[] }
  | { kind: "git"; repo: string; commit: string; subdir?: string };

/** One task of an evaluation, whatever format it was read from. Paths are relative to the repository root. */
export interface EvalTask {
  id: string;
  /** Groups tasks in the reports (a language, a kind of change). */
  category: string;
  instruction: string;
  source: TaskSource;
  /** Files added to the starting repository (e.g. a test-runner shim). */
  extraFiles: Record<string, string>;
  /** Tests the agent may see and run: their files are restored before grading. */
  visible: { command: string; files: string[] };
  /** Tests used only for grading: written over the repository after the agent is done, then run. */
  hidden: { command: string; files: Record<string, string> };
  /** A reference solution: path → content (null: delete). */
  solution?: Record<string, string | null>;
  budget: { maxSteps: number; timeoutMs: number };
}

/** A task set or task that cannot be read (exit status 2). */
export class TaskFormatError extends Error {
  override name = "UsageError";
}

const taskFileSchema = z.object({
  id: z.string().min(1).optional(),
  category: z.string().min(1).optional(),
  instruction: z.string().min(1).optional(),
  repo: z
    .object({ git: z.string().min(1), commit: z.string().min(4), subdir: z.string().optional() })
    .optional(),
  visible: z.object({ command: z.string().min(1), files: z.array(z.string().min(1)).default([]) }),
  hidden: z.object({ command: z.string().min(1) }),
  maxSteps: z.number().int().positive().optional(),
  timeoutSeconds: z.number().positive().optional(),
});

export const DEFAULT_BUDGET = { maxSteps: 30, timeoutMs: 10 * 60_000 };

/** Every file below `dir` (relative paths, sorted), skipping `.git`. */
export async function listFiles(dir: string, skip: readonly string[] = []): Promise<string[]> {
  const out: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    const entries = await readdir(join(dir, sub), { withFileTypes: true });
    for (const entry of entries) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.name === ".git" || skip.some((s) => rel === s || rel.startsWith(`${s}/`))) continue;
      if (entry.isDirectory()) await walk(rel);
      else if (entry.isFile()) out.push(rel);
    }
  };
  await walk("");
  return out.sort();
}

async function readTree(dir: string): Promise<Record<string, string>> {
  // no prototype: a file may be named `__proto__`
  const files: Record<string, string> = Object.create(null);
  if (!existsSync(dir)) return files;
  for (const rel of await listFiles(dir)) files[rel] = await readFile(join(dir, rel), "utf8");
  return files;
}

/** Reads one task in the umbra format (a folder with task.json; see docs in the module README). */
export async function loadUmbraTask(dir: string, id?: string): Promise<EvalTask> {
  const file = join(dir, "task.json");
  let parsed: z.infer<typeof taskFileSchema>;
  try {
    parsed = taskFileSchema.parse(JSON.parse(await readFile(file, "utf8")));
  } catch (error) {
    throw new TaskFormatError(`${file}: ${(error as Error).message.split("\n")[0]}`);
  }
  const instruction =
    parsed.instruction ?? (await readFile(join(dir, "instruction.md"), "utf8").catch(() => undefined));
  if (!instruction)
    throw new TaskFormatError(`${dir}: no instruction (task.json "instruction" or instruction.md)`);
  let source: TaskSource;
  if (parsed.repo) {
    source = {
      kind: "git",
      repo: resolve(dir, parsed.repo.git),
      commit: parsed.repo.commit,
      ...(parsed.repo.subdir ? { subdir: parsed.repo.subdir } : {}),
    };
  } else {
    if (!existsSync(join(dir, "repo")))
      throw new TaskFormatError(`${dir}: no repo/ folder and no "repo" in task.json`);
    source = { kind: "dir", dir: join(dir, "repo") };
  }
  const solutionDir = join(dir, "solution");
  return {
    id: parsed.id ?? id ?? dir.split(sep).pop() ?? dir,
    category: parsed.category ?? "default",
    instruction: instruction.trim(),
    source,
    extraFiles: {},
    visible: parsed.visible,
    hidden: { command: parsed.hidden.command, files: await readTree(join(dir, "hidden")) },
    ...(existsSync(solutionDir) ? { solution: await readTree(solutionDir) } : {}),
    budget: {
      maxSteps: parsed.maxSteps ?? DEFAULT_BUDGET.maxSteps,
      timeoutMs: parsed.timeoutSeconds ? parsed.timeoutSeconds * 1000 : DEFAULT_BUDGET.timeoutMs,
    },
  };
}

/** Copies a task's starting repository (plus its extra files) into `dest`. */
export async function materializeStart(task: EvalTask, dest: string): Promise<void> {
  await mkdir(dest, { recursive: true });
  const source = task.source;
  if (source.kind === "dir") {
    const exclude = (source.exclude ?? []).map((e) => join(source.dir, e));
    await cp(source.dir, dest, {
      recursive: true,
      filter: (path) => !exclude.some((e) => path === e || path.startsWith(`${e}${sep}`)),
    });
  } else {
    const args = ["--git-dir", gitDirOf(source.repo), "archive", "--format=tar", source.commit];
    if (source.subdir) args.push(source.subdir);
    const tar = join(dest, "..", `${task.id.replace(/[^\w.-]/g, "_")}.tar`);
    await run("git", [...args, "-o", tar]);
    const strip = source.subdir ? source.subdir.split("/").filter(Boolean).length : 0;
    await run("tar", ["-xf", tar, "-C", dest, `--strip-components=${strip}`]);
    await run("rm", ["-f", tar]);
  }
  for (const [path, content] of Object.entries(task.extraFiles)) {
    await mkdir(join(dest, path, ".."), { recursive: true });
    await writeFile(join(dest, path), content);
  }
}

function gitDirOf(repo: string): string {
  return existsSync(join(repo, ".git")) ? join(repo, ".git") : repo;
}

/** A hash of everything that defines a task (the cache key's task part). */
export async function taskHash(task: EvalTask): Promise<string> {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ ...task, source: undefined }));
  const source = task.source;
  if (source.kind === "git") hash.update(`git ${source.commit} ${source.subdir ?? ""}`);
  else {
    for (const rel of await listFiles(source.dir, source.exclude ?? [])) {
      hash.update(`${rel}\0`);
      hash.update(await readFile(join(source.dir, rel)));
    }
  }
  return hash.digest("hex").slice(0, 16);
}

/** Reads a task set: one umbra task folder, a folder of them, or Exercism exercises (see exercism.ts). */
export async function loadTaskSet(path: string): Promise<EvalTask[]> {
  const dir = resolve(path);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new TaskFormatError(`${path} is not a folder`);
  const { findExercises, loadExercise } = await import("./exercism.js");
  if (existsSync(join(dir, "task.json"))) return [await loadUmbraTask(dir)];
  const exercises = await findExercises(dir);
  if (exercises.length > 0) {
    const tasks: EvalTask[] = [];
    for (const exercise of exercises) {
      const task = await loadExercise(exercise, dir);
      if (task) tasks.push(task);
    }
    return tasks;
  }
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "task.json")))
    .map((e) => e.name)
    .sort();
  if (names.length === 0)
    throw new TaskFormatError(`${path} holds no tasks (no task.json, no Exercism .meta/config.json)`);
  return Promise.all(names.map((name) => loadUmbraTask(join(dir, name), name)));
}

export function relativeId(base: string, dir: string): string {
  return relative(base, dir).split(sep).join("/") || dir.split(sep).pop() || dir;
}
