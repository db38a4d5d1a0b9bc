/**
 * Where eval runs are kept for the engine (the web page's eval view): every `umbra eval` run also copies
 * its results.json and timings.json into `<data>/workspaces/<id>/evals/<run>/` of the workspace it ran
 * in (0600 files, 0700 folders), whatever --out said. The reports are made from these copies.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { workspaceDir } from "../config/paths.js";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import type { EvalResults, TaskTiming } from "./runner.js";

export interface StoredEvalRun {
  id: string;
  createdAt: string;
  results: EvalResults;
  timings: TaskTiming[];
}

/** No stored run of that id. */
export class EvalRunNotFoundError extends Error {
  override name = "EvalRunNotFoundError";
}

export function evalRunsDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(workspaceDir(root, env), "evals");
}

/** A run id: sortable by time, then a counter-free random tail. */
function runId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "Z").replace("T", "-");
  return `${stamp}-${Math.random().toString(16).slice(2, 8)}`;
}

/** Stores a run of the workspace at `root` (its real path); returns the run's id. */
export async function saveEvalRun(
  root: string,
  results: EvalResults,
  timings: readonly TaskTiming[],
  env: NodeJS.ProcessEnv = process.env,
  now = new Date(),
): Promise<string> {
  const id = runId(now);
  const dir = join(evalRunsDir(root, env), id);
  await privateDir(dir);
  await writeFile(join(dir, "results.json"), JSON.stringify(results), { mode: PRIVATE_FILE });
  await writeFile(join(dir, "timings.json"), JSON.stringify(timings), { mode: PRIVATE_FILE });
  await writeFile(join(dir, "run.json"), JSON.stringify({ id, createdAt: now.toISOString() }), {
    mode: PRIVATE_FILE,
  });
  return id;
}

/** Run `id` of the workspace; an EvalRunNotFoundError when there is none (or it does not read). */
export async function loadEvalRun(
  root: string,
  id: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoredEvalRun> {
  if (!/^[\w.-]+$/.test(id) || id.startsWith("."))
    throw new EvalRunNotFoundError(`no eval run ${JSON.stringify(id)}`);
  const dir = join(evalRunsDir(root, env), id);
  try {
    const [results, timings, run] = await Promise.all(
      ["results.json", "timings.json", "run.json"].map(async (name) =>
        JSON.parse(await readFile(join(dir, name), "utf8")),
      ),
    );
    if ((results as EvalResults).version !== 1 || !Array.isArray((results as EvalResults).tasks))
      throw new Error("not an eval run");
    return {
      id,
      createdAt: String((run as { createdAt?: unknown }).createdAt ?? ""),
      results: results as EvalResults,
      timings: Array.isArray(timings) ? (timings as TaskTiming[]) : [],
    };
  } catch {
    throw new EvalRunNotFoundError(`no eval run ${id} in this workspace (GET .../evals lists them)`);
  }
}

/** The workspace's stored runs, newest first (ones that do not read are left out). */
export async function listEvalRuns(
  root: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoredEvalRun[]> {
  const names = await readdir(evalRunsDir(root, env)).catch(() => [] as string[]);
  const runs: StoredEvalRun[] = [];
  for (const name of names) {
    const run = await loadEvalRun(root, name, env).catch(() => undefined);
    if (run) runs.push(run);
  }
  return runs.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}
