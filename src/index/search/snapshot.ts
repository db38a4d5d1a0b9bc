/**
 * What searches derive from the indexed files, once per version of the index: files by path and by name,
 * the path index, the import resolver, each path's role; and resolving a path a query mentions.
 */
import type { ChunkRow, FileRow, LexicalStore } from "../store/lexical.js";
import type { SearchContext } from "./context.js";
import { ImportResolver } from "./imports.js";
import { bareShapes } from "./names.js";
import { PathIndex } from "./paths.js";
import { type FileRole, fileRole } from "./roles.js";

/**
 * What searches derive from one snapshot of the indexed files, built on first use. The lexical store hands
 * out the same array until the index changes, so a long-lived process (watch, agent) builds each once per
 * index version instead of once per search.
 */
export class FileSnapshot {
  readonly byPath: ReadonlyMap<string, FileRow>;
  readonly byName: ReadonlyMap<string, readonly FileRow[]>;
  /** Imports already read, by path and content hash. */
  readonly importsRead = new Map<string, string[]>();
  /** Each file's bare shapes (see bareShapes), read once per snapshot for the files a search asks about. */
  private readonly shapes = new Map<string, ReadonlySet<string>>();
  private paths?: PathIndex;
  private imports?: ImportResolver;
  /** Each path's role, judged once: a search weighs hundreds of candidates by it. */
  private readonly roles = new Map<string, FileRole>();

  constructor(readonly files: readonly FileRow[]) {
    this.byPath = new Map(files.map((file) => [file.path, file]));
    this.byName = filesByName(files);
  }

  /**
   * Takes over what an earlier snapshot derived and still holds here: with the same paths (an edit changes
   * contents, not names), its path index, import resolver and roles; the imports it read of files whose
   * contents are the same.
   */
  inherit(earlier: FileSnapshot): void {
    const same =
      earlier.files.length === this.files.length &&
      earlier.files.every((file, i) => file.path === this.files[i]?.path);
    if (same) {
      this.paths ??= earlier.paths;
      this.imports ??= earlier.imports;
      for (const [path, role] of earlier.roles) this.roles.set(path, role);
    }
    for (const [key, imports] of earlier.importsRead) {
      const path = key.slice(0, key.indexOf("\0"));
      if (key === `${path}\0${this.byPath.get(path)?.hash}`) this.importsRead.set(key, imports);
    }
  }

  /** The bare shapes of each of `paths` (read with one query for those not read before). */
  bareShapes(lexical: LexicalStore, paths: Iterable<string>): ReadonlyMap<string, ReadonlySet<string>> {
    const unread = [...new Set(paths)].filter((path) => !this.shapes.has(path));
    if (unread.length > 0) {
      const byFile = new Map<string, ChunkRow[]>(unread.map((path) => [path, []]));
      for (const row of lexical.chunksOfPaths(unread)) byFile.get(row.path)?.push(row);
      for (const [path, chunks] of byFile) this.shapes.set(path, bareShapes(chunks));
    }
    return this.shapes;
  }

  pathIndex(): PathIndex {
    this.paths ??= new PathIndex(this.files.map((file) => file.path));
    return this.paths;
  }

  role(path: string): FileRole {
    let role = this.roles.get(path);
    if (!role) {
      role = fileRole(path);
      this.roles.set(path, role);
    }
    return role;
  }

  importResolver(): ImportResolver {
    this.imports ??= new ImportResolver(this.files.map((file) => file.path));
    return this.imports;
  }
}

/**
 * Each store's snapshot of its files as last read: renewed when the store hands out another file list,
 * and kept for the index that replaces the store (warmSearch).
 */
const snapshots = new WeakMap<LexicalStore, FileSnapshot>();

export function snapshotOf(lexical: LexicalStore): FileSnapshot {
  const files = lexical.files();
  let snapshot = snapshots.get(lexical);
  if (snapshot?.files !== files) {
    snapshot = new FileSnapshot(files);
    snapshots.set(lexical, snapshot);
  }
  return snapshot;
}

/**
 * Makes an index ready to answer at once: reads what every search reads and builds what searches derive
 * from its files, taking over from `earlier` (the index it replaces) what is still the same. A long-lived
 * process calls it when it opens an index, before the first search would pay for it.
 */
export function warmSearch(context: SearchContext, earlier?: SearchContext): void {
  context.lexical.warm();
  const snapshot = snapshotOf(context.lexical);
  const before = earlier && snapshots.get(earlier.lexical);
  if (before && before !== snapshot) snapshot.inherit(before);
  snapshot.pathIndex();
  snapshot.importResolver();
}

/** Indexed files by base name, for resolving paths a query mentions. */
function filesByName(files: readonly FileRow[]): Map<string, FileRow[]> {
  const byName = new Map<string, FileRow[]>();
  for (const file of files) {
    const name = file.path.slice(file.path.lastIndexOf("/") + 1);
    const list = byName.get(name);
    if (list) list.push(file);
    else byName.set(name, [file]);
  }
  return byName;
}

/**
 * The indexed file a mentioned path refers to: exact, by suffix (either way round), or as a module path
 * (`a/b` → `a/b.py`, `a/b/__init__.py`, …); the shortest match wins.
 */
export function matchPath(
  byName: ReadonlyMap<string, readonly FileRow[]>,
  mentioned: string,
): FileRow | undefined {
  const clean = mentioned.replace(/^\/+/, "");
  const candidates = /\.[A-Za-z0-9]+$/.test(clean)
    ? [clean]
    : [`${clean}.py`, `${clean}/__init__.py`, `${clean}.ts`, `${clean}.js`, `${clean}.go`, `${clean}.rs`];
  let best: FileRow | undefined;
  for (const candidate of candidates) {
    for (const file of byName.get(candidate.slice(candidate.lastIndexOf("/") + 1)) ?? []) {
      const matches =
        file.path === candidate || file.path.endsWith(`/${candidate}`) || candidate.endsWith(`/${file.path}`);
      if (matches && (!best || file.path.length < best.path.length)) best = file;
    }
  }
  return best;
}
