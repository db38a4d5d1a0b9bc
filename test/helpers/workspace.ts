import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

/** A fresh temporary folder; remove it with `cleanup`. */
export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `umbra-${prefix}-`));
}

export async function cleanup(...dirs: (string | undefined)[]): Promise<void> {
  for (const dir of dirs) if (dir) await rm(dir, { recursive: true, force: true });
}

/** A copy of the bundled examples/ project in a temporary folder (without eval/, umbra eval's task set). */
export async function copyExamples(): Promise<string> {
  const dir = await tempDir("ws");
  const root = join(dir, "examples");
  await cp(EXAMPLES, root, {
    recursive: true,
    filter: (source) => !source.startsWith(join(EXAMPLES, "eval")),
  });
  return root;
}

/**
 * Every entry below `root` with its content hash and mtime: two equal fingerprints mean the folder is
 * byte-identical, has the same timestamps and gained no files.
 */
export async function fingerprint(root: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const rel = `${prefix}${entry.name}`;
      const info = await stat(path);
      if (entry.isDirectory()) {
        lines.push(`d ${rel}`);
        await walk(path, `${rel}/`);
      } else {
        const hash = createHash("sha256")
          .update(await readFile(path))
          .digest("hex");
        lines.push(`f ${rel} ${hash} ${info.mtimeMs}`);
      }
    }
  };
  await walk(root, "");
  return lines.join("\n");
}

/**
 * A git repository `repo` holding `files` (path → text), committed, in a new temporary parent named by
 * `prefix` (the parent is what to clean up).
 */
export async function committedRepository(prefix: string, files: Record<string, string>): Promise<string> {
  const root = join(await tempDir(prefix), "repo");
  await mkdir(root);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), content);
  }
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: root });
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "init");
  return root;
}
