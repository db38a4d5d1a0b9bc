import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { transformWithOxc } from "vite";

/** Transpiles fake-lsp.ts to a plain JavaScript file in `dir` and returns its path (run it with `node`). */
export async function fakeLspScript(dir: string): Promise<string> {
  const source = join(import.meta.dirname, "fake-lsp.ts");
  const { code } = await transformWithOxc(await readFile(source, "utf8"), source);
  const out = join(dir, "fake-lsp.mjs");
  await writeFile(out, code);
  return out;
}
