import type { Branch } from "../shadow/branch.js";
import type { SandboxNote } from "./explain.js";

/** How much a sandboxed command may change: nothing, the workspace (and writable roots), or everything. */
export type SandboxMode = "read-only" | "workspace-write" | "full-access";

/** A folder (absolute, symlink-free) every entry of which is hidden but `keep` (names, sorted). */
export interface HiddenMask {
  folder: string;
  keep: string[];
}

/** What a sandboxed command may see and do. Paths are absolute and free of symlinks. */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** absolute, symlink-free */
  workspace: string;
  /** absolute; in workspace-write it includes the workspace; /tmp is always a private tmpfs */
  writableRoots: string[];
  /**
   * Folders the command must be able to read even where the sandbox replaces what holds them (a folder
   * below /tmp, which becomes private): e.g. the installation of a language server. Never writable.
   */
  readableRoots?: string[];
  /** absolute paths (files or dirs) to make unreadable/unwritable (ignore-file matches) */
  hiddenPaths: string[];
  /**
   * Folders whose entries are all hidden but a few (e.g. `data/*.csv` in a folder of 100,000 files): the
   * compact form of the ignore-file matches of a folder that holds more hidden entries than others. See
   * hiddenRootOf for the meaning.
   */
  hiddenMasks?: HiddenMask[];
  /** absolute paths kept read-only; may not exist */
  protectedPaths: string[];
  network: boolean;
  /** names passed through (PATH, HOME, LANG, TERM, ...); everything else dropped */
  envAllowlist: string[];
  limits: {
    processes: number;
    memoryBytes: number;
    cpuSeconds: number;
    outputBytes: number;
    timeoutMs: number;
  };
}

/** Something the sandbox refused, recorded where it happened (seccomp, network). */
export interface Denial {
  kind: "seccomp" | "network" | "filesystem";
  syscall?: string;
  detail: string;
  path?: string;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  outputTruncated: boolean;
  durationMs: number;
  denials: Denial[];
}

/** What confines a command: the Linux helper, macOS Seatbelt, or nothing (only when the user asks). */
export type SandboxBackend = "linux" | "seatbelt" | "none";

/** A finished run and the notes that explain, for an agent or the user, what the sandbox refused. */
export interface SandboxRun extends SandboxResult {
  notes: SandboxNote[];
}

export interface RunOptions {
  /** Working directory (default: the workspace); inside a branch it is resolved in the branch. */
  cwd?: string;
  /** The environment to filter through the policy's allowlist (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Written to the command's stdin (which is closed afterwards; empty when absent). */
  input?: string;
  /** Aborting kills the command's whole process tree; the result has cancelled: true. */
  signal?: AbortSignal;
  /** Run in this shadow branch: the command sees it at the workspace's path and writes land in it. */
  branch?: Branch;
  /** Run without any sandbox (only when the user asked for it explicitly). */
  unsandboxed?: boolean;
  /** The backend (default: the platform's, see backendFor); to test a backend on another platform. */
  backend?: Exclude<SandboxBackend, "none">;
  /** The Seatbelt backend's `sandbox-exec` (default /usr/bin/sandbox-exec); for tests. */
  sandboxExec?: string;
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
}

export type SandboxErrorCode =
  | "UNSUPPORTED"
  | "HELPER_NOT_BUILT"
  | "BAD_POLICY"
  | "SETUP_FAILED"
  | "SPAWN_FAILED";
