import { type ChildProcess, execFile } from "node:child_process";
import { lstat, mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { loadConfig } from "../config/config.js";
import { dataDir } from "../config/paths.js";
import { PRIVATE_DIR } from "../config/private.js";
import { FileAccessError, WorkspaceError } from "../workspace/errors.js";
import { resolveRoot } from "../workspace/root.js";
import { readlinkIn, removeIn, writeIn } from "../workspace/rooted.js";
import { BaseRecord, sameAsBase } from "./base.js";
import {
  type BranchChange,
  bothTrees,
  branchMade,
  changeDetail,
  filesBelow,
  refreshCopy,
  sideState,
  touchedPaths,
} from "./changes.js";
import { type DiffOptions, formatDiff } from "./diff.js";
import { errnoCode, ShadowError, unmappedOwnerMessage } from "./errors.js";
import { type AccessRules, BranchFiles } from "./files.js";
import { helperReason } from "./helper.js";
import { type BranchMode, chooseMode, type ModeSetting, probeModes } from "./modes.js";
import { Holder, type MountSpec, type SpawnInBranchOptions, spawnInBranch } from "./mount.js";
import type { FileState, RecordedChange } from "./recorded.js";
import { isAtOrBelow, normalizeRelPath, parentOf } from "./relpath.js";
import {
  type BranchRecord,
  branchesRoot,
  branchPaths,
  createBranchDir,
  isBranchId,
  listStored,
  ownedRecord,
  ownerAlive,
  readRecord,
  removeBranchDir,
  writeRecord,
} from "./store.js";
import { BranchView, type DirEntry, type EntryKind, lstatOrUndefined } from "./view.js";

export type { BranchChange, BranchMode, DirEntry, EntryKind };

/** An override that materialize() did not write, and why (e.g. a symlink stands on its way). */
export interface MaterializeRefusal {
  path: string;
  reason: string;
}

/**
 * Applies overrides inside a branch: triples (d PATH "") delete, (w PATH FILE) write FILE's bytes to PATH.
 * No symlink is followed on the way: an override behind one is skipped and its number (1-based) printed.
 */
const MATERIALIZE_SCRIPT = `set -e
i=0
while [ "$#" -gt 0 ]; do
  op=$1; path=$2; src=$3; shift 3; i=$((i + 1))
  rest=$path; pre=; bad=
  while :; do
    case $rest in */*) part=\${rest%%/*}; rest=\${rest#*/} ;; *) break ;; esac
    pre=\${pre:+$pre/}$part
    if [ -L "$pre" ]; then bad=1; break; fi
    if [ "$op" = w ] && [ ! -e "$pre" ]; then mkdir -- "$pre"; fi
  done
  if [ -n "$bad" ]; then echo "$i"; continue; fi
  if [ "$op" = d ]; then rm -rf -- "$path"; continue; fi
  if [ -L "$path" ] || { [ -e "$path" ] && [ ! -f "$path" ]; }; then rm -rf -- "$path"; fi
  cat -- "$src" > "$path"
done`;

/**
 * See Branch.sandboxView(): join the namespaces of the process holding the branch's mount (overlay
 * modes), bind the branch's full copy over the workspace's path, or (no bind mounts here) use the copy
 * at its own path. `root` is the workspace's path, where the branch is shown.
 */
export type BranchSandboxView =
  | { kind: "join"; pid: number; root: string }
  | { kind: "bind"; source: string; root: string }
  | { kind: "path"; path: string; root: string };

/** Options of fork() and openBranch(). */
export interface ForkOptions {
  /** Overrides `shadow.mode` of the configuration. */
  mode?: ModeSetting;
  /** Environment for the data directory and configuration (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * A copy-on-write fork of a workspace. Node reads it through the merged view (overrides > the branch's
 * layer > the user's folder); processes started with spawn() see it mounted at the workspace's own path,
 * and everything they write lands in the branch's layer. The user's folder is never written.
 */
export class Branch {
  readonly id: string;
  readonly workspaceRoot: string;
  readonly mode: BranchMode;
  readonly dir: string;
  /** Set when the branch is a degraded one (a full copy), to be shown to the user. */
  readonly warning: string | undefined;
  readonly createdAt: string;

  private readonly overrideMap = new Map<string, Buffer | null>();
  private readonly view: BranchView;
  private readonly spec: MountSpec;
  private readonly holder: Holder;
  private readonly children = new Set<ChildProcess>();
  private discarded = false;
  private baseRecord: Promise<BaseRecord> | undefined;
  private readonly record: BranchRecord;
  private readonly ownerPid: number;

  /** Use fork() or openBranch(). */
  constructor(
    record: BranchRecord,
    dir: string,
    options: { warning?: string; bind: boolean; base?: BaseRecord },
  ) {
    if (options.base) this.baseRecord = Promise.resolve(options.base);
    this.record = record;
    this.ownerPid = record.ownerPid;
    this.id = record.id;
    this.workspaceRoot = record.workspaceRoot;
    this.mode = record.mode;
    this.dir = dir;
    this.createdAt = record.createdAt;
    this.warning = options.warning;
    const paths = branchPaths(dir);
    this.spec = {
      root: record.workspaceRoot,
      mode: record.mode,
      upper: paths.upper,
      work: paths.work,
      tree: paths.tree,
      holderLog: paths.holderLog,
      bind: options.bind,
    };
    this.view = new BranchView(
      { root: record.workspaceRoot, mode: record.mode, upper: paths.upper, tree: paths.tree },
      this.overrideMap,
    );
    this.holder = new Holder(this.spec);
  }

  /** The content of a file in the merged view; undefined when it is absent or deleted. */
  async read(relPath: string): Promise<Buffer | undefined> {
    return this.view.read(normalizeRelPath(relPath));
  }

  /** The size of a file in the merged view, without reading it; undefined when it is absent. */
  async size(relPath: string): Promise<number | undefined> {
    return this.view.size(normalizeRelPath(relPath));
  }

  async readText(relPath: string): Promise<string | undefined> {
    return (await this.read(relPath))?.toString("utf8");
  }

  /** The entries of a folder of the merged view (overrides included); undefined when it is not a folder. */
  async readdir(relPath: string): Promise<DirEntry[] | undefined> {
    return this.view.readdir(normalizeRelPath(relPath, true));
  }

  /** What `relPath` is in the merged view (a final symlink is not followed), or undefined. */
  async kind(relPath: string): Promise<EntryKind | undefined> {
    return this.view.kind(normalizeRelPath(relPath));
  }

  /**
   * The door through which agents' tools use this branch: links that leave the workspace, hidden and
   * non-regular files are refused, protected paths are read-only (see BranchFiles).
   */
  files(rules: AccessRules): BranchFiles {
    return new BranchFiles(this, this.view, rules);
  }

  /** Sets an in-memory override: the view shows `content` at `relPath` (a folder there is replaced). */
  write(relPath: string, content: string | Buffer): void {
    const path = normalizeRelPath(relPath);
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    for (const key of [...this.overrideMap.keys()]) {
      if (key !== path && isAtOrBelow(key, path)) this.overrideMap.delete(key);
    }
    // A file override on an ancestor becomes a deletion: the folder replaces that file.
    for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) {
      if (this.overrideMap.get(dir)) this.overrideMap.set(dir, null);
    }
    this.overrideMap.set(path, bytes);
  }

  /** Sets an in-memory deletion of `relPath` (a folder with everything below it). */
  remove(relPath: string): void {
    const path = normalizeRelPath(relPath);
    for (const key of [...this.overrideMap.keys()]) if (isAtOrBelow(key, path)) this.overrideMap.delete(key);
    this.overrideMap.set(path, null);
  }

  /** Drops the override of `relPath` (the layers show through again). */
  revert(relPath: string): void {
    this.overrideMap.delete(normalizeRelPath(relPath));
  }

  overrides(): ReadonlyMap<string, Buffer | null> {
    return this.overrideMap;
  }

  /** The record of what the branch started from (see base.ts). */
  private base(): Promise<BaseRecord> {
    this.baseRecord ??= BaseRecord.open(this.dir, this.workspaceRoot, this.createdAt);
    return this.baseRecord;
  }

  /**
   * A sync point (before and after every command in the branch): records the base of each path the
   * branch's layer touched since the last one, then starts a new window (see BaseRecord.sync).
   */
  async syncBases(): Promise<void> {
    this.assertLive();
    const base = await this.base();
    const copy = base.copyState();
    // copy modes: one walk of the copy and the user's folder serves both steps
    const walked = copy ? await bothTrees(this.view.layers) : undefined;
    const touched = await touchedPaths(this.view.layers, new Map(), copy, walked);
    await base.sync(touched.keys());
    // copy modes: untouched files follow the user's folder from one sync point to the next
    if (copy)
      await base.noteRefreshed(await refreshCopy(this.view.layers, copy, (rel) => base.has(rel), walked));
  }

  /**
   * The door (BranchFiles) read `rel` whole from `layer`: when that is what the branch shows of the
   * user's folder (the lower layer; in copy modes a file of the copy the branch has not touched), what
   * the agent read is its base if it writes the file later.
   */
  async noteSeen(relPath: string, bytes: Buffer, mode: "100644" | "100755", layer: string): Promise<void> {
    const rel = normalizeRelPath(relPath);
    const base = await this.base();
    if ((await this.userSide()) !== layer) return;
    if (layer === this.spec.tree && (await this.touchedInLayer(rel))) return;
    base.noteSeen(rel, bytes, mode);
  }

  /** Where the branch shows the user's content of untouched paths: their folder, or the copy. */
  private async userSide(): Promise<string> {
    return (await this.base()).copyState() ? this.spec.tree : this.workspaceRoot;
  }

  /** Whether the branch's layer holds something of its own at `rel` (a command may have written it). */
  private async touchedInLayer(rel: string): Promise<boolean> {
    const copy = (await this.base()).copyState();
    if (!copy) return (await lstatOrUndefined(join(this.spec.upper, rel))) !== undefined;
    const info = await lstatOrUndefined(join(this.spec.tree, rel));
    return info !== undefined && (info.isDirectory() || branchMade(rel, { stats: info }, copy));
  }

  /**
   * The door is about to write or delete `rel` (a folder: everything below it): records the base of
   * each path the branch has not touched yet — what the branch shows there now. A path the branch's
   * layer holds (a command wrote it) gets its base at a sync point first.
   */
  async recordBase(relPath: string): Promise<void> {
    const rel = normalizeRelPath(relPath);
    const base = await this.base();
    if (await this.touchedInLayer(rel)) await this.syncBases();
    const from = await this.userSide();
    const paths = [rel, ...(await filesBelow(from, rel))];
    await base.captureForWrite(
      paths.filter((path) => !base.has(path)),
      from,
    );
  }

  /**
   * What the branch did: every path it changed (its layer and overrides together), with the content it
   * started from (its recorded base) and the content it holds now. A path the branch touched and that
   * holds its base again is no change. Sorted by path.
   */
  async recordedChanges(): Promise<RecordedChange[]> {
    const base = await this.base();
    await this.syncBases();
    const touched = await touchedPaths(this.view.layers, this.overrideMap, base.copyState());
    // overrides set without the door (e.g. grading): their base is what the branch showed there
    await base.captureForWrite(
      [...touched.keys()].filter((path) => !base.has(path)),
      await this.userSide(),
    );
    const out: RecordedChange[] = [];
    for (const [path, side] of touched) {
      const stored = base.stored(path);
      const state = base.state(path);
      if (!stored || !state) continue;
      const branch = side ? await sideState(side) : ({ kind: "absent" } as const);
      if (await sameAsBase(stored, branch)) continue;
      out.push({ path, base: state, branch });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** What `rel` holds in the branch's view (a final link not followed). */
  async fileState(relPath: string): Promise<FileState> {
    const rel = normalizeRelPath(relPath);
    const entry = await this.view.resolve(rel, false);
    if (entry?.kind === "symlink" && entry.layer)
      return { kind: "link", target: await readlinkIn(entry.layer, rel) };
    if (entry?.kind !== "file") return { kind: "absent" };
    const size = (await this.view.size(rel)) ?? 0;
    const mode = entry.stats && entry.stats.mode & 0o111 ? "100755" : "100644";
    return {
      kind: "file",
      mode,
      size,
      load: async () => {
        const bytes = await this.view.read(rel);
        if (!bytes) throw new ShadowError("BRANCH_NOT_FOUND", `${rel} is gone from branch ${this.id}`);
        return bytes;
      },
    };
  }

  /** Takes these states as the bases of their paths (a rebase: the user's content it merged). */
  async setBases(entries: readonly { rel: string; state: FileState }[]): Promise<void> {
    await (await this.base()).setBases(entries);
  }

  /** Paths the branch touched that the user changed in their folder since (see BaseRecord.userChanged). */
  async userChanges(): Promise<string[]> {
    return (await this.base()).userChanged();
  }

  /** The paths the branch changed (see recordedChanges). */
  async changes(): Promise<BranchChange[]> {
    return (await this.recordedChanges()).map(({ path, base, branch }) => ({
      path,
      kind: branch.kind === "absent" ? "deleted" : base.kind === "absent" ? "added" : "modified",
    }));
  }

  /**
   * A git-style unified diff of what the agent did: from each changed file's recorded base to the
   * branch (of `changes`, when the caller has them from recordedChanges() already). Files whose base is
   * unknown (see base.ts) are left out (recordedChanges() has them).
   */
  async diff(options: DiffOptions = {}, changes?: readonly RecordedChange[]): Promise<string> {
    const details = (changes ?? (await this.recordedChanges())).flatMap((change) => {
      const detail = change.base.kind === "unknown" ? undefined : changeDetail(change);
      return detail ? [detail] : [];
    });
    return formatDiff(details, (rel) => this.view.read(rel), options);
  }

  /**
   * Writes the overrides into the branch's own layer (never into the user's folder) and clears them, so
   * that processes of the branch see them. Overlay branches are written through their mount, which
   * keeps whiteouts and copy-ups right and is seen at once by running processes. No symlink is followed
   * on the way (src/workspace/rooted.ts): an override behind one (a folder a command replaced with a
   * link) is dropped and returned with the reason, never written through the link.
   */
  async materialize(): Promise<MaterializeRefusal[]> {
    this.assertLive();
    if (this.overrideMap.size === 0) return [];
    // once written into the layer they would look like a command's changes: their bases come first
    const record = await this.base();
    const pending = [...this.overrideMap.keys()].filter((path) => !record.has(path));
    for (const path of pending) await this.recordBase(path);
    const sorted = [...this.overrideMap.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // A FUSE mount serves only processes inside its user namespace: write through a process there.
    if (this.mode === "fuse-overlayfs") return this.materializeInBranch(sorted);
    const base = this.mode === "overlay" ? await this.holder.mountedRoot() : this.spec.tree;
    const refused: MaterializeRefusal[] = [];
    for (const [path, value] of sorted) {
      if (value !== null) continue;
      await this.fsStep(path, refused, () => removeIn(base, path));
      this.overrideMap.delete(path);
    }
    for (const [path, value] of sorted) {
      if (value === null) continue;
      await this.fsStep(path, refused, () => writeIn(base, path, value));
      this.overrideMap.delete(path);
    }
    return refused;
  }

  private async materializeInBranch(sorted: [string, Buffer | null][]): Promise<MaterializeRefusal[]> {
    const staging = join(this.dir, "staging");
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { mode: PRIVATE_DIR });
    try {
      const ops: string[] = [];
      const order: string[] = [];
      for (const [path, value] of sorted) {
        if (value !== null) continue;
        ops.push("d", path, "");
        order.push(path);
      }
      let n = 0;
      for (const [path, value] of sorted) {
        if (value === null) continue;
        const file = join(staging, String(n++));
        await writeFile(file, value);
        ops.push("w", path, file);
        order.push(path);
      }
      const child = this.spawn("sh", ["-c", MATERIALIZE_SCRIPT, "sh", ...ops], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      child.stdout?.setEncoding("utf8");
      child.stdout?.on("data", (chunk: string) => {
        stdout += chunk;
      });
      let stderr = "";
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => {
        stderr += chunk;
      });
      const code = await new Promise<number | null>((done, fail) => {
        child.once("error", fail);
        child.once("close", (status) => done(status));
      });
      if (code !== 0) {
        if (stderr.includes("Value too large for defined data type")) {
          throw new ShadowError("UNMAPPED_OWNER", unmappedOwnerMessage("an override"));
        }
        throw new ShadowError(
          "MOUNT_FAILED",
          `cannot write the overrides into branch ${this.id}: ${helperReason(stderr || `exit status ${code}`)}`,
        );
      }
      this.overrideMap.clear();
      return stdout
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => ({ path: order[Number(line) - 1] ?? "?", reason: "a symlink stands on the way" }));
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async fsStep(path: string, refused: MaterializeRefusal[], step: () => Promise<unknown>) {
    try {
      await step();
    } catch (error) {
      if (error instanceof FileAccessError && error.code !== "INVALID_PATH") {
        refused.push({ path, reason: error.message });
        return;
      }
      const code = errnoCode(error);
      if (code === "EOVERFLOW")
        throw new ShadowError("UNMAPPED_OWNER", unmappedOwnerMessage(path), { cause: error });
      throw new ShadowError(
        "MOUNT_FAILED",
        `cannot write ${path} in branch ${this.id}: ${code ?? String(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  /**
   * Starts a process that sees the branch mounted at the workspace's own path; what it writes lands in
   * the branch's layer. Overrides are not visible to it until materialize(). If the branch cannot be
   * mounted, the process exits 125 with the reason on stderr.
   */
  spawn(
    command: string,
    args: string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv } & Omit<SpawnInBranchOptions, "cwd" | "env"> = {},
  ): ChildProcess {
    this.assertLive();
    const child = spawnInBranch(this.spec, this.holder, command, args, options);
    this.children.add(child);
    child.once("exit", () => this.children.delete(child));
    child.once("error", () => this.children.delete(child));
    return child;
  }

  /**
   * How the sandbox (src/sandbox) shows this branch to a command: the holder's pid, whose namespaces have
   * the branch mounted at the workspace's path (overlay modes; resolves once it is mounted), a copy to
   * bind at that path, or the copy's own path when bind mounts are unavailable.
   */
  async sandboxView(): Promise<BranchSandboxView> {
    this.assertLive();
    const root = this.spec.root;
    if (this.spec.mode === "overlay" || this.spec.mode === "fuse-overlayfs") {
      // waits on the holder's mount table: a FUSE mount cannot be looked at from outside its namespace
      return { kind: "join", pid: await this.holder.mounted(), root };
    }
    if (this.spec.bind) return { kind: "bind", source: this.spec.tree, root };
    return { kind: "path", path: this.spec.tree, root };
  }

  /** The pid of the process holding the branch's mount (overlay modes), while there is one. */
  get mountPid(): number | undefined {
    return this.holder.running ? this.holder.currentPid : undefined;
  }

  /** Unmounts the branch (its data stays on disk); a later spawn() mounts it again. */
  async close(): Promise<void> {
    await this.holder.stop();
    // closed, the branch is no process's: another may open it (to accept it), gc may age it
    if (this.ownerPid === process.pid && !this.discarded)
      await writeRecord(this.dir, { ...this.record, ownerPid: 0, ownerStart: undefined }).catch(() => {});
  }

  /** Kills the branch's processes, unmounts it and deletes its directory. */
  async discard(): Promise<void> {
    this.discarded = true;
    for (const child of this.children) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }
    this.children.clear();
    await this.holder.stop();
    await removeBranchDir(this.dir);
  }

  get isDiscarded(): boolean {
    return this.discarded;
  }

  private assertLive(): void {
    if (this.discarded) throw new ShadowError("BRANCH_NOT_FOUND", `branch ${this.id} has been discarded`);
  }
}

async function resolveWorkspace(workspaceRoot: string): Promise<string> {
  try {
    return await resolveRoot(workspaceRoot);
  } catch (error) {
    if (error instanceof WorkspaceError) {
      throw new ShadowError("WORKSPACE_MISSING", error.message, { cause: error });
    }
    throw error;
  }
}

async function realOrResolved(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return resolve(path);
  }
}

/** The data directory, refusing one inside the workspace (a branch is mounted over the workspace). */
async function checkedDataDir(realRoot: string, env: NodeJS.ProcessEnv): Promise<string> {
  const data = dataDir(env);
  const real = await realOrResolved(data);
  if (real === realRoot || real.startsWith(`${realRoot}/`)) {
    throw new ShadowError(
      "DATA_DIR_INSIDE_WORKSPACE",
      `the umbra data directory ${real} is inside the workspace ${realRoot}; set UMBRA_HOME elsewhere`,
    );
  }
  return data;
}

function copyTree(from: string, to: string, reflink: boolean): Promise<void> {
  return new Promise((done, fail) => {
    execFile(
      "cp",
      ["-a", `--reflink=${reflink ? "auto" : "never"}`, "--", `${from}/.`, `${to}/`],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (!error) {
          done();
          return;
        }
        const reason = stderr.trim().split("\n")[0] || error.message;
        fail(
          new ShadowError("COPY_FAILED", `cannot copy the workspace into the branch: ${reason}`, {
            cause: error,
          }),
        );
      },
    );
  });
}

/**
 * Forks a workspace. Overlay modes only create the branch's directory and branch.json (the cost does not
 * grow with the workspace); copy modes copy the whole folder now.
 */
export async function fork(workspaceRoot: string, options: ForkOptions = {}): Promise<Branch> {
  const env = options.env ?? process.env;
  const realRoot = await resolveWorkspace(workspaceRoot);
  const setting = options.mode ?? loadConfig({ workspaceRoot: realRoot, env }).shadow.mode;
  const data = await checkedDataDir(realRoot, env);
  const choice = await chooseMode(setting, {
    probeDir: join(data, "tmp"),
    workspaceRoot: realRoot,
    dataDir: data,
  });
  const { dir, record } = await createBranchDir(realRoot, choice.mode, env);
  let base: BaseRecord;
  try {
    base = await BaseRecord.create(dir, realRoot);
    if (choice.mode === "reflink" || choice.mode === "copy") {
      await copyTree(realRoot, branchPaths(dir).tree, choice.mode === "reflink");
      await base.markCopied();
    }
  } catch (error) {
    await removeBranchDir(dir);
    throw error;
  }
  return new Branch(record, dir, {
    ...(choice.warning ? { warning: choice.warning } : {}),
    bind: choice.bind,
    base,
  });
}

/**
 * Opens a branch from disk (after a restart or a crash) and makes this process its owner.
 * BRANCH_NOT_FOUND when there is none; CORRUPT_BRANCH when its branch.json or layers are unusable.
 */
export async function openBranch(
  workspaceRoot: string,
  id: string,
  options: ForkOptions = {},
): Promise<Branch> {
  const env = options.env ?? process.env;
  const realRoot = await resolveWorkspace(workspaceRoot);
  if (!isBranchId(id))
    throw new ShadowError("BRANCH_NOT_FOUND", `no branch ${JSON.stringify(id)} in ${realRoot}`);
  const dir = join(branchesRoot(realRoot, env), id);
  const record = await readRecord(dir);
  if (record.id !== id || record.workspaceRoot !== realRoot) {
    throw new ShadowError(
      "CORRUPT_BRANCH",
      `${branchPaths(dir).record} names another branch or workspace; the branch is stale and can be removed`,
    );
  }
  const paths = branchPaths(dir);
  const layers =
    record.mode === "overlay" || record.mode === "fuse-overlayfs" ? [paths.upper, paths.work] : [paths.tree];
  for (const layer of layers) {
    const info = await lstat(layer).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new ShadowError(
        "CORRUPT_BRANCH",
        `branch ${id} has no ${layer}; the branch is stale and can be removed`,
      );
    }
  }
  // a branch another live process owns (an agent working in it) is read, never taken from it
  const taken = !ownerAlive(record) || record.ownerPid === process.pid;
  const owned = taken
    ? ownedRecord({
        id: record.id,
        workspaceRoot: record.workspaceRoot,
        mode: record.mode,
        createdAt: record.createdAt,
      })
    : record;
  if (taken) await writeRecord(dir, owned);
  let bind = true;
  if (record.mode === "reflink" || record.mode === "copy") {
    const data = await checkedDataDir(realRoot, env);
    bind = (await probeModes(join(data, "tmp"))).bind.ok;
  }
  return new Branch(owned, dir, { bind });
}

/** A branch found on disk. */
export interface BranchInfo {
  id: string;
  dir: string;
  mode?: BranchMode;
  createdAt?: string;
  ownerPid?: number;
  ownerAlive: boolean;
  /** The owner is gone (or branch.json is unusable): gc() removes it once old enough. */
  stale: boolean;
  /** Why branch.json is unusable. */
  problem?: string;
}

export async function listBranches(
  workspaceRoot: string,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<BranchInfo[]> {
  const realRoot = await resolveWorkspace(workspaceRoot);
  const stored = await listStored(realRoot, options.env ?? process.env);
  return stored.map((entry) => ({
    id: entry.id,
    dir: entry.dir,
    ...(entry.record
      ? { mode: entry.record.mode, createdAt: entry.record.createdAt, ownerPid: entry.record.ownerPid }
      : {}),
    ownerAlive: entry.ownerAlive,
    stale: !entry.ownerAlive,
    ...(entry.problem ? { problem: entry.problem } : {}),
  }));
}

/** Kills the branch's processes, unmounts it and deletes its directory. */
export function discard(branch: Branch): Promise<void> {
  return branch.discard();
}

/** Deletes a branch by id, e.g. a stale one with a corrupt branch.json. */
export async function removeBranch(
  workspaceRoot: string,
  id: string,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const realRoot = await resolveWorkspace(workspaceRoot);
  if (!isBranchId(id))
    throw new ShadowError("BRANCH_NOT_FOUND", `no branch ${JSON.stringify(id)} in ${realRoot}`);
  await removeBranchDir(join(branchesRoot(realRoot, options.env ?? process.env), id));
}

export interface GcOptions {
  env?: NodeJS.ProcessEnv;
  /** Overrides `shadow.gcAfterHours`. */
  maxAgeHours?: number;
  now?: number;
}

export interface GcResult {
  removed: string[];
  kept: string[];
  /** One line per corrupt branch met (each is removed once old enough). */
  problems: string[];
}

/**
 * Removes the branches whose owner process is gone and that are older than `shadow.gcAfterHours`
 * (corrupt ones included, aged by their directory's mtime).
 */
export async function gc(workspaceRoot: string, options: GcOptions = {}): Promise<GcResult> {
  const env = options.env ?? process.env;
  const realRoot = await resolveWorkspace(workspaceRoot);
  const maxAgeHours = options.maxAgeHours ?? loadConfig({ workspaceRoot: realRoot, env }).shadow.gcAfterHours;
  const now = options.now ?? Date.now();
  const result: GcResult = { removed: [], kept: [], problems: [] };
  for (const entry of await listStored(realRoot, env)) {
    if (entry.problem) result.problems.push(`${entry.id}: ${entry.problem}`);
    const old = now - entry.createdMs >= maxAgeHours * 3_600_000;
    if (entry.ownerAlive || !old) {
      result.kept.push(entry.id);
      continue;
    }
    await removeBranchDir(entry.dir);
    result.removed.push(entry.id);
  }
  return result;
}

/** A git-style unified diff of what the branch did (base → branch); `git apply` accepts it. */
export function diff(branch: Branch, options: DiffOptions = {}): Promise<string> {
  return branch.diff(options);
}
