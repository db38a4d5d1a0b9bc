/**
 * Following the imports of the best-ranked files: a bug report names the entry point, and the code to
 * change is often one step down. Reads the files from disk, once per file version.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChunkRow, FileRow } from "../store/lexical.js";
import type { SearchContext } from "./context.js";
import { byScore } from "./fusion.js";
import type { FileSnapshot } from "./snapshot.js";

/** How many of the best-ranked files have their imports followed. */
const IMPORTERS_FOLLOWED = 3;

/** The indexed files that `file` imports, read from disk once per file version (a search reads the same few files again). */
async function importsOf(
  context: SearchContext,
  snapshot: FileSnapshot,
  file: FileRow,
  language: string,
): Promise<string[]> {
  const key = `${file.path}\0${file.hash}`;
  const known = snapshot.importsRead.get(key);
  if (known) return known;
  const text = await readFile(join(context.root, file.path), "utf8").catch(() => undefined);
  const imports = text === undefined ? [] : snapshot.importResolver().resolve(file.path, text, language);
  snapshot.importsRead.set(key, imports);
  return imports;
}

/**
 * `ranked` with the best chunk of each file that one of the best-ranked files imports, when it is already
 * a candidate, raised by `boost` × the importer's score.
 */
export async function boostImported(
  context: SearchContext,
  ranked: readonly { id: number; score: number }[],
  rows: ReadonlyMap<number, ChunkRow>,
  snapshot: FileSnapshot,
  boost: number,
): Promise<readonly { id: number; score: number }[]> {
  if (boost <= 0) return ranked;
  const bestOfFile = new Map<string, { id: number; score: number }>();
  for (const hit of ranked) {
    const path = rows.get(hit.id)?.path;
    if (path !== undefined && !bestOfFile.has(path)) bestOfFile.set(path, hit);
  }
  const importers = [...bestOfFile].slice(0, IMPORTERS_FOLLOWED);
  const gain = new Map<number, number>();
  for (const [path, best] of importers) {
    const file = snapshot.byPath.get(path);
    if (!file) continue;
    for (const imported of await importsOf(context, snapshot, file, rows.get(best.id)?.language ?? "")) {
      const target = bestOfFile.get(imported);
      if (target) gain.set(target.id, Math.max(gain.get(target.id) ?? 0, boost * best.score));
    }
  }
  if (gain.size === 0) return ranked;
  return ranked.map(({ id, score }) => ({ id, score: score + (gain.get(id) ?? 0) })).sort(byScore);
}
