/**
 * The one place umbra starts a command for anyone: runSandboxed() (and prepareSandbox(), for servers
 * that live for many requests) runs it under a sandbox policy — on Linux through `umbra-helper sandbox`
 * (namespaces, read-only system, Landlock, seccomp; see native/sandbox.c), on macOS under Seatbelt
 * (`sandbox-exec` with the profile of seatbelt.ts) — and collects its output, exit status, the denials
 * recorded and the notes that explain them. Fails closed: when the kernel lacks what the policy needs,
 * it throws SandboxError UNSUPPORTED; only an explicit `unsandboxed: true` runs without a sandbox.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { isAbsolute } from "node:path";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { BranchSandboxView } from "../shadow/branch.js";
import { ShadowError } from "../shadow/errors.js";
import { helperPath, runHelper } from "../shadow/helper.js";
import { explain } from "./explain.js";
import {
  HIDDEN_FD,
  helperArgs,
  hiddenPathList,
  type LinuxSupport,
  parseReportLine,
  parseSupport,
  REPORT_FD,
  SECCOMP_FD,
  shownAt,
} from "./linux.js";
import { filterEnv } from "./policy.js";
import { SANDBOX_EXEC, seatbeltProfile } from "./seatbelt.js";
import { currentSeccompArch, seccompProgram } from "./seccomp.js";
import type {
  Denial,
  RunOptions,
  SandboxBackend,
  SandboxErrorCode,
  SandboxPolicy,
  SandboxResult,
  SandboxRun,
} from "./types.js";

export type { SandboxErrorCode } from "./types.js";

export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SandboxError";
    this.code = code;
  }
}

/** How long a stopped command gets between SIGTERM (to the helper) and SIGKILL. */
const KILL_GRACE_MS = 2000;

let support: Promise<LinuxSupport> | undefined;
let supportHelper: string | undefined;

/** What this machine offers the sandbox; `missing` says what is lacking and how to enable it. Cached. */
export function sandboxSupport(): Promise<LinuxSupport> {
  if (process.platform !== "linux") {
    return Promise.resolve({
      ok: false,
      landlockAbi: 0,
      userNamespaces: false,
      seccomp: false,
      missing: [`the Linux sandbox needs Linux (this is ${process.platform}; on macOS umbra uses Seatbelt)`],
    });
  }
  let path: string;
  try {
    path = helperPath();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return Promise.resolve({
      ok: false,
      landlockAbi: 0,
      userNamespaces: false,
      seccomp: false,
      missing: [reason],
    });
  }
  if (!support || supportHelper !== path) {
    supportHelper = path;
    support = runHelper(["sandbox-probe"], 10_000).then(
      (result) => {
        const parsed = parseSupport(result.stdout);
        if (!currentSeccompArch()) {
          parsed.ok = false;
          parsed.seccomp = false;
          parsed.missing.push(`no seccomp filter for the ${process.arch} architecture (x64 and arm64 only)`);
        }
        return parsed;
      },
      (error: unknown) => ({
        ok: false,
        landlockAbi: 0,
        userNamespaces: false,
        seccomp: false,
        missing: [error instanceof Error ? error.message : String(error)],
      }),
    );
  }
  return support;
}

/** Absolute and normal: no empty, `.` or `..` component, no trailing slash, no NUL. */
const NORMAL_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/\0]+)+$/;

/** A name of a folder's entry: no slash, no NUL, not `.` or `..`. */
const PLAIN_NAME = /^(?!\.\.?$)[^/\0]+$/;

/** A path the helper cannot take as written. A newline or any other byte a file name may hold is fine:
 * paths travel as arguments or NUL-ended (see hiddenPathList), never as lines. One regular expression,
 * as a policy may hide 100,000 paths. */
function badPath(path: string): boolean {
  return path !== "/" && !NORMAL_PATH.test(path);
}

