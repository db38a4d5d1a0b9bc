import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FileState, RecordedChange } from "../../src/shadow/recorded.js";

/** A file state holding `content`. */
export function file(content: string | Buffer, mode: "100644" | "100755" = "100644"): FileState {
  const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
  return { kind: "file", mode, size: data.length, load: async () => data };
}

export function link(target: string): FileState {
  return { kind: "link", target };
}

export const ABSENT: FileState = { kind: "absent" };

export function change(path: string, base: RecordedChange["base"], branch: FileState): RecordedChange {
  return { path, base, branch };
}

/** The lines "1".."n", each with a newline. */
export function numbered(n: number): string {
  return Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");
}

/** `text` with line `n` (1-based) replaced by `by`. */
export function replaceLine(text: string, n: number, by: string): string {
  const lines = text.split("\n");
  lines[n - 1] = by;
  return lines.join("\n");
}

export async function text(state: FileState): Promise<string | undefined> {
  return state.kind === "file" ? (await state.load()).toString("utf8") : undefined;
}

/** Every entry below `root` (`.git` left out): path → kind, permission bits and content or target. */
export function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (path === ".git") continue;
      const info = lstatSync(join(root, path));
      if (info.isSymbolicLink()) out[path] = `link ${readlinkSync(join(root, path))}`;
      else if (info.isDirectory()) {
        out[path] = "dir";
        walk(path);
      } else out[path] = `file ${(info.mode & 0o777).toString(8)} ${readFileSync(join(root, path), "utf8")}`;
    }
  };
  walk("");
  return out;
}

/** Writes `files` (path → content) below `root`, creating folders. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}
