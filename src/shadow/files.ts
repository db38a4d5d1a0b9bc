import type { Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { FileAccessError, shownPath } from "../workspace/errors.js";
import { IGNORE_FILE_NAMES, umbraIgnoreMatcher } from "../workspace/ignore-rules.js";
import { type DirEntryInfo, lstatIn, readdirIn } from "../workspace/rooted.js";
import type { BranchChange } from "./changes.js";
import { isAtOrBelow, joinRel, normalizeRelPath, parentOf } from "./relpath.js";
import type { BranchView, DirEntry, EntryKind, Resolved } from "./view.js";

/** What agents may not see or change; built by the caller from the sandbox policy (src/sandbox). */
export interface AccessRules {
  /** Workspace-relative hidden paths (.umbraignore/.cursorignore matches, ...); a folder hides its contents. */
  hidden: readonly string[];
  /** Absolute hidden paths outside the workspace (credentials): their files are refused under any name. */
  hiddenOutside: readonly string[];
  /** Workspace-relative read-only paths (a folder protects its contents), each with the reason shown. */
  protected: readonly { path: string; reason: string }[];
  /** Entries of `.umbra/` agents may write; every other one is read-only. */
  umbraWritable: readonly string[];
}

/** The branch operations BranchFiles writes through (Branch implements them). */
export interface BranchWrites {
  readonly id: string;
  readonly workspaceRoot: string;
  write(relPath: string, content: string | Buffer): void;
  remove(relPath: string): void;
  changes(): Promise<BranchChange[]>;
  /** Before a write or deletion: records what the path (a folder: each file below) starts from. */
  recordBase(relPath: string): Promise<void>;
  /** A file read from the user's folder: the agent's base if it writes the file later. */
  noteSeen(relPath: string, bytes: Buffer, mode: "100644" | "100755", layer: string): Promise<void>;
}

/** Files and folders of hidden folders (and outside credentials) whose inodes are collected at most. */
const MAX_HIDDEN_INODES = 20_000;
/** Entries looked at below a folder that a write or deletion would replace. */
const MAX_REPLACED_ENTRIES = 20_000;

const GIT_REASON = "git metadata is not edited by tools";

/** The .umbraignore/.cursorignore rules in force inside each folder, read for one query. */
/** The user's folder's umbra ignore rules, read once per call that asks about many paths. */
type RuleMemo = ReturnType<typeof umbraIgnoreMatcher>;

/**
 * The one door through which agents' tools read and write a branch (and, through its lower layer, the
 * user's folder). Every path is resolved in the branch's merged view: symlinks are followed only while
 * they stay inside the workspace, and the I/O itself never follows one (src/workspace/rooted.ts).
 * Refused, with a FileAccessError: a path through a link that leaves the workspace (OUTSIDE); a hidden
 * path, reached directly, through links, or as the same file under another name — a hard link, a case
 * variant — recognised by device and inode (HIDDEN); FIFOs, devices and sockets (NOT_REGULAR); writes,
 * deletions and renames of protected paths or of folders holding one (PROTECTED).
 * It is also the DocumentSource given to language servers, so that they never see a hidden file either.
 */
export class BranchFiles {
  private readonly hidden: string[];
  private inodes: Promise<Set<string>> | undefined;

  constructor(
    private readonly branch: BranchWrites,
    private readonly view: BranchView,
    private readonly rules: AccessRules,
  ) {
    this.hidden = rules.hidden.map((path) => normalizeRelPath(path, true)).filter((path) => path !== "");
  }

  get id(): string {
    return this.branch.id;
  }

  get workspaceRoot(): string {
    return this.branch.workspaceRoot;
  }

  /**
   * Where `path` leads in the view: its canonical path (links inside the workspace followed) and what
   * is there (undefined: nothing). Throws for a path that leaves the workspace or is hidden.
   */
  async resolve(path: string): Promise<{ rel: string; kind: EntryKind | undefined }> {
    const rel = checkedRel(path);
    const entry = await this.view.resolve(rel, true);
    if (entry?.outside) throw outside(rel);
    if (entry?.rel !== undefined) {
      await this.refuseHidden(entry.rel, entry.stats);
      return { rel: entry.rel, kind: entry.kind };
    }
    // nothing there: where would it be created?
    const target = await this.placeOf(rel);
    await this.refuseHidden(target);
    return { rel: target, kind: undefined };
  }

  /** The bytes of a regular file of the branch; undefined when there is none. */
  async read(path: string, options: { maxBytes?: number } = {}): Promise<Buffer | undefined> {
    const rel = checkedRel(path);
    const entry = await this.view.resolve(rel, true);
    if (!entry) return undefined;
    if (entry.outside) throw outside(rel);
    if (entry.rel === undefined) return undefined;
    await this.refuseHidden(entry.rel, entry.stats);
    if (entry.kind === "other")
      throw new FileAccessError("NOT_REGULAR", rel, `${shownPath(rel)} is not a regular file`);
    if (entry.kind !== "file") return undefined;
    const inodes = await this.hiddenInodes();
    const found = await this.view.readResolved(entry, {
      ...options,
      check: (stats, at) => {
        if (inodes.has(inodeKey(stats))) throw hiddenError(at === "" ? rel : at);
      },
    });
    // read whole: what the agent saw of the user's file is its base if it writes it later
    if (found?.stats && entry.layer && options.maxBytes === undefined)
      await this.branch.noteSeen(
        entry.rel,
        found.data,
        found.stats.mode & 0o111 ? "100755" : "100644",
        entry.layer,
      );
    return found?.data;
  }

  /** DocumentSource: the text of a file; undefined when it is absent or refused. */
  async readText(path: string): Promise<string | undefined> {
    try {
      return (await this.read(path))?.toString("utf8");
    } catch (error) {
      if (error instanceof FileAccessError) return undefined;
      throw error;
    }
  }

  /** The entries of a folder, hidden ones left out; undefined when it is not a folder. */
  async list(path: string): Promise<DirEntry[] | undefined> {
    const rel = checkedRel(path, true);
    const entry = await this.view.resolve(rel, true);
    if (entry?.outside) throw outside(rel);
    if (entry?.rel === undefined || entry.kind !== "dir") return undefined;
    await this.refuseHidden(entry.rel, entry.stats);
    const base = entry.rel;
    const entries = (await this.view.readdir(base)) ?? [];
    const memo = this.rulesNow();
    const visible: DirEntry[] = [];
    for (const child of entries) {
      if (!(await this.isHidden(joinRel(base, child.name), child.kind === "dir", memo))) visible.push(child);
    }
    return visible;
  }

  /** What `path` is (a final symlink not followed); undefined when nothing is there. */
  async kind(path: string): Promise<EntryKind | undefined> {
    const canonical = await this.canonicalParent(checkedRel(path));
    await this.refuseHidden(canonical);
    return this.view.kind(canonical);
  }

  /**
   * Where write(path) would write (its canonical path: a link inside the workspace is written through),
   * or the refusal; writes nothing.
   */
  async writable(path: string): Promise<string> {
    const { rel, kind } = await this.resolve(path);
    this.refuseProtected(rel, path);
    if (kind === "dir") await this.refuseReplacing(rel);
    else if (kind !== undefined && kind !== "file")
      throw new FileAccessError("NOT_REGULAR", rel, `${shownPath(rel)} is not a regular file`);
    return rel;
  }

  /** Writes a file of the branch (an in-memory override until materialized); returns the path written. */
  async write(path: string, content: string | Buffer): Promise<string> {
    const rel = await this.writable(path);
    await this.branch.recordBase(rel);
    this.branch.write(rel, content);
    return rel;
  }

  /** What remove(path) would delete (a final symlink itself, never its target), or the refusal. */
  async removable(path: string): Promise<string> {
    const rel = checkedRel(path);
    const canonical = await this.canonicalParent(rel);
    await this.refuseHidden(canonical);
    this.refuseProtected(canonical, path);
    if ((await this.view.kind(canonical)) === "dir") await this.refuseReplacing(canonical);
    return canonical;
  }

  /** Deletes a file or folder of the branch; returns the path deleted. */
  async remove(path: string): Promise<string> {
    const rel = await this.removable(path);
    await this.branch.recordBase(rel);
    this.branch.remove(rel);
    return rel;
  }

  /** Moves a regular file to another path of the branch. */
  async rename(from: string, to: string): Promise<string> {
    const content = await this.read(from);
    if (content === undefined)
      throw new FileAccessError("MISSING", from, `${shownPath(from)} does not exist`);
    const source = (await this.resolve(from)).rel;
    this.refuseProtected(source, from);
    const written = await this.write(to, content);
    if (written !== source) {
      await this.branch.recordBase(source);
      this.branch.remove(source);
    }
    return written;
  }

  /** DocumentSource: the branch's changes, hidden paths left out. */
  async changes(): Promise<BranchChange[]> {
    const memo = this.rulesNow();
    const visible: BranchChange[] = [];
    for (const change of await this.branch.changes()) {
      if (!(await this.isHidden(change.path, false, memo))) visible.push(change);
    }
    return visible;
  }

  /** Why `rel` (canonical) is read-only for agents, or undefined. Case variants count the same. */
  protectedReason(rel: string): string | undefined {
    const folded = rel.toLowerCase();
    const parts = folded.split("/");
    if (parts.includes(".git")) return GIT_REASON;
    if (parts.some((part) => IGNORE_FILE_NAMES.has(part))) return "ignore files are not edited by tools";
    if (parts[0] === ".umbra" && !this.rules.umbraWritable.includes(parts[1] ?? ""))
      return "umbra's settings are not edited by tools";
    if (parts.length === 1 && folded.endsWith(".code-workspace"))
      return "editor settings are not edited by tools";
    for (const { path, reason } of this.rules.protected) {
      if (isAtOrBelow(folded, path.toLowerCase())) return reason;
    }
    return undefined;
  }

  /**
   * Whether `rel` (canonical) is hidden: at or below a hidden path of the policy, or matched now by the
   * .umbraignore/.cursorignore rules of the user's folder (read at every query, in every folder, those
   * the index leaves out included). Other names of a hidden file (hard links, case variants on a
   * case-insensitive filesystem) are caught by inode when they are opened.
   */
  async isHidden(rel: string, isDir = false, memo: RuleMemo = this.rulesNow()): Promise<boolean> {
    if (rel === "") return false;
    if (this.hidden.some((path) => isAtOrBelow(rel, path))) return true;
    return memo(rel, isDir);
  }

  /** The umbra ignore rules of the user's folder as they are now (never those of the branch). */
  private rulesNow(): RuleMemo {
    return umbraIgnoreMatcher(this.view.layers.root);
  }

  /** `rel` with its parent folder resolved (links inside the workspace followed), its last name kept. */
  private async canonicalParent(rel: string): Promise<string> {
    const parent = parentOf(rel);
    if (parent === "") return rel;
    return joinRel((await this.resolve(parent)).rel, rel.slice(parent.length + 1));
  }

  /** The canonical place of a path that does not exist yet: its nearest existing folder, resolved. */
  private async placeOf(rel: string): Promise<string> {
    const parts = rel.split("/");
    for (let n = parts.length - 1; n >= 0; n--) {
      const prefix = parts.slice(0, n).join("/");
      const entry: Resolved | undefined = prefix === "" ? undefined : await this.view.resolve(prefix, false);
      if (prefix !== "" && entry === undefined) continue;
      if (entry?.kind === "symlink") {
        const followed = await this.view.resolve(prefix, true);
        if (followed?.outside) throw outside(prefix);
        if (followed?.rel === undefined)
          throw new FileAccessError(
            "SYMLINK",
            prefix,
            `${shownPath(prefix)} is a symlink that points nowhere`,
          );
        return joinRel(followed.rel, parts.slice(n).join("/"));
      }
      if (entry !== undefined && entry.kind !== "dir")
        throw new FileAccessError("NOT_DIR", prefix, `${shownPath(prefix)} is not a folder`);
      return joinRel(entry?.rel ?? prefix, parts.slice(n).join("/"));
    }
    return rel;
  }

  private refuseProtected(rel: string, asked: string): void {
    const reason = this.protectedReason(rel) ?? this.protectedReason(checkedRel(asked));
    if (reason)
      throw new FileAccessError("PROTECTED", rel, `${shownPath(rel)} is read-only for agents: ${reason}`);
  }

  private async refuseHidden(rel: string, stats?: Stats): Promise<void> {
    if (await this.isHidden(rel, stats?.isDirectory() ?? false)) throw hiddenError(rel);
    if (stats && (await this.hiddenInodes()).has(inodeKey(stats))) throw hiddenError(rel);
  }

  /** Refuses replacing the folder `rel` when a hidden or protected entry lies below it. */
  private async refuseReplacing(rel: string): Promise<void> {
    for (const path of this.hidden) {
      if (path !== rel && isAtOrBelow(path, rel)) throw hiddenBelow(rel);
    }
    let seen = 0;
    const memo = this.rulesNow();
    const walk = async (dir: string): Promise<void> => {
      for (const entry of (await this.view.readdir(dir)) ?? []) {
        if (++seen > MAX_REPLACED_ENTRIES)
          throw new FileAccessError("PROTECTED", rel, `${shownPath(rel)} holds too many files to replace`);
        const child = joinRel(dir, entry.name);
        if (await this.isHidden(child, entry.kind === "dir", memo)) throw hiddenBelow(rel);
        const reason = this.protectedReason(child);
        if (reason)
          throw new FileAccessError(
            "PROTECTED",
            rel,
            `${shownPath(rel)} holds ${shownPath(child)}, ${reason}`,
          );
        if (entry.kind === "dir") await walk(child);
      }
    };
    await walk(rel);
  }

  /**
   * Device and inode of every hidden file and folder (in the user's folder, the branch's layer and the
   * credential paths outside): the same file under another name is refused too.
   */
  private hiddenInodes(): Promise<Set<string>> {
    this.inodes ??= (async () => {
      const set = new Set<string>();
      const { root, mode, upper, tree } = this.view.layers;
      const layers = [root, mode === "overlay" || mode === "fuse-overlayfs" ? upper : tree];
      const add = async (base: string, rel: string): Promise<void> => {
        let info: Stats | undefined;
        try {
          info = rel === "" ? await lstat(base) : await lstatIn(base, rel);
        } catch {
          return;
        }
        if (info) await collect(base, rel, info);
      };
      const collect = async (base: string, rel: string, info: Stats): Promise<void> => {
        if (set.size >= MAX_HIDDEN_INODES || info.isSymbolicLink()) return;
        set.add(inodeKey(info));
        if (!info.isDirectory()) return;
        let entries: DirEntryInfo[];
        try {
          entries = await readdirIn(base, rel);
        } catch {
          return;
        }
        for (const entry of entries) await collect(base, joinRel(rel, entry.name), entry.stats);
      };
      for (const path of this.hidden) for (const layer of layers) await add(layer, path);
      for (const path of this.rules.hiddenOutside) await add(path, "");
      return set;
    })();
    return this.inodes;
  }
}

function inodeKey(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

/** The longest name and path a filesystem takes (NAME_MAX, PATH_MAX less room for the layer's folder). */
const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 3072;

function checkedRel(path: string, allowRoot = false): string {
  let rel: string;
  try {
    rel = normalizeRelPath(path, allowRoot);
  } catch (error) {
    throw new FileAccessError("INVALID_PATH", path, (error as Error).message, { cause: error });
  }
  // refused here, not met as ENAMETOOLONG deep in a layer (whose message names the data directory)
  if (
    Buffer.byteLength(rel) > MAX_PATH_BYTES ||
    rel.split("/").some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES)
  )
    throw new FileAccessError("INVALID_PATH", path, `${shownPath(rel.slice(0, 80))}… is too long a path`);
  return rel;
}

function outside(rel: string): FileAccessError {
  return new FileAccessError(
    "OUTSIDE",
    rel,
    `${shownPath(rel)} leads outside the workspace through a symlink`,
  );
}

function hiddenError(rel: string): FileAccessError {
  return new FileAccessError(
    "HIDDEN",
    rel,
    `${shownPath(rel)} is hidden from agents (.umbraignore / .cursorignore)`,
  );
}

function hiddenBelow(rel: string): FileAccessError {
  return new FileAccessError(
    "HIDDEN",
    rel,
    `${shownPath(rel)} holds files hidden from agents; it is not replaced`,
  );
}
