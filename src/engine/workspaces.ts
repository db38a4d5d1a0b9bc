import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { accessRulesFor } from "../agent/tools/files.js";
import type { ToolContext } from "../agent/tools/types.js";
import { loadConfig, type UmbraConfig } from "../config/config.js";
import { networkAllowlist } from "../config/network-rules.js";
import { workspaceDir } from "../config/paths.js";
import { privateDir } from "../config/private.js";
import { NotIndexedError } from "../index/embedders.js";
import { type IndexProgress, indexWorkspace } from "../index/indexer.js";
import { type OpenedIndex, openIndex } from "../index/open.js";
import { warmSearch } from "../index/search/snapshot.js";
import { watchWorkspace } from "../index/watcher.js";
import { branchLauncher } from "../lsp/branch-launcher.js";
import { LspHost } from "../lsp/index.js";
import {
  type Approver,
  allowlistApprover,
  commandLine,
  firstApproving,
  openSandbox,
  type WorkspaceSandbox,
} from "../sandbox/index.js";
import {
  type Branch,
  type BranchFiles,
  type BranchInfo,
  fork,
  listBranches,
  openBranch,
  userFolderFiles,
} from "../shadow/index.js";
import { resolveRoot } from "../workspace/root.js";
import type { ApprovalItem, BranchSummary, Caller, CallOptions, IndexFreshness, Progress } from "./api.js";
import { shownRequest } from "./approvals.js";
import { EngineError } from "./errors.js";
import { PreviewCache } from "./previews.js";
import { Recent, type RecentAges } from "./recent.js";

/** A command's network request, for the page: where it runs and what it is (see approvals.ts). */
export type PageQuestion = Pick<ApprovalItem, "root" | "branch" | "command" | "reason" | "rule">;

export interface HubOptions {
  env: NodeJS.ProcessEnv;
  watch: boolean;
  onWarning: (message: string) => void;
  /**
   * Asks the user on the web page (the approvals queue) for a client that cannot ask its own user;
   * false when no page can answer. Default: nobody is asked (no).
   */
  askOnPage?: (caller: Caller, question: PageQuestion) => Promise<boolean>;
  /** A branch no request worked in for this long is let go (default 30 s). */
  branchIdleMs?: number;
}

const BRANCH_IDLE_MS = 30_000;

/**
 * How long a sandbox policy (what is hidden, protected, writable) and the file doors built on it are
 * used for reads before they are worked out again (src/engine/recent.ts); a command always gets one
 * worked out for it. The doors also check the ignore rules as they are at every call. Working one out
 * walks the workspace (~0.1 s of the engine's thread at 12k files), so while the watcher reports the
 * workspace's changes a policy is renewed after a change (at most every POLICY_AFTER_CHANGE_MS), and on
 * a long timer only for what no event reports (credentials in the home folder, a missed event); without
 * events, on the short timer.
 */
const POLICY_MAX_AGE_MS = 5_000;
const WATCHED_POLICY_MAX_AGE_MS = 60_000;
const POLICY_AFTER_CHANGE_MS = 2_000;

/** Who made a branch, as the client said. */
interface Maker {
  label?: string;
  client?: string;
}

/** A branch the engine holds open; one request at a time works in it. */
interface Held {
  branch: Branch;
  files: Recent<BranchFiles>;
  queue: Promise<unknown>;
  /** Let go after an idle time: written out, unmounted and no longer owned (another process may take it). */
  released: boolean;
  idle?: NodeJS.Timeout;
}

/** An open index, shared by the searches running on it; a newer one replaces it after a sync. */
interface IndexSlot {
  index: OpenedIndex;
  users: number;
  retired: boolean;
}

/**
 * One workspace the engine has open: its configuration, its index (kept fresh by a watcher), the
 * sandbox policies, the language servers (one host, running in a branch of its own, serving every
 * branch by turns) and the branches clients work in.
 */
