import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { PRIVATE_FILE } from "../config/private.js";
import { ShadowError } from "./errors.js";
import { helperPath, helperReason } from "./helper.js";
import type { BranchMode } from "./modes.js";

/** Where a branch lives on disk and how processes see it. */
export interface MountSpec {
  /** The user's folder (real path): lower layer, and the path processes see the branch at. */
  root: string;
  mode: BranchMode;
  upper: string;
  work: string;
  tree: string;
  holderLog: string;
  /** Copy modes: bind mounts work, so the copy can be shown at `root`. */
  bind: boolean;
}

export interface SpawnInBranchOptions {
  /** Working directory: absolute, or relative to the workspace root (default: the root). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  stdio?: StdioOptions;
  /** Start the process in its own process group (so that the whole tree can be killed). */
  detached?: boolean;
}

const READY_TIMEOUT_MS = 10_000;

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

async function lastLine(file: string): Promise<string | undefined> {
  try {
    const lines = (await readFile(file, "utf8")).trim().split("\n");
    return lines[lines.length - 1]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The process that keeps an overlay branch mounted (`umbra-helper hold`). Every process of the branch
 * joins its namespaces, so all of them — and Node, through /proc/PID/root — share one mount and see each
 * other's writes at once (separate overlay mounts of one upper layer do not). It exits when this process
 * does (its stdin closes) or on stop().
 */
export class Holder {
  private child: ChildProcess | undefined;

  constructor(private readonly spec: MountSpec) {}

  /** The holder's pid, starting it when needed (it may still be mounting: the helper waits for it). */
  pid(): number {
    const current = this.child;
    if (current?.pid !== undefined && current.exitCode === null && current.signalCode === null)
      return current.pid;
    const spec = this.spec;
    const log = openSync(spec.holderLog, "w", PRIVATE_FILE);
    let child: ChildProcess;
    try {
      child = spawn(
        helperPath(),
        [
          "hold",
          "--lower",
          spec.root,
          "--upper",
          spec.upper,
          "--work",
          spec.work,
          "--target",
          spec.root,
          "--mode",
          spec.mode,
        ],
        { cwd: "/", stdio: ["pipe", "ignore", log] },
      );
    } finally {
      closeSync(log);
    }
    child.on("error", () => {
      // reported through the exit status and the holder log
    });
    child.on("exit", () => {
      if (this.child === child) this.child = undefined;
    });
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    if (child.pid === undefined) {
      throw new ShadowError("MOUNT_FAILED", `cannot start ${helperPath()} hold`);
    }
    this.child = child;
    return child.pid;
  }

  /**
   * Starts the holder when needed and waits until it has the branch mounted: its mount table then has
   * one mount more at the workspace's path than ours. Returns its pid.
   */
  async mounted(): Promise<number> {
    const pid = this.pid();
    const child = this.child;
    const here = await mountsAt("self", this.spec.root);
    const started = Date.now();
    for (;;) {
      if ((await mountsAt(String(pid), this.spec.root)) > here) return pid;
      if (!child || child.exitCode !== null || child.signalCode !== null) {
        const reason = (await lastLine(this.spec.holderLog)) ?? "it exited";
        throw new ShadowError("MOUNT_FAILED", `cannot mount the branch: ${helperReason(reason)}`);
      }
      if (Date.now() - started > READY_TIMEOUT_MS) {
        throw new ShadowError(
          "MOUNT_FAILED",
          `the branch was not mounted within ${READY_TIMEOUT_MS / 1000} s`,
        );
      }
      await sleep(1);
    }
  }

  /**
   * The mounted branch seen from this process: `/proc/PID/root/<root>` (kernel overlayfs only: a FUSE
   * mount serves only processes inside its user namespace).
   */
  async mountedRoot(): Promise<string> {
    return `/proc/${await this.mounted()}/root${this.spec.root}`;
  }

  get currentPid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    const child = this.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Unmounts (the holder exits); processes that joined keep their view until they exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.stdin?.end();
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
    await exited;
    clearTimeout(timer);
  }
}

/** Undoes mountinfo's octal escapes (`\040` for a space). */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** How many mounts the mount table of a process (`self` or a pid) has at `target`. */
async function mountsAt(pid: string, target: string): Promise<number> {
  let table: string;
  try {
    table = await readFile(`/proc/${pid}/mountinfo`, "utf8");
  } catch {
    return 0;
  }
  let count = 0;
  for (const line of table.split("\n")) {
    const point = line.split(" ")[4];
    if (point !== undefined && unescapeMountField(point) === target) count++;
  }
  return count;
}

/** The working directory a process of the branch starts in (as seen inside the branch). */
function branchCwd(spec: MountSpec, cwd: string | undefined): string {
  if (cwd === undefined || cwd === "") return spec.root;
  return isAbsolute(cwd) ? cwd : join(spec.root, cwd);
}

/** Starts `command` so that it sees the branch mounted at the workspace's own path. */
export function spawnInBranch(
  spec: MountSpec,
  holder: Holder,
  command: string,
  args: readonly string[],
  options: SpawnInBranchOptions = {},
): ChildProcess {
  const cwd = branchCwd(spec, options.cwd);
  const common = {
    env: options.env ?? process.env,
    stdio: options.stdio ?? "pipe",
    detached: options.detached ?? false,
  };
  if (spec.mode === "overlay" || spec.mode === "fuse-overlayfs") {
    const pid = holder.pid();
    const argv = ["mount-exec", "--join", String(pid), "--target", spec.root, "--holder-log", spec.holderLog];
    return spawn(helperPath(), [...argv, "--cwd", cwd, "--", command, ...args], { ...common, cwd: "/" });
  }
  if (spec.bind) {
    const argv = ["mount-exec", "--mode", "bind", "--lower", spec.tree, "--target", spec.root, "--cwd", cwd];
    return spawn(helperPath(), [...argv, "--", command, ...args], { ...common, cwd: "/" });
  }
  // No bind mounts here: run in the copy itself, at its own path.
  const inside = relative(spec.root, cwd);
  const mapped =
    inside === "" || (!inside.startsWith("..") && !isAbsolute(inside)) ? join(spec.tree, inside) : cwd;
  return spawn(command, [...args], { ...common, cwd: mapped });
}