/** Throws SandboxError BAD_POLICY when the policy cannot be applied as written. */
export function checkPolicy(policy: SandboxPolicy): void {
  const bad = (why: string): never => {
    throw new SandboxError("BAD_POLICY", `bad sandbox policy: ${why}`);
  };
  if (!["read-only", "workspace-write", "full-access"].includes(policy.mode))
    bad(`unknown mode ${policy.mode}`);
  if (badPath(policy.workspace)) bad(`the workspace ${policy.workspace} is not an absolute, normal path`);
  for (const [name, list] of [
    ["writable root", policy.writableRoots],
    ["readable root", policy.readableRoots ?? []],
    ["hidden path", policy.hiddenPaths],
    ["protected path", policy.protectedPaths],
  ] as const) {
    for (const path of list)
      if (badPath(path)) bad(`the ${name} ${JSON.stringify(path)} is not an absolute, normal path`);
  }
  for (const mask of policy.hiddenMasks ?? []) {
    if (badPath(mask.folder) || mask.folder === "/")
      bad(`the masked folder ${JSON.stringify(mask.folder)} is not an absolute, normal path`);
    for (const name of mask.keep)
      if (!PLAIN_NAME.test(name)) bad(`the kept name ${JSON.stringify(name)} is not a plain name`);
  }
  for (const [key, value] of Object.entries(policy.limits)) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
      bad(`limit ${key} must be a number >= 0`);
  }
}

function signalName(signal: number): NodeJS.Signals | null {
  for (const [name, value] of Object.entries(constants.signals))
    if (value === signal) return name as NodeJS.Signals;
  return null;
}

/** What supervise() gathers: the result but its duration and denials, plus the helper's raw report. */
type Collected = Omit<SandboxResult, "durationMs" | "denials"> & { report: string };

/** Feeds input, collects output up to the limit, enforces the timeout and cancellation. */
function supervise(
  child: ChildProcess,
  policy: SandboxPolicy,
  options: RunOptions,
  stop: (signal: NodeJS.Signals) => void,
  reportStream: Readable | undefined,
): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const limit = policy.limits.outputBytes > 0 ? policy.limits.outputBytes : Number.POSITIVE_INFINITY;
    let used = 0;
    let truncated = false;
    const out = { stdout: "", stderr: "" };
    let report = "";
    let timedOut = false;
    let cancelled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const kill = () => {
      stop("SIGTERM");
      killTimer ??= setTimeout(() => stop("SIGKILL"), KILL_GRACE_MS);
    };
    const collect = (
      stream: Readable | null,
      key: "stdout" | "stderr",
      callback?: (chunk: string) => void,
    ) => {
      if (!stream) return;
      const decoder = new StringDecoder("utf8");
      stream.on("data", (chunk: Buffer) => {
        if (used >= limit) {
          truncated = true;
          return;
        }
        let piece = chunk;
        if (used + chunk.length > limit) {
          piece = chunk.subarray(0, limit - used);
          truncated = true;
        }
        used += piece.length;
        const text = decoder.write(piece);
        out[key] += text;
        if (text && callback) callback(text);
      });
      stream.on("end", () => {
        const rest = decoder.end();
        out[key] += rest;
        if (rest && callback) callback(rest);
      });
    };
    collect(child.stdout, "stdout", options.onStdout);
    collect(child.stderr, "stderr", options.onStderr);
    reportStream?.setEncoding("utf8");
    reportStream?.on("data", (text: string) => {
      report += text;
    });
    reportStream?.on("error", () => {});
    const timer =
      policy.limits.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, policy.limits.timeoutMs)
        : undefined;
    const onAbort = () => {
      cancelled = true;
      kill();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.input ?? "");
    child.once("error", (error) => {
      if (timer) clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      reject(
        new SandboxError("SPAWN_FAILED", `cannot start the command: ${error.message}`, { cause: error }),
      );
    });
    child.once("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({
        exitCode: code,
        signal,
        stdout: out.stdout,
        stderr: out.stderr,
        timedOut,
        cancelled,
        outputTruncated: truncated,
        report,
      });
    });
  });
}