export class Workspace {
  private settings: { config: UmbraConfig; key: string; warnings: string[] };
  private slot: IndexSlot | undefined;
  private opening: Promise<IndexSlot> | undefined;
  private readonly buildListeners = new Set<(progress: Progress) => void>();
  private readonly stopWatching = new AbortController();
  private watching = false;
  syncing = false;
  private readonly sandboxes = new Map<boolean, Recent<WorkspaceSandbox>>();
  private readonly warned = new Set<string>();
  private lspHost: Promise<{ host: LspHost; serverBranch: Branch } | undefined> | undefined;
  private readonly held = new Map<string, Held>();
  /** Branches an agent session of this engine works in: no request may open them meanwhile. */
  private readonly claimed = new Map<string, string>();
  private readonly makers = new Map<string, Maker>();
  /** File texts for search previews (src/engine/previews.ts). */
  readonly previews: PreviewCache;
  /** Whether the watcher's file events are coming (policies then follow them, not a short timer). */
  private eventsLive = false;
  private readonly policyAges: RecentAges = {
    max: () => (this.eventsLive ? WATCHED_POLICY_MAX_AGE_MS : POLICY_MAX_AGE_MS),
    afterChange: POLICY_AFTER_CHANGE_MS,
  };
  private readonly userFiles = new Recent(() => this.makeFolderFiles(), this.policyAges);
  private counts: { of: OpenedIndex; files: number; chunks: number } | undefined;

  constructor(
    readonly root: string,
    private readonly options: HubOptions,
  ) {
    this.previews = new PreviewCache(root);
    this.settings = this.load();
    for (const warning of this.settings.warnings) options.onWarning(warning);
  }

  get config(): UmbraConfig {
    return this.settings.config;
  }

  private load(): { config: UmbraConfig; key: string; warnings: string[] } {
    const warnings: string[] = [];
    const config = loadConfig({
      workspaceRoot: this.root,
      env: this.options.env,
      onWarning: (message) => warnings.push(message),
    });
    return { config, key: JSON.stringify(config), warnings };
  }

  /**
   * Reads the configuration again (before every request: the user may have changed theirs, the
   * repository its own); when it changed, the sandbox policies and the doors built from it are made anew.
   */
  refresh(): void {
    const fresh = this.load();
    if (fresh.key === this.settings.key) return;
    this.settings = fresh;
    for (const warning of fresh.warnings) this.options.onWarning(warning);
    this.sandboxes.clear();
    this.userFiles.clear();
    this.previews.clear();
    for (const held of this.held.values()) held.files.clear();
  }

  private filesOf(branch: Branch): Recent<BranchFiles> {
    return new Recent(
      () => this.sandbox(false).then(({ policy }) => branch.files(accessRulesFor(policy, this.root))),
      this.policyAges,
    );
  }

