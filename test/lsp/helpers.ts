import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { DocumentSource } from "../../src/lsp/types.js";

/** A branch held in memory: the user's folder plus overrides (path → content, null = deleted). */
export class MemoryBranch implements DocumentSource {
  readonly overrides = new Map<string, string | null>();

  constructor(
    readonly id: string,
    readonly workspaceRoot: string,
    overrides: Record<string, string | null> = {},
  ) {
    for (const [path, text] of Object.entries(overrides)) this.overrides.set(path, text);
  }

  async readText(relPath: string): Promise<string | undefined> {
    const override = this.overrides.get(relPath);
    if (override !== undefined) return override ?? undefined;
    try {
      return await readFile(join(this.workspaceRoot, relPath), "utf8");
    } catch {
      return undefined;
    }
  }

  async changes(): Promise<{ path: string; kind: "added" | "modified" | "deleted" }[]> {
    return [...this.overrides].map(([path, text]) => ({
      path,
      kind: text === null ? "deleted" : existsSync(join(this.workspaceRoot, path)) ? "modified" : "added",
    }));
  }
}

/** Writes `files` (path → content) under `root`. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** Whether a process with this pid is running. */
export function isRunning(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