/** How each backend stops what it started: the helper ends its own tree; a process group otherwise. */
function stopper(child: ChildProcess, backend: SandboxBackend): (signal: NodeJS.Signals) => void {
  if (backend === "linux")
    return (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
  return (signal) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
}

function helperOrThrow(): string {
  try {
    return helperPath();
  } catch (error) {
    if (error instanceof ShadowError)
      throw new SandboxError("HELPER_NOT_BUILT", error.message.replace("native helper", "sandbox helper"), {
        cause: error,
      });
    throw error;
  }
}

/** The seccomp program for each network setting: the same bytes on every run, so made once. */
const programs = new Map<boolean, Buffer>();

function programFor(network: boolean): Buffer {
  let program = programs.get(network);
  if (!program) {
    program = seccompProgram({ network });
    programs.set(network, program);
  }
  return program;
}

/**
 * The backend a command gets: none only when the user asked for no sandbox, else the platform's own —
 * Seatbelt on macOS, the Linux helper elsewhere (which says what is missing where it cannot run).
 */
export function backendFor(
  options: Pick<RunOptions, "unsandboxed" | "backend">,
  platform: NodeJS.Platform = process.platform,
): SandboxBackend {
  if (options.unsandboxed) return "none";
  return options.backend ?? (platform === "darwin" ? "seatbelt" : "linux");
}

/** A sandbox ready to start processes under one policy: the kernel checked, the branch's view resolved. */
export interface PreparedSandbox {
  readonly backend: SandboxBackend;
  /**
   * Starts `command args` confined; the child's stdio 0–2 are pipes; under the Linux helper fd 4 carries
   * its report (denials, exit status). stop() ends the whole process tree.
   */
  spawn(
    command: string,
    args: readonly string[],
    options: { cwd: string; env: NodeJS.ProcessEnv },
  ): ChildProcess;
  stop(child: ChildProcess, signal: NodeJS.Signals): void;
}

async function branchView(branch: RunOptions["branch"]): Promise<BranchSandboxView | undefined> {
  if (!branch) return undefined;
  try {
    return await branch.sandboxView();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SandboxError("SETUP_FAILED", `cannot show the branch to the command: ${reason}`, {
      cause: error,
    });
  }
}

async function prepareLinux(policy: SandboxPolicy, view: BranchSandboxView | undefined) {
  const path = helperOrThrow();
  const found = await sandboxSupport();
  const needs: string[] = [];
  if (!found.userNamespaces || !found.seccomp) needs.push(...found.missing);
  else if (policy.mode !== "full-access" && found.landlockAbi === 0) needs.push(...found.missing);
  if (needs.length > 0) {
    throw new SandboxError(
      "UNSUPPORTED",
      `the sandbox cannot run on this machine: missing ${needs.join("; ")}. Pass unsandboxed: true (umbra run --unsandboxed) to run without it.`,
    );
  }
  const program = programFor(policy.network);
  return (
    command: string,
    args: readonly string[],
    { cwd, env }: { cwd: string; env: NodeJS.ProcessEnv },
  ) => {
    const child = spawn(path, helperArgs(policy, command, [...args], { cwd, view }), {
      cwd: "/",
      env: filterEnv(env, policy.envAllowlist),
      stdio: ["pipe", "pipe", "pipe", "pipe", "pipe", "pipe"],
    });
    const feed = (fd: number, data: Buffer) => {
      const stream = child.stdio[fd] as Writable | null | undefined;
      stream?.on("error", () => {});
      stream?.end(data);
    };
    feed(SECCOMP_FD, program);
    feed(HIDDEN_FD, hiddenPathList(policy, view));
    return child;
  };
}

/**
 * Without the helper's mounts, a branch can be shown only at its own path: Seatbelt uses `path` views
 * there (the policy's paths moved along); nothing else can show a branch, so nothing else runs in one.
 */
function ownPathView(
  policy: SandboxPolicy,
  view: BranchSandboxView | undefined,
  backend: SandboxBackend,
): (path: string) => string {
  if (view === undefined) return (path) => path;
  if (backend === "none")
    throw new SandboxError(
      "UNSUPPORTED",
      "a shadow branch is shown to commands by the sandbox: it cannot run unsandboxed",
    );
  if (view.kind !== "path")
    throw new SandboxError(
      "UNSUPPORTED",
      "this shadow branch is shown to commands by mounts, which Seatbelt cannot make",
    );
  return (path) => shownAt(path, policy.workspace, view.path);
}

function seatbeltArgs(
  policy: SandboxPolicy,
  move: (path: string) => string,
): (command: string, args: readonly string[]) => string[] {
  const shown: SandboxPolicy = {
    ...policy,
    workspace: move(policy.workspace),
    writableRoots: policy.writableRoots.map(move),
    hiddenPaths: policy.hiddenPaths.map(move),
    protectedPaths: policy.protectedPaths.map(move),
    ...(policy.hiddenMasks
      ? { hiddenMasks: policy.hiddenMasks.map((mask) => ({ ...mask, folder: move(mask.folder) })) }
      : {}),
  };
  let tmpDir = tmpdir();
  try {
    tmpDir = realpathSync(tmpDir);
  } catch {
    // the profile then names it as given
  }
  const profile = seatbeltProfile(shown, { tmpDir });
  return (command, args) => ["-p", profile, "--", command, ...args];
}

/**
 * Checks the policy and what the machine offers, picks the backend (see backendFor) and resolves how a
 * branch (if any) is shown to commands. Throws SandboxError: UNSUPPORTED (the kernel lacks what the
 * policy needs; the message says what and how to enable it), HELPER_NOT_BUILT, BAD_POLICY, SETUP_FAILED.
 */
export async function prepareSandbox(
  policy: SandboxPolicy,
  options: Pick<RunOptions, "branch" | "unsandboxed" | "backend" | "sandboxExec"> = {},
): Promise<PreparedSandbox> {
  checkPolicy(policy);
  const backend = backendFor(options);
  const view = await branchView(options.branch);
  let start: (
    command: string,
    args: readonly string[],
    o: { cwd: string; env: NodeJS.ProcessEnv },
  ) => ChildProcess;
  if (backend === "linux") start = await prepareLinux(policy, view);
  else {
    const move = ownPathView(policy, view, backend);
    const wrap = backend === "seatbelt" ? seatbeltArgs(policy, move) : undefined;
    const exec = options.sandboxExec ?? SANDBOX_EXEC;
    start = (command, args, { cwd, env }) =>
      spawn(wrap ? exec : command, wrap ? wrap(command, args) : [...args], {
        cwd: move(cwd),
        env: wrap ? filterEnv(env, policy.envAllowlist) : env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
  }
  return {
    backend,
    spawn(command, args, { cwd, env }) {
      if (!isAbsolute(cwd))
        throw new SandboxError("BAD_POLICY", `the working directory ${cwd} is not absolute`);
      const child = start(command, args, { cwd, env });
      // what a plain or Seatbelt command left behind in its group ends with it
      if (backend !== "linux") child.once("exit", () => stopper(child, backend)("SIGKILL"));
      return child;
    },
    stop: (child, signal) => stopper(child, backend)(signal),
  };
}

/** The exit status and signal from the helper's report (Linux) or the process itself (other backends). */
function outcome(
  collected: Collected,
  backend: SandboxBackend,
): { exitCode: number | null; signal: NodeJS.Signals | null; denials: Denial[] } {
  if (backend !== "linux") return { exitCode: collected.exitCode, signal: collected.signal, denials: [] };
  const denials: Denial[] = [];
  let exitCode: number | null = null;
  let signal: NodeJS.Signals | null = null;
  let setup: string | undefined;
  let status = false;
  for (const line of collected.report.split("\n")) {
    if (line === "") continue;
    const event = parseReportLine(line);
    if (event.type === "denial") denials.push(event.denial);
    else if (event.type === "exit") {
      exitCode = event.code;
      status = true;
    } else if (event.type === "signal") {
      signal = signalName(event.signal);
      status = true;
    } else if (event.type === "setup") setup ??= event.reason;
  }
  if (setup !== undefined && !status) {
    throw new SandboxError("SETUP_FAILED", `the sandbox could not be set up: ${setup}`);
  }
  if (!status) {
    if (collected.timedOut || collected.cancelled) signal = "SIGKILL";
    else if (collected.exitCode !== null && collected.exitCode >= 128)
      signal = signalName(collected.exitCode - 128);
    else if (collected.signal) {
      throw new SandboxError("SETUP_FAILED", `the sandbox helper was killed by ${collected.signal}`);
    } else exitCode = collected.exitCode;
  }
  return { exitCode, signal, denials };
}

/**
 * Runs `command args` under `policy` and resolves when the command and everything it started have
 * ended, with the typed notes of what the sandbox refused (none when unsandboxed). Every command umbra
 * runs for anyone comes through here (or prepareSandbox, for long-lived servers). Rejects with
 * SandboxError: UNSUPPORTED (the kernel lacks what the policy needs; the message says what and how to
 * enable it), HELPER_NOT_BUILT, BAD_POLICY, SETUP_FAILED, SPAWN_FAILED.
 */
export async function runSandboxed(
  policy: SandboxPolicy,
  command: string,
  args: string[],
  options: RunOptions = {},
): Promise<SandboxRun> {
  const started = performance.now();
  const sandbox = await prepareSandbox(policy, options);
  const cwd = options.cwd ?? policy.workspace;
  const child = sandbox.spawn(command, args, { cwd, env: options.env ?? process.env });
  const reportStream =
    sandbox.backend === "linux" ? (child.stdio[REPORT_FD] as Readable | null | undefined) : undefined;
  const collected = await supervise(
    child,
    policy,
    options,
    (signal) => sandbox.stop(child, signal),
    reportStream ?? undefined,
  );
  const { report: _report, ...output } = collected;
  const result: SandboxResult = {
    ...output,
    ...outcome(collected, sandbox.backend),
    durationMs: performance.now() - started,
  };
  return { ...result, notes: sandbox.backend === "none" ? [] : explain(result, policy, { cwd }) };
}
