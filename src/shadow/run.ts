import type { Branch } from "./branch.js";
import { ShadowError, unmappedOwnerMessage } from "./errors.js";
import { HELPER_SETUP_FAILED, helperReason } from "./helper.js";

export interface RunOptions {
  /** Kill the whole process tree after this long (default: no limit). */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (default: empty stdin). */
  input?: string | Buffer;
  /** Working directory: absolute, or relative to the workspace root (default: the root). */
  cwd?: string;
  /** Keep at most this many bytes of stdout and of stderr (the last ones; default 16 MiB). */
  maxOutputBytes?: number;
}

export interface RunResult {
  /** Exit status; null when killed by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Explanations of failures caused by the branch itself (e.g. an unmapped file owner). */
  notes: string[];
}

const EOVERFLOW_TEXT = "Value too large for defined data type";

class Tail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 1) {
      const first = this.chunks.shift();
      this.size -= first?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString("utf8");
  }
}

/**
 * Runs a command with the branch mounted at the workspace's path and collects its output. Builds, caches
 * and outputs land in the branch's layer; the user's folder is not touched. On timeout the whole process
 * group is killed. A branch that cannot be mounted is a ShadowError (MOUNT_FAILED).
 */
export async function run(
  branch: Branch,
  command: string,
  args: string[] = [],
  options: RunOptions = {},
): Promise<RunResult> {
  // sync points of the branch's recorded base around the command (see base.ts)
  await branch.syncBases();
  try {
    return await runInBranch(branch, command, args, options);
  } finally {
    await branch.syncBases();
  }
}

function runInBranch(
  branch: Branch,
  command: string,
  args: string[],
  options: RunOptions,
): Promise<RunResult> {
  const limit = options.maxOutputBytes ?? 16 * 1024 * 1024;
  const child = branch.spawn(command, args, {
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const stdout = new Tail(limit);
  const stderr = new Tail(limit);
  child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
  let timedOut = false;
  const killTree = (): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  };
  const timer =
    options.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          killTree();
        }, options.timeoutMs)
      : undefined;
  child.stdin?.on("error", () => {
    // the command may exit without reading its input
  });
  child.stdin?.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      if (timer) clearTimeout(timer);
      reject(
        new ShadowError("MOUNT_FAILED", `cannot start ${command} in branch ${branch.id}: ${error.message}`, {
          cause: error,
        }),
      );
    });
    child.once("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      // The process group may outlive its leader (background jobs): it goes with the run.
      if (timedOut) killTree();
      const err = stderr.text();
      if (code === HELPER_SETUP_FAILED && err.startsWith("umbra-helper:")) {
        reject(new ShadowError("MOUNT_FAILED", `cannot run in branch ${branch.id}: ${helperReason(err)}`));
        return;
      }
      const notes: string[] = [];
      if (code !== 0 && err.includes(EOVERFLOW_TEXT)) notes.push(unmappedOwnerMessage("a file"));
      resolve({ exitCode: code, signal, stdout: stdout.text(), stderr: err, timedOut, notes });
    });
  });
}
