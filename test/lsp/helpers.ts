import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type LspConfig, loadConfig } from "../../src/config/config.js";
import { branchLauncher } from "../../src/lsp/branch-launcher.js";
import { LspHost } from "../../src/lsp/host.js";
import type { DocumentSource } from "../../src/lsp/types.js";
import { type Branch, fork } from "../../src/shadow/index.js";

/** A branch held in memory: the user's folder plus overrides (path → content, null = deleted). */
export class MemoryBranch implements DocumentSource {
  readonly overrides = new Map<string, string | null>();

  constructor(
    readonly id: string,
    readonly workspaceRoot: string,
    overrides: Record<string, string | null> = {},
  ) {
    for (const [path, text] of Object.entries(overrides)) this.overrides.set(path, text);
  }

  async readText(relPath: string): Promise<string | undefined> {
    const override = this.overrides.get(relPath);
    if (override !== undefined) return override ?? undefined;
    try {
      return await readFile(join(this.workspaceRoot, relPath), "utf8");
    } catch {
      return undefined;
    }
  }

  async changes(): Promise<{ path: string; kind: "added" | "modified" | "deleted" }[]> {
    return [...this.overrides].map(([path, text]) => ({
      path,
      kind: text === null ? "deleted" : existsSync(join(this.workspaceRoot, path)) ? "modified" : "added",
    }));
  }
}

/** Writes `files` (path → content) under `root`. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** Whether a process with this pid is running. */
export function isRunning(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Timeouts for tests of real servers, generous enough for a heavily loaded machine. */
export const LOADED_MACHINE: Partial<LspConfig> = { requestTimeoutMs: 120_000, lintTimeoutMs: 180_000 };

/** For vi.setConfig in test files of real servers: a test may wait that long for a server. */
export const REAL_SERVER_TEST_TIMEOUTS = { testTimeout: 600_000, hookTimeout: 300_000 };

/**
 * Language servers as the product runs them (`umbra lint`, the agent): one host whose servers start in
 * a shadow branch of `root` through the sandboxed branch launcher. `branch()` forks further branches of
 * the same workspace, each with its own in-memory edits, served by the same servers.
 */
export class SandboxedWorkspace {
  private readonly branches: Branch[] = [];
  private handedOut = false;

  private constructor(
    readonly root: string,
    readonly host: LspHost,
    private readonly serverBranch: Branch,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.branches.push(serverBranch);
  }

  static async open(
    root: string,
    options: { env?: NodeJS.ProcessEnv; config?: Partial<LspConfig> } = {},
  ): Promise<SandboxedWorkspace> {
    // Branches live in a data folder of this test file's own (the process is this file's alone).
    process.env.UMBRA_HOME ??= await mkdtemp(join(tmpdir(), "umbra-lsp-home-"));
    const env = options.env ?? process.env;
    const config = loadConfig({ workspaceRoot: root, env });
    const branch = await fork(root, { env });
    const { launcher } = await branchLauncher(branch, config, env);
    // A loaded machine may take far longer than the defaults to settle a lint: results must not come
    // back partial for it.
    const host = new LspHost({
      config: { ...config.lsp, ...LOADED_MACHINE, ...options.config },
      launcher,
      env,
    });
    return new SandboxedWorkspace(root, host, branch, env);
  }

  /**
   * A branch of the workspace holding `overrides` (path → content) in memory: the first call gets the
   * branch the servers run in, later calls fork further ones.
   */
  async branch(overrides: Record<string, string> = {}): Promise<Branch> {
    const branch = this.handedOut ? await fork(this.root, { env: this.env }) : this.serverBranch;
    if (this.handedOut) this.branches.push(branch);
    this.handedOut = true;
    for (const [path, text] of Object.entries(overrides)) branch.write(path, text);
    return branch;
  }

  /** Stops the servers (checking none is left running) and discards every branch. */
  async close(): Promise<void> {
    const pids = this.host.status().map((s) => s.pid);
    await this.host.shutdown();
    for (const branch of this.branches) await branch.discard();
    if (pids.some(isRunning)) throw new Error(`language servers still running: ${pids.join(", ")}`);
  }
}