  /** A warning said once for the workspace, not at every policy worked out again. */
  private warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.options.onWarning(message);
  }

  get env(): NodeJS.ProcessEnv {
    return this.options.env;
  }

  /** How fresh the index is (the counts read once per opened index). */
  freshness(index: OpenedIndex): IndexFreshness {
    this.counts ??= { of: index, ...index.lexical.counts() };
    if (this.counts.of !== index) this.counts = { of: index, ...index.lexical.counts() };
    const lastSync = index.lexical.getMeta("lastSync");
    return {
      watched: this.watching,
      syncing: this.syncing,
      ...(lastSync ? { lastSync } : {}),
      files: this.counts.files,
      chunks: this.counts.chunks,
    };
  }

  get watched(): boolean {
    return this.watching;
  }

  // ---------------------------------------------------------------------------------------------
  // The index

  /**
   * Runs `use` on the workspace's open index (opened on first use, built first when `build` and there
   * is none). While it runs, a sync may replace the index; the old one closes once its last user is done.
   */
  async withIndex<T>(build: boolean, call: CallOptions, use: (index: OpenedIndex) => Promise<T>): Promise<T> {
    const slot = await this.openSlot(build, call);
    slot.users++;
    try {
      return await use(slot.index);
    } finally {
      slot.users--;
      if (slot.retired && slot.users === 0) slot.index.close();
    }
  }

  /**
   * The open index; a build, when one is needed, is shared by every caller waiting for it (each gets its
   * progress); a caller that stops waiting does not stop it for the others.
   */
  private async openSlot(build: boolean, call: CallOptions): Promise<IndexSlot> {
    if (this.slot) return this.slot;
    const listener = call.onProgress;
    if (listener) this.buildListeners.add(listener);
    this.opening ??= (async () => {
      let index: OpenedIndex;
      try {
        index = await openIndex(this.root, this.config, this.env);
      } catch (error) {
        if (!(error instanceof NotIndexedError) || !build) throw error;
        await this.sync((progress) => {
          for (const each of this.buildListeners) each(progress);
        });
        index = await openIndex(this.root, this.config, this.env);
      }
      this.slot = { index, users: 0, retired: false };
      this.watch();
      return this.slot;
    })().finally(() => {
      this.opening = undefined;
      this.buildListeners.clear();
    });
    try {
      return await abortable(this.opening, call.signal);
    } finally {
      if (listener) this.buildListeners.delete(listener);
    }
  }

  /** One incremental index run; the open index is replaced when it changed anything. */
  private async sync(onProgress?: (progress: Progress) => void) {
    this.syncing = true;
    try {
      const report = await indexWorkspace(this.root, {
        config: this.config,
        env: this.env,
        signal: this.stopWatching.signal,
        onWarning: this.options.onWarning,
        ...(onProgress
          ? {
              onProgress: ({ phase, done, total }: IndexProgress) =>
                onProgress({ message: `indexing: ${phase}`, done, total }),
            }
          : {}),
      });
      const c = report.changes;
      if (this.slot && c.added + c.modified + c.removed + c.renamed > 0) {
        const fresh = await openIndex(this.root, this.config, this.env);
        const old = this.slot;
        // ready before it is used: the search after an edit answers as fast as the one before it
        try {
          warmSearch(fresh, old.index);
        } catch (error) {
          fresh.close();
          throw error;
        }
        this.slot = { index: fresh, users: 0, retired: false };
        old.retired = true;
        if (old.users === 0) old.index.close();
      }
      return report;
    } finally {
      this.syncing = false;
    }
  }

  private watch(): void {
    if (!this.options.watch || this.watching) return;
    this.watching = true;
    void watchWorkspace(this.root, {
      debounceMs: this.config.watch.debounceMs,
      intervalMs: this.config.watch.intervalMs,
      signal: this.stopWatching.signal,
      sync: () => this.sync(),
      onChange: () => this.changed(),
      onWatching: (live) => {
        this.eventsLive = live;
      },
      onError: (error) => {
        if (!this.stopWatching.signal.aborted)
          this.options.onWarning(`sync of ${this.root} failed: ${(error as Error).message.split("\n")[0]}`);
      },
    }).finally(() => {
      this.watching = false;
    });
  }

  /** The workspace changed: its policies and the doors built on them are renewed soon. */
  private changed(): void {
    for (const recent of this.sandboxes.values()) recent.changed();
    this.userFiles.changed();
    for (const held of this.held.values()) held.files.changed();
  }

  // ---------------------------------------------------------------------------------------------
  // Doors: the sandbox and the files

  /**
   * The sandbox of commands in this workspace, its policy worked out anew when older than a moment;
   * `fresh`: worked out now (every command gets that: what the user hid a second ago is hidden).
   */
  sandbox(network: boolean, fresh = false): Promise<WorkspaceSandbox> {
    let recent = this.sandboxes.get(network);
    if (!recent) {
      recent = new Recent(async () => {
        const sandbox = await openSandbox({
          workspace: this.root,
          config: this.config,
          flags: { mode: "workspace-write", network },
          env: this.env,
        });
        for (const warning of sandbox.warnings) this.warn(warning);
        return sandbox;
      }, this.policyAges);
      this.sandboxes.set(network, recent);
    }
    return fresh ? recent.fresh() : recent.get();
  }

  /** The read-only door on the user's own folder (same rules as a branch's). */
  folderFiles(): Promise<BranchFiles> {
    return this.userFiles.get();
  }

  private async makeFolderFiles(): Promise<BranchFiles> {
    const empty = join(workspaceDir(this.root, this.env), "engine-empty");
    await privateDir(empty);
    const { policy } = await this.sandbox(false);
    return userFolderFiles(this.root, accessRulesFor(policy, this.root), empty);
  }

  // ---------------------------------------------------------------------------------------------
  // Language servers: one host for the workspace, its servers in a branch of their own

  lsp(): Promise<LspHost | undefined> {
    this.lspHost ??= (async () => {
      const serverBranch = await fork(this.root, { env: this.env });
      try {
        const { launcher, warnings } = await branchLauncher(serverBranch, this.config, this.env);
        for (const warning of warnings) this.options.onWarning(warning);
        return { host: new LspHost({ config: this.config.lsp, launcher, env: this.env }), serverBranch };
      } catch (error) {
        await serverBranch.discard().catch(() => undefined);
        this.options.onWarning(
          `language servers are unavailable: ${(error as Error).message.split("\n")[0]}`,
        );
        return undefined;
      }
    })();
    return this.lspHost.then((entry) => entry?.host);
  }

  /** The language servers' state, when they were started. */
  async servers() {
    const entry = this.lspHost ? await this.lspHost : undefined;
    return entry?.host.status() ?? [];
  }

  // ---------------------------------------------------------------------------------------------
  // Branches

  async create(caller: Caller, label: string | undefined): Promise<BranchSummary> {
    const branch = await fork(this.root, { env: this.env });
    this.makers.set(branch.id, { client: caller.name, ...(label ? { label } : {}) });
    const held = this.hold(branch);
    this.idleLater(held);
    return this.summary(branch.id);
  }

  private hold(branch: Branch): Held {
    const held: Held = { branch, files: this.filesOf(branch), queue: Promise.resolve(), released: false };
    this.held.set(branch.id, held);
    return held;
  }

  /** The branch `id`, held by this engine (opened from disk when it holds it not: made earlier, or let go). */
  private async branch(id: string): Promise<Held> {
    const session = this.claimed.get(id);
    if (session)
      throw new EngineError(
        "BUSY",
        `branch ${id} is in use by agent session ${session} (stop it, or wait until it ends)`,
      );
    const found = this.held.get(id);
    if (found && !found.released && !found.branch.isDiscarded) return found;
    const info = (await listBranches(this.root, { env: this.env })).find((entry) => entry.id === id);
    if (!info || info.problem)
      throw new EngineError(
        "NOT_FOUND",
        `no branch ${JSON.stringify(id)} in this workspace${info?.problem ? ` (${info.problem})` : ""} (see branch_list)`,
      );
    if (info.ownerAlive && info.ownerPid !== process.pid)
      throw new EngineError("BUSY", `branch ${id} is in use by another process (pid ${info.ownerPid})`);
    const branch = await openBranch(this.root, id, { env: this.env });
    const again = this.held.get(id);
    if (again && !again.released && !again.branch.isDiscarded) {
      await branch.close().catch(() => undefined);
      return again;
    }
    return this.hold(branch);
  }

  /**
   * Runs `use` in branch `id`, after the requests before it in that branch: requests of one branch never
   * interleave (those of different branches run at once). What a request wrote lives in the branch's
   * layer when it ends, never only in this process's memory.
   */
  async inBranch<T>(id: string, use: (held: Held) => Promise<T>): Promise<T> {
    for (;;) {
      const held = await this.branch(id);
      clearTimeout(held.idle);
      const run = held.queue.then(async (): Promise<{ value: T } | undefined> => {
        if (held.released) return undefined;
        if (held.branch.isDiscarded) throw new EngineError("NOT_FOUND", `branch ${id} was discarded`);
        try {
          return { value: await use(held) };
        } finally {
          if (!held.branch.isDiscarded) await held.branch.materialize().catch(() => undefined);
        }
      });
      held.queue = run.catch(() => undefined);
      void held.queue.then(() => this.idleLater(held));
      const done = await run;
      if (done) return done.value;
    }
  }

  /** Lets the branch go once no request came for the idle time. */
  private idleLater(held: Held): void {
    clearTimeout(held.idle);
    held.idle = setTimeout(() => {
      held.queue = held.queue.then(() => this.release(held));
    }, this.options.branchIdleMs ?? BRANCH_IDLE_MS);
    held.idle.unref();
  }

  private async release(held: Held): Promise<void> {
    if (held.released) return;
    held.released = true;
    clearTimeout(held.idle);
    if (this.held.get(held.branch.id) === held) this.held.delete(held.branch.id);
    if (held.branch.isDiscarded) return;
    await held.branch.materialize().catch(() => undefined);
    await held.branch.close().catch(() => undefined);
  }

  /**
   * Branch `id` is an agent session's from now on: a hold of this engine's on it is let go first (what
   * its requests wrote is on disk), and requests are refused until `unclaim`.
   */
  async claim(id: string, session: string): Promise<void> {
    this.claimed.set(id, session);
    const held = this.held.get(id);
    if (held) {
      held.queue = held.queue.then(() => this.release(held));
      await held.queue;
    }
  }

  unclaim(id: string, session: string): void {
    if (this.claimed.get(id) === session) this.claimed.delete(id);
  }

  /**
   * Approves what the user's configuration allows: `sandbox.network.allowCommands` and the rules the user
   * saved for this workspace from the approvals queue (read at each request: a rule saved a moment ago counts).
   */
  allowlist(): Approver {
    return (request) => allowlistApprover(networkAllowlist(this.root, this.config, this.env))(request);
  }

  async discard(id: string): Promise<void> {
    await this.inBranch(id, async (held) => {
      await held.branch.discard();
      this.held.delete(id);
      this.makers.delete(id);
    });
  }

  /** What a branch list says of branch `id`: what this engine knows of it, else what is on disk (`info`). */
  private summary(id: string, info?: BranchInfo): BranchSummary {
    const held = this.held.get(id);
    const maker = this.makers.get(id);
    const mode = held?.branch.mode ?? info?.mode;
    const createdAt = held?.branch.createdAt ?? info?.createdAt;
    return {
      id,
      ...(mode ? { mode } : {}),
      ...(createdAt ? { createdAt } : {}),
      ...(maker?.label ? { label: maker.label } : {}),
      ...(maker?.client ? { client: maker.client } : {}),
      held: held !== undefined,
      busy: !held && info !== undefined && info.ownerAlive && info.ownerPid !== process.pid,
    };
  }

  /** Every branch of the workspace: those this engine holds, and those on disk (earlier engines, sessions). */
  async branches(): Promise<BranchSummary[]> {
    const lspEntry = this.lspHost ? await this.lspHost.catch(() => undefined) : undefined;
    const serverBranch = lspEntry?.serverBranch.id;
    const stored = await listBranches(this.root, { env: this.env });
    return stored.filter((info) => info.id !== serverBranch).map((info) => this.summary(info.id, info));
  }

  /** The file door of `held`, or of the user's folder (read-only) without one. */
  files(held: Held | undefined): Promise<BranchFiles> {
    return held ? held.files.get() : this.folderFiles();
  }

  /**
   * The tools' context in `held` (or in the user's folder, read-only): the shared index and language
   * servers, and network approval asked of `caller` (what the user's own config allows needs no asking).
   */
  async context(held: Held | undefined, caller: Caller, signal?: AbortSignal): Promise<ToolContext> {
    const allowed = this.allowlist();
    const branch = held?.branch.id ?? "";
    const ask: Approver = async (request) => {
      const answer = await caller.hooks.approveNetwork({
        // quoted as the terminal's question quotes it: the user approves exactly the words that run
        command: commandLine(request),
        ...(request.reason ? { reason: request.reason } : {}),
        branch,
      });
      if (answer !== undefined) return answer;
      const question = { root: this.root, branch, ...shownRequest(request) };
      return (await this.options.askOnPage?.(caller, question)) ?? false;
    };
    const files = await this.files(held);
    return {
      ...(held ? { branch: held.branch } : {}),
      files: async () => files,
      root: this.root,
      config: this.config,
      env: this.env,
      lsp: () => this.lsp(),
      searchIndex: () => this.withIndex(true, {}, async (index) => index),
      sandbox: (network) => this.sandbox(network, true),
      approver: firstApproving(allowed, ask),
      ...(signal ? { signal } : {}),
    };
  }

  async close(): Promise<void> {
    this.stopWatching.abort();
    const entry = this.lspHost ? await this.lspHost.catch(() => undefined) : undefined;
    if (entry) {
      await entry.host.shutdown().catch(() => undefined);
      await entry.serverBranch.discard().catch(() => undefined);
    }
    // each after the requests it has queued: what they wrote is written out before the branch is let go
    await Promise.all(
      [...this.held.values()].map((held) => {
        held.queue = held.queue.then(() => this.release(held));
        return held.queue;
      }),
    );
    this.held.clear();
    if (this.slot) {
      this.slot.retired = true;
      if (this.slot.users === 0) this.slot.index.close();
    }
  }
}

