/**
 * runSandboxed(): runs one command under a sandbox policy — on Linux through `umbra-helper sandbox`
 * (namespaces, read-only system, Landlock, seccomp; see native/sandbox.c) — and collects its output,
 * exit status and the denials the helper recorded. Fails closed: when the kernel lacks what the policy
 * needs, it throws SandboxError UNSUPPORTED unless `unsandboxed: true` is passed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { isAbsolute } from "node:path";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { BranchSandboxView } from "../shadow/branch.js";
import { ShadowError } from "../shadow/errors.js";
import { helperPath, runHelper } from "../shadow/helper.js";
import {
  HIDDEN_FD,
  helperArgs,
  hiddenPathList,
  type LinuxSupport,
  parseReportLine,
  parseSupport,
  REPORT_FD,
  SECCOMP_FD,
} from "./linux.js";
import { filterEnv } from "./policy.js";
import { currentSeccompArch, seccompProgram } from "./seccomp.js";
import type { Denial, RunOptions, SandboxErrorCode, SandboxPolicy, SandboxResult } from "./types.js";

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

async function runUnsandboxed(
  policy: SandboxPolicy,
  command: string,
  args: string[],
  options: RunOptions,
): Promise<SandboxResult> {
  const started = performance.now();
  const cwd = options.cwd ?? policy.workspace;
  const child = spawn(command, args, {
    cwd,
    env: options.env ?? process.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  child.once("exit", () => killGroup("SIGKILL"));
  const { report: _report, ...collected } = await supervise(child, policy, options, killGroup, undefined);
  return { ...collected, durationMs: performance.now() - started, denials: [] };
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

/** A sandbox ready to start processes under one policy: the kernel checked, the branch's view resolved. */
export interface PreparedSandbox {
  /**
   * Starts `command args` confined; the child's stdio 0–2 are pipes, fd 4 carries the helper's report
   * (denials, exit status). Killing the child (the helper) ends the whole process tree.
   */
  spawn(
    command: string,
    args: readonly string[],
    options: { cwd: string; env: NodeJS.ProcessEnv },
  ): ChildProcess;
}

/**
 * Checks the policy and what the machine offers, and resolves how a branch (if any) is shown to commands.
 * Throws SandboxError: UNSUPPORTED (the kernel lacks what the policy needs; the message says what and how
 * to enable it), HELPER_NOT_BUILT, BAD_POLICY, SETUP_FAILED.
 */
export async function prepareSandbox(
  policy: SandboxPolicy,
  options: Pick<RunOptions, "branch"> = {},
): Promise<PreparedSandbox> {
  checkPolicy(policy);
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
  let view: BranchSandboxView | undefined;
  if (options.branch) {
    try {
      view = await options.branch.sandboxView();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new SandboxError("SETUP_FAILED", `cannot show the branch to the command: ${reason}`, {
        cause: error,
      });
    }
  }
  const program = programFor(policy.network);
  return {
    spawn(command, args, { cwd, env }) {
      if (!isAbsolute(cwd))
        throw new SandboxError("BAD_POLICY", `the working directory ${cwd} is not absolute`);
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
    },
  };
}

/**
 * Runs `command args` under `policy` and resolves when the command and everything it started have
 * ended. Rejects with SandboxError: UNSUPPORTED (the kernel lacks what the policy needs; the message
 * says what and how to enable it), HELPER_NOT_BUILT, BAD_POLICY, SETUP_FAILED, SPAWN_FAILED.
 */
export async function runSandboxed(
  policy: SandboxPolicy,
  command: string,
  args: string[],
  options: RunOptions = {},
): Promise<SandboxResult> {
  const started = performance.now();
  if (options.unsandboxed) {
    checkPolicy(policy);
    return runUnsandboxed(policy, command, args, options);
  }
  const sandbox = await prepareSandbox(policy, options); // checks the policy
  const child = sandbox.spawn(command, args, {
    cwd: options.cwd ?? policy.workspace,
    env: options.env ?? process.env,
  });
  const reportStream = child.stdio[REPORT_FD] as Readable | null | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  const collected = await supervise(child, policy, options, stop, reportStream ?? undefined);
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
  const { report: _report, ...output } = collected;
  return { ...output, exitCode, signal, durationMs: performance.now() - started, denials };
}
