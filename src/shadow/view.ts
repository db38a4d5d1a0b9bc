import type { Dirent, Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { isAbsolute, join, posix } from "node:path";
import { FileAccessError } from "../workspace/errors.js";
import { type ReadResult, type RootedOptions, readdirIn, readIn } from "../workspace/rooted.js";
import { errnoCode } from "./errors.js";
import { opaqueDirs } from "./helper.js";
import type { BranchMode } from "./modes.js";
import { isAtOrBelow, parentOf } from "./relpath.js";

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface DirEntry {
  name: string;
  kind: EntryKind;
}

/** The layers a view merges. */
export interface ViewLayers {
  /** The user's folder (real path): the lower layer of overlay modes. */
  root: string;
  mode: BranchMode;
  /** Overlay modes: the branch's own layer. */
  upper: string;
  /** Copy modes: the branch's full copy. */
  tree: string;
}

/** Where a path of the view resolved to. */
export interface Resolved {
  kind: EntryKind;
  /** Canonical workspace-relative path after following symlinks; undefined when it left the workspace. */
  rel?: string;
  /** A symlink on the way points outside the workspace: nothing there is read or listed. */
  outside?: true;
  /** The content, when it comes from an in-memory override. */
  content?: Buffer;
  /** Host path of a visible file, symlink or other entry. */
  path?: string;
  /** The layer folder (upper/copy, or the user's folder) that holds `path`, at `rel` below it. */
  layer?: string;
  /** Folders: the branch layer's folder and the visible lower folder that contribute entries. */
  upperDir?: string;
  lowerDir?: string;
  stats?: Stats;
}

const MAX_LINKS = 40;

/** Read failures that mean "no file here now" (it went away or was swapped for a link or a folder). */
const QUIET_READ_FAILURES = new Set(["MISSING", "NOT_DIR", "SYMLINK", "CHANGED", "NOT_REGULAR"]);

/** An overlay whiteout: a character device 0/0. */
export function isWhiteout(info: Stats): boolean {
  return info.isCharacterDevice() && info.rdev === 0;
}

/** fuse-overlayfs marks deletions with `.wh.<name>` files and opaque folders with `.wh..wh..opq`. */
export const FUSE_WHITEOUT_PREFIX = ".wh.";
export const FUSE_OPAQUE_MARK = ".wh..wh..opq";

/** lstat, or undefined when the path (or a folder on the way) does not exist. */
export async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

function kindOf(info: Stats | Dirent): EntryKind {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "dir";
  if (info.isSymbolicLink()) return "symlink";
  return "other";
}

type OverrideState =
  | { kind: "file"; content: Buffer }
  | { kind: "gone" }
  /** A folder that exists only because overrides below it create files. */
  | { kind: "dir-only" }
  /** Overrides below, none at or above: the layers decide, but it is at least a folder. */
  | { kind: "dir-merge" };

/**
 * The merged view of a branch as Node reads it: overrides > upper layer > lower layer (the user's folder),
 * with overlay whiteouts (character devices 0/0 and fuse-overlayfs `.wh.` files) and opaque folders.
 * Copy modes have a single layer, the copy. Symlinks inside the workspace are followed within the view.
 */
export class BranchView {
  private readonly overlay: boolean;
  private readonly fuse: boolean;
  private readonly upper: string;
  private readonly opaqueCache = new Map<string, { ino: number; ctimeMs: number; opaque: boolean }>();

  constructor(
    readonly layers: ViewLayers,
    private readonly overrides: ReadonlyMap<string, Buffer | null>,
  ) {
    this.overlay = layers.mode === "overlay" || layers.mode === "fuse-overlayfs";
    this.fuse = layers.mode === "fuse-overlayfs";
    this.upper = this.overlay ? layers.upper : layers.tree;
  }

  /**
   * The content of a file of the view (symlinks inside the workspace followed), or undefined when there
   * is none, when a link leaves the workspace or when it is not a regular file.
   */
  async read(rel: string): Promise<Buffer | undefined> {
    const entry = await this.resolve(rel, true);
    return entry && (await this.readResolved(entry))?.data;
  }

  /**
   * Reads a resolved file from its layer without following any symlink (one swapped in since resolve()
   * is refused); `check` sees the stats of every folder passed and of the opened file.
   */
  async readResolved(
    entry: Resolved,
    options: RootedOptions & { maxBytes?: number } = {},
  ): Promise<{ data: Buffer; stats?: ReadResult["stats"] } | undefined> {
    if (entry.kind !== "file" || entry.rel === undefined) return undefined;
    if (entry.content) return { data: entry.content };
    if (!entry.layer) return undefined;
    try {
      return await readIn(entry.layer, entry.rel, options);
    } catch (error) {
      if (error instanceof FileAccessError && QUIET_READ_FAILURES.has(error.code)) return undefined;
      throw error;
    }
  }

  /** The size in bytes of a file of the view (symlinks followed), without reading it; undefined when none. */
  async size(rel: string): Promise<number | undefined> {
    const entry = await this.resolve(rel, true);
    if (entry?.kind !== "file") return undefined;
    if (entry.content) return entry.content.length;
    return entry.path ? (await lstatOrUndefined(entry.path))?.size : undefined;
  }

  /** The entries of a folder of the view, sorted by name; undefined when it is not a folder. */
  async readdir(rel: string): Promise<DirEntry[] | undefined> {
    const entry = await this.resolve(rel, true);
    if (entry?.kind !== "dir" || entry.rel === undefined) return undefined;
    const base = entry.rel;
    const names = new Map<string, EntryKind>();
    const hidden = new Set<string>();
    if (entry.upperDir) {
      for (const { name, stats } of await listOrEmpty(this.upper, base)) {
        if (this.overlay && this.fuse && name.startsWith(FUSE_WHITEOUT_PREFIX)) {
          if (name !== FUSE_OPAQUE_MARK) hidden.add(name.slice(FUSE_WHITEOUT_PREFIX.length));
          continue;
        }
        if (this.overlay && isWhiteout(stats)) {
          hidden.add(name);
          continue;
        }
        names.set(name, kindOf(stats));
      }
    }
    if (entry.lowerDir) {
      for (const { name, stats } of await listOrEmpty(this.layers.root, base)) {
        if (!names.has(name) && !hidden.has(name)) names.set(name, kindOf(stats));
      }
    }
    this.applyOverridesToListing(base, names);
    return [...names.entries()]
      .map(([name, kind]) => ({ name, kind }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * What kind of entry `rel` is in the view (without following a final symlink), or undefined; also
   * undefined behind a link that leaves the workspace.
   */
  async kind(rel: string): Promise<EntryKind | undefined> {
    const entry = await this.resolve(rel, false);
    return entry?.outside ? undefined : entry?.kind;
  }

  private applyOverridesToListing(dir: string, names: Map<string, EntryKind>): void {
    const prefixLength = dir === "" ? 0 : dir.length + 1;
    const created = new Map<string, EntryKind>();
    for (const [path, value] of this.overrides) {
      if (path === dir || !isAtOrBelow(path, dir)) continue;
      const rest = path.slice(prefixLength);
      const slash = rest.indexOf("/");
      const child = slash < 0 ? rest : rest.slice(0, slash);
      if (slash < 0) {
        if (value === null) names.delete(child);
        else created.set(child, "file");
      } else if (value !== null && created.get(child) !== "file") {
        created.set(child, "dir");
      }
    }
    for (const [child, kind] of created) {
      // a file override of `child` wins over folders implied by deeper overrides (write() keeps them apart)
      names.set(child, kind);
    }
  }

  private hasFileBelow(rel: string): boolean {
    for (const [path, value] of this.overrides) {
      if (value !== null && path !== rel && isAtOrBelow(path, rel)) return true;
    }
    return false;
  }

  private overrideState(rel: string): OverrideState | undefined {
    if (this.overrides.size === 0) return undefined;
    const exact = this.overrides.get(rel);
    if (exact) return { kind: "file", content: exact };
    const below = this.hasFileBelow(rel);
    if (exact === null) return below ? { kind: "dir-only" } : { kind: "gone" };
    for (let dir = parentOf(rel); ; dir = parentOf(dir)) {
      if (dir === "") break;
      const value = this.overrides.get(dir);
      if (value === undefined) continue;
      if (value !== null) return { kind: "gone" };
      return below ? { kind: "dir-only" } : { kind: "gone" };
    }
    return below ? { kind: "dir-merge" } : undefined;
  }

  /**
   * Resolves a canonical relative path in the view. Symlinks in the middle of the path are always
   * followed; a final symlink only when `follow` is set.
   */
  async resolve(rel: string, follow: boolean, depth = 0): Promise<Resolved | undefined> {
    if (rel === "") return this.rootEntry();
    const state = this.overrideState(rel);
    if (state?.kind === "file") return { kind: "file", rel, content: state.content };
    if (state?.kind === "gone") return undefined;
    if (state?.kind === "dir-only") return { kind: "dir", rel };
    const found = await this.walkLayers(rel, follow, depth);
    if (state?.kind === "dir-merge" && found?.kind !== "dir") return { kind: "dir", rel };
    return found;
  }

  private rootEntry(): Resolved {
    if (!this.overlay) return { kind: "dir", rel: "", upperDir: this.upper };
    return { kind: "dir", rel: "", upperDir: this.upper, lowerDir: this.layers.root };
  }

  private async walkLayers(rel: string, follow: boolean, depth: number): Promise<Resolved | undefined> {
    const parts = rel.split("/");
    const lower = this.layers.root;
    let upperOk = true;
    let lowerOk = this.overlay;
    for (let i = 0; i < parts.length; i++) {
      const prefix = parts.slice(0, i + 1).join("/");
      const last = i === parts.length - 1;
      const rest = parts.slice(i + 1);
      let upperInfo: Stats | undefined;
      if (upperOk) {
        const upperPath = join(this.upper, prefix);
        upperInfo = await lstatOrUndefined(upperPath);
        if (this.overlay && upperInfo && isWhiteout(upperInfo)) return undefined;
        if (!upperInfo) {
          upperOk = false;
          const name = parts[i] ?? "";
          if (
            this.fuse &&
            (await lstatOrUndefined(join(this.upper, parentOf(prefix), `${FUSE_WHITEOUT_PREFIX}${name}`)))
          )
            return undefined;
          if (lowerOk && !last) {
            const shortcut = await this.lowerOnly(rel, parts, follow, depth);
            if (shortcut !== "slow") return shortcut;
          }
        }
      }
      let lowerInfo: Stats | undefined;
      if (lowerOk && (!upperInfo || upperInfo.isDirectory())) {
        lowerInfo = await lstatOrUndefined(join(lower, prefix));
        if (!lowerInfo) lowerOk = false;
      }
      if (upperInfo) {
        const upperPath = join(this.upper, prefix);
        if (upperInfo.isDirectory()) {
          if (lowerOk && lowerInfo?.isDirectory()) {
            if (await this.isOpaque(upperPath, upperInfo)) lowerOk = false;
          } else {
            lowerOk = false;
          }
          if (last) {
            return lowerOk
              ? { kind: "dir", rel, upperDir: upperPath, lowerDir: join(lower, prefix), stats: upperInfo }
              : { kind: "dir", rel, upperDir: upperPath, stats: upperInfo };
          }
          continue;
        }
        if (upperInfo.isSymbolicLink() && (follow || !last)) {
          return this.followLink(prefix, upperPath, rest, follow, depth);
        }
        return last
          ? { kind: kindOf(upperInfo), rel, path: upperPath, layer: this.upper, stats: upperInfo }
          : undefined;
      }
      if (!lowerOk || !lowerInfo) return undefined;
      const lowerPath = join(lower, prefix);
      if (lowerInfo.isDirectory()) {
        if (last) return { kind: "dir", rel, lowerDir: lowerPath, stats: lowerInfo };
        continue;
      }
      if (lowerInfo.isSymbolicLink() && (follow || !last)) {
        return this.followLink(prefix, lowerPath, rest, follow, depth);
      }
      return last
        ? { kind: kindOf(lowerInfo), rel, path: lowerPath, layer: lower, stats: lowerInfo }
        : undefined;
    }
    return undefined;
  }

  /**
   * The rest of a path that only the lower folder can provide: when no folder on the way is a symlink
   * (one realpath call says so), a single lstat decides; otherwise "slow" (walk component by component).
   */
  private async lowerOnly(
    rel: string,
    parts: string[],
    follow: boolean,
    depth: number,
  ): Promise<Resolved | undefined | "slow"> {
    const lower = this.layers.root;
    const dir = join(lower, ...parts.slice(0, -1));
    let real: string;
    try {
      real = await realpath(dir);
    } catch {
      return "slow";
    }
    if (real !== dir) return "slow";
    const path = join(lower, rel);
    const info = await lstatOrUndefined(path);
    if (!info) return undefined;
    if (info.isDirectory()) return { kind: "dir", rel, lowerDir: path, stats: info };
    if (info.isSymbolicLink() && follow) return this.followLink(rel, path, [], follow, depth);
    return { kind: kindOf(info), rel, path, layer: lower, stats: info };
  }

  private async followLink(
    linkRel: string,
    linkPath: string,
    rest: string[],
    follow: boolean,
    depth: number,
  ): Promise<Resolved | undefined> {
    if (depth >= MAX_LINKS) return undefined;
    let target: string;
    try {
      target = await readlink(linkPath);
    } catch {
      return undefined;
    }
    const root = this.layers.root;
    let inside: string | undefined;
    if (isAbsolute(target)) {
      if (target === root || target.startsWith(`${root}/`)) {
        inside = posix.normalize(
          [target.slice(root.length + 1), ...rest].filter((s) => s !== "").join("/") || ".",
        );
      }
    } else {
      inside = posix.normalize(posix.join(parentOf(linkRel), target, ...rest));
    }
    if (inside !== undefined && inside !== ".." && !inside.startsWith("../") && !inside.startsWith("/")) {
      const rel = inside === "." ? "" : inside.replace(/\/+$/, "");
      return this.resolve(rel, follow, depth + 1);
    }
    // The link leaves the workspace: nothing outside is looked at, read or written through the view.
    return { kind: "other", outside: true };
  }

  /** Whether an upper folder hides the lower folder of the same path. Cached until the folder's ctime moves. */
  async isOpaque(upperDir: string, info: Stats): Promise<boolean> {
    const cached = this.opaqueCache.get(upperDir);
    if (cached && cached.ino === info.ino && cached.ctimeMs === info.ctimeMs) return cached.opaque;
    let opaque = false;
    if (this.fuse && (await lstatOrUndefined(join(upperDir, FUSE_OPAQUE_MARK)))) opaque = true;
    if (!opaque) opaque = (await opaqueDirs([upperDir])).has(upperDir);
    this.opaqueCache.set(upperDir, { ino: info.ino, ctimeMs: info.ctimeMs, opaque });
    return opaque;
  }
}

/** The entries of a layer's folder, reached without following symlinks; none when it is not a folder. */
async function listOrEmpty(layer: string, rel: string): Promise<{ name: string; stats: Stats }[]> {
  try {
    return await readdirIn(layer, rel);
  } catch (error) {
    if (error instanceof FileAccessError) return [];
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
}