/** `promise`, or a rejection as soon as `signal` aborts (the work behind the promise goes on). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** A folder's device and inode (undefined: not a folder there now). */
function folderIdentity(path: string): string | undefined {
  const info = statSync(path, { throwIfNoEntry: false });
  return info?.isDirectory() ? `${info.dev}:${info.ino}` : undefined;
}

function sameFolder(identity: string, path: string): boolean {
  try {
    return folderIdentity(path) === identity;
  } catch {
    return false;
  }
}

/** Every workspace the engine has open, by root. */
export class WorkspaceHub {
  private readonly open = new Map<string, Promise<Workspace>>();
  /** Roots as front ends name them, with the folder they named when resolved. */
  private readonly named = new Map<string, { identity: string; workspace: Workspace }>();

  constructor(readonly options: HubOptions) {}

  /**
   * The workspace at `rootArg` (a folder; its real path is the key), opened on first use. The front ends
   * send the same root with every call: its real path is worked out once, and again when that folder
   * is gone or is another one now (same device and inode, checked with one stat).
   */
  async workspace(rootArg: string): Promise<Workspace> {
    const known = this.named.get(rootArg);
    if (known && sameFolder(known.identity, rootArg)) return known.workspace;
    let root: string;
    try {
      root = await resolveRoot(rootArg);
    } catch (error) {
      throw new EngineError("NOT_FOUND", (error as Error).message);
    }
    let found = this.open.get(root);
    if (!found) {
      found = Promise.resolve().then(() => new Workspace(root, this.options));
      found.catch(() => this.open.delete(root));
      this.open.set(root, found);
    }
    const workspace = await found;
    const identity = folderIdentity(rootArg);
    if (identity && workspace.root === realpathSync(rootArg))
      this.named.set(rootArg, { identity, workspace });
    return workspace;
  }

  /** The roots of the workspaces open now (real paths), sorted. */
  roots(): string[] {
    return [...this.open.keys()].sort();
  }

  async close(): Promise<void> {
    const all = await Promise.all([...this.open.values()].map((ws) => ws.catch(() => undefined)));
    this.open.clear();
    for (const ws of all) await ws?.close();
  }
}
