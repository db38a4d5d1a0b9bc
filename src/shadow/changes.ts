import type { Stats } from "node:fs";
import { chmod, lstat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { FileAccessError } from "../workspace/errors.js";
import {
  type DirEntryInfo,
  lstatIn,
  readdirIn,
  readIn,
  readlinkIn,
  removeIn,
  writeIn,
} from "../workspace/rooted.js";
import { errnoCode } from "./errors.js";
import { opaqueDirs } from "./helper.js";
import type { FileState, RecordedChange } from "./recorded.js";
import { isAtOrBelow, joinRel } from "./relpath.js";
import { FUSE_OPAQUE_MARK, FUSE_WHITEOUT_PREFIX, isWhiteout, type ViewLayers } from "./view.js";

export type ChangeKind = "added" | "modified" | "deleted";

/** A path whose content in the branch differs from the user's folder. */
export interface BranchChange {
  path: string;
  kind: ChangeKind;
}

export type GitMode = "100644" | "100755" | "120000";

/** One side (the user's folder, or the branch) of a changed path. */
export interface Side {
  mode: GitMode;
  load(): Promise<Buffer>;
  /** Host stats, when the side is a file on disk. */
  stats?: Stats;
  /** The size in bytes, when known without stats or loading. */
  size?: number;
  /** The regular file on disk that holds the content, when there is one. */
  file?: string;
}

export interface ChangeDetail extends BranchChange {
  /** The user's folder (absent for added). */
  old?: Side;
  /** The branch (absent for deleted). */
  new?: Side;
}

/** `.git` folders are never part of a branch's changes. */
function isGitPath(rel: string): boolean {
  return rel === ".git" || rel.startsWith(".git/") || rel.includes("/.git/") || rel.endsWith("/.git");
}

/**
 * A side for the file or symlink `rel` of the layer folder `base`; undefined for anything else. Its
 * content is read without following any symlink on the way (see src/workspace/rooted.ts).
 */
function diskSide(base: string, rel: string, info: Stats): Side | undefined {
  if (info.isSymbolicLink()) {
    return {
      mode: "120000",
      stats: info,
      load: async () => Buffer.from(await readlinkIn(base, rel), "utf8"),
    };
  }
  if (info.isFile()) {
    return {
      mode: info.mode & 0o111 ? "100755" : "100644",
      stats: info,
      file: join(base, rel),
      load: async () => (await readIn(base, rel)).data,
    };
  }
  return undefined;
}

/** lstat of `rel` in a layer without following symlinks; undefined when absent or behind a symlink. */
async function statInLayer(base: string, rel: string): Promise<Stats | undefined> {
  try {
    return await lstatIn(base, rel);
  } catch (error) {
    if (error instanceof FileAccessError) return undefined;
    throw error;
  }
}

/** The entries of a layer's folder with their lstat()s; none when it is absent or behind a symlink. */
async function listLayer(base: string, rel: string): Promise<DirEntryInfo[]> {
  try {
    return await readdirIn(base, rel);
  } catch (error) {
    if (error instanceof FileAccessError || errnoCode(error) === "ENOENT" || errnoCode(error) === "ENOTDIR")
      return [];
    throw error;
  }
}

/** The files and symlinks strictly below `rel` of the folder `base` (none when it is no folder). */
export async function filesBelow(base: string, rel: string): Promise<string[]> {
  const found = new Map<string, Side>();
  await collectFiles(base, rel, found);
  found.delete(rel);
  return [...found.keys()];
}

/** Every file and symlink at or below `rel` of the folder `base`, `.git` folders left out. */
async function collectFiles(base: string, rel: string, out: Map<string, Side>): Promise<void> {
  if (isGitPath(rel)) return;
  const info = await statInLayer(base, rel);
  if (info) await collectEntry(base, rel, info, out);
}

async function collectEntry(base: string, rel: string, info: Stats, out: Map<string, Side>): Promise<void> {
  if (isGitPath(rel)) return;
  if (!info.isDirectory()) {
    const side = diskSide(base, rel, info);
    if (side) out.set(rel, side);
    return;
  }
  for (const entry of await listLayer(base, rel))
    await collectEntry(base, joinRel(rel, entry.name), entry.stats, out);
}

/**
 * Copy modes: when the copy was finished (filesystems' clock), and the files umbra refreshed in it from
 * the user's folder since, with the change time each got then.
 */
export interface CopyState {
  copiedAt: number;
  refreshed: ReadonlyMap<string, number>;
}

const NO_COPY: CopyState = { copiedAt: 0, refreshed: new Map() };

/** A file of the copy that the branch wrote (after the copy, and not one of umbra's refreshes). */
export function branchMade(rel: string, side: Pick<Side, "stats">, copy: CopyState): boolean {
  const ctime = side.stats?.ctimeMs;
  return ctime === undefined || (ctime >= copy.copiedAt && copy.refreshed.get(rel) !== ctime);
}

/** A file of the user's folder that the copy received (made at fork, or refreshed since). */
function wasCopied(rel: string, side: Side, copy: CopyState): boolean {
  return (side.stats?.ctimeMs ?? 0) < copy.copiedAt || copy.refreshed.has(rel);
}

/** Copy modes: every file of the copy and of the user's folder, walked once for a sync point. */
export interface BothTrees {
  tree: Map<string, Side>;
  user: Map<string, Side>;
}

export async function bothTrees(layers: ViewLayers): Promise<BothTrees> {
  const tree = new Map<string, Side>();
  const user = new Map<string, Side>();
  await Promise.all([collectFiles(layers.tree, "", tree), collectFiles(layers.root, "", user)]);
  return { tree, user };
}

/**
 * Copy modes follow the user's folder at every sync point: each regular file the branch has not touched
 * (`touched`: recorded in its base) is copied again from the user's folder when it changed there, a new
 * one is copied in, and one the user deleted goes. Returns the refreshed files' new change times (null:
 * no longer refreshed).
 */
export async function refreshCopy(
  layers: ViewLayers,
  copy: CopyState,
  touched: (rel: string) => boolean,
  walked?: BothTrees,
): Promise<Map<string, number | null>> {
  const { tree, user } = walked ?? (await bothTrees(layers));
  const updates = new Map<string, number | null>();
  for (const [rel, side] of user) {
    if (touched(rel) || side.mode === "120000" || !side.stats) continue;
    const mine = tree.get(rel);
    if (mine ? branchMade(rel, mine, copy) : wasCopied(rel, side, copy)) continue;
    if (
      mine?.mode === side.mode &&
      mine.stats?.size === side.stats.size &&
      mine.stats.mtimeMs === side.stats.mtimeMs
    )
      continue;
    const { data, stats } = await readIn(layers.root, rel).catch(() => ({
      data: undefined,
      stats: undefined,
    }));
    if (!data || !stats) continue;
    await writeIn(layers.tree, rel, data);
    const file = join(layers.tree, rel);
    await chmod(file, stats.mode & 0o777);
    await utimes(file, stats.atime, stats.mtime);
    updates.set(rel, (await lstat(file)).ctimeMs);
  }
  for (const [rel, side] of tree) {
    if (user.has(rel) || touched(rel) || branchMade(rel, side, copy) || side.mode === "120000") continue;
    await removeIn(layers.tree, rel);
    updates.set(rel, null);
  }
  return updates;
}

/**
 * The paths the branch's layer touched: path → its side in the branch, or null when the branch has no
 * file there. Overlay modes walk only the upper layer (plus the lower folders it deletes or hides);
 * copy modes walk the whole copy: a file changed in it since the copy was made (`copiedAt`, on the
 * filesystems' clock) is the branch's, and so is a file of the user's folder missing from the copy
 * that existed when it was made.
 */
async function layerCandidates(
  layers: ViewLayers,
  copy: CopyState,
  walked: BothTrees | undefined,
): Promise<Map<string, Side | null>> {
  const view = new Map<string, Side | null>();
  const lower = layers.root;
  if (layers.mode === "reflink" || layers.mode === "copy") {
    const { tree, user } = walked ?? (await bothTrees(layers));
    for (const [rel, side] of tree) if (branchMade(rel, side, copy)) view.set(rel, side);
    for (const [rel, side] of user) if (!tree.has(rel) && wasCopied(rel, side, copy)) view.set(rel, null);
    return view;
  }
  const fuse = layers.mode === "fuse-overlayfs";
  const upper = layers.upper;
  const deletedRoots: string[] = [];
  const mergedDirs: string[] = [];
  const walk = async (dirRel: string): Promise<void> => {
    for (const entry of await listLayer(upper, dirRel)) {
      const name = entry.name;
      const info = entry.stats;
      if (fuse && name.startsWith(FUSE_WHITEOUT_PREFIX)) {
        if (name === FUSE_OPAQUE_MARK) deletedRoots.push(dirRel);
        else deletedRoots.push(joinRel(dirRel, name.slice(FUSE_WHITEOUT_PREFIX.length)));
        continue;
      }
      const rel = joinRel(dirRel, name);
      if (isGitPath(rel)) continue;
      if (info.isCharacterDevice()) {
        if (isWhiteout(info)) deletedRoots.push(rel);
        continue;
      }
      const lowerInfo = await statInLayer(lower, rel);
      if (info.isDirectory()) {
        if (lowerInfo?.isDirectory()) mergedDirs.push(rel);
        else if (lowerInfo) deletedRoots.push(rel);
        await walk(rel);
        continue;
      }
      const side = diskSide(upper, rel, info);
      if (!side) continue;
      view.set(rel, side);
      if (lowerInfo?.isDirectory()) deletedRoots.push(rel);
    }
  };
  await walk("");
  if (mergedDirs.length > 0) {
    const opaque = await opaqueDirs(mergedDirs.map((rel) => join(upper, rel)));
    for (const rel of mergedDirs) if (opaque.has(join(upper, rel))) deletedRoots.push(rel);
  }
  for (const root of deletedRoots) {
    const hidden = new Map<string, Side>();
    await collectFiles(lower, root, hidden);
    for (const rel of hidden.keys()) if (!view.has(rel)) view.set(rel, null);
  }
  return view;
}

/**
 * Every path the branch touched (its layer and its overrides together): path → the branch's side, or
 * null where the branch has no file. `.git` folders are left out. `copy`: see layerCandidates.
 */
export async function touchedPaths(
  layers: ViewLayers,
  overrides: ReadonlyMap<string, Buffer | null>,
  copy: CopyState = NO_COPY,
  walked?: BothTrees,
): Promise<Map<string, Side | null>> {
  const view = await layerCandidates(layers, copy, walked);
  const lower = layers.root;
  const lowerBelow = async (rel: string): Promise<string[]> => {
    const found = new Map<string, Side>();
    await collectFiles(lower, rel, found);
    return [...found.keys()];
  };
  for (const [path, value] of overrides) {
    if (value !== null || isGitPath(path)) continue;
    for (const key of view.keys()) if (isAtOrBelow(key, path)) view.set(key, null);
    for (const rel of await lowerBelow(path)) view.set(rel, null);
  }
  for (const [path, value] of overrides) {
    if (value === null || isGitPath(path)) continue;
    for (const key of view.keys()) if (key !== path && isAtOrBelow(key, path)) view.set(key, null);
    for (const rel of await lowerBelow(path)) if (rel !== path) view.set(rel, null);
    let previous = view.get(path);
    if (previous === undefined) {
      const info = await statInLayer(lower, path);
      previous = info ? (diskSide(lower, path, info) ?? null) : null;
    }
    const mode: GitMode = previous && previous.mode !== "120000" ? previous.mode : "100644";
    view.set(path, { mode, load: async () => value });
  }
  return view;
}

/** A side of the branch as a FileState. */
export async function sideState(side: Side): Promise<FileState> {
  if (side.mode === "120000") return { kind: "link", target: (await side.load()).toString("utf8") };
  const size = side.stats?.size ?? (await side.load()).length;
  return { kind: "file", mode: side.mode, size, load: side.load };
}

/** A side for diffing from a FileState (undefined: absent). */
function stateSide(state: FileState): Side | undefined {
  if (state.kind === "absent") return undefined;
  if (state.kind === "link") return { mode: "120000", load: async () => Buffer.from(state.target, "utf8") };
  return { mode: state.mode, size: state.size, load: state.load };
}

/**
 * A recorded change as diff.ts formats it (undefined when both sides are absent). A base umbra could not
 * record stands as an empty entry of the branch's kind: enough for the accept rules, which judge paths
 * and modes; diff() leaves such files out.
 */
export function changeDetail(change: RecordedChange): ChangeDetail | undefined {
  const { base, branch, path } = change;
  const old: Side | undefined =
    base.kind === "unknown"
      ? {
          mode: branch.kind === "file" ? branch.mode : branch.kind === "link" ? "120000" : "100644",
          load: async () => Buffer.alloc(0),
        }
      : stateSide(base);
  const next = stateSide(branch);
  if (!old && !next) return undefined;
  const kind = !next ? "deleted" : !old ? "added" : "modified";
  return { path, kind, ...(old ? { old } : {}), ...(next ? { new: next } : {}) };
}
