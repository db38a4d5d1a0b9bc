import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ScanOptions, ScanResult } from "../../src/workspace/index.js";
import { scanWorkspace } from "../../src/workspace/index.js";

const made: string[] = [];

/** Whether git is installed (tests that compare with it, or make repositories, need it). */
export function hasGit(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A fresh temporary folder, removed by cleanupTemp(). */
export function makeTemp(prefix = "umbra-ws-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function cleanupTemp(): void {
  for (const dir of made.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes files (path → content) under root, creating folders; a path ending in "/" makes an empty folder. */
export function writeTree(root: string, tree: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(tree)) {
    if (path.endsWith("/")) {
      mkdirSync(join(root, path), { recursive: true });
      continue;
    }
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Scan with no global excludes file, so the machine's git configuration cannot change results. */
export function scan(root: string, options: ScanOptions = {}): Promise<ScanResult> {
  return scanWorkspace(root, { globalExcludesFile: null, ...options });
}

export function paths(result: ScanResult): string[] {
  return result.files.map((file) => file.path);
}

export function skipOf(result: ScanResult, path: string): { reason: string; detail?: string } | undefined {
  const entry = result.skipped.find((skip) => skip.path === path);
  return entry && { reason: entry.reason, ...(entry.detail !== undefined ? { detail: entry.detail } : {}) };
}

/** Everything observable about a folder tree except access times: names, kinds, sizes, mtimes, content. */
export function fingerprint(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const path = rel ? `${rel}/${name}` : name;
      const info = lstatSync(abs);
      if (info.isDirectory()) {
        out.push(`d ${path} ${info.mtimeMs} ${info.mode}`);
        if (info.mode & 0o500) {
          try {
            walk(abs, path);
          } catch {
            out.push(`unreadable ${path}`);
          }
        }
      } else if (info.isFile()) {
        let hash = "unreadable";
        try {
          hash = createHash("sha256").update(readFileSync(abs)).digest("hex");
        } catch {
          // mode 000 when not root
        }
        out.push(`f ${path} ${info.size} ${info.mtimeMs} ${info.mode} ${hash}`);
      } else {
        out.push(`o ${path} ${info.mtimeMs} ${info.mode}`);
      }
    }
  };
  walk(root, "");
  return out;
}

export const isRoot = process.getuid?.() === 0;
