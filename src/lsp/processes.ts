import { type ChildProcess, spawn } from "node:child_process";
import type { Launcher } from "./types.js";

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills a server and, when it leads a process group (the default launcher makes one), its children. */
export function killProcessTree(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (child.pid !== undefined) {
    try {
      process.kill(-child.pid, signal);
      return;
    } catch {
      // not a group leader: kill the process alone
    }
  }
  child.kill(signal);
}

/**
 * Remembers a server process until it exits, so that servers never outlive this Node.js process: on
 * exit, the ones still running are killed.
 */
export function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once("exit", () => live.delete(child));
  child.once("error", () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const running of live) killProcessTree(running);
    });
  }
}

/** Server processes started by this Node.js process that are still running. */
export function liveServerPids(): number[] {
  return [...live].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

/** Starts the server as a plain child process, in its own process group, with piped stdio. */
export const spawnLauncher: Launcher = (spec) =>
  spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
