// @ts-check
/** Subprocess helpers shared by the benchmarks. */
import { spawn } from "node:child_process";

/**
 * @typedef {object} RunResult
 * @property {number} code exit status (128 + signal number when killed by a signal)
 * @property {string} stdout
 * @property {string} stderr the whole stderr, or its last `keepStderr` characters
 * @property {number} ms wall-clock time of the command
 */

/**
 * @typedef {object} RunOptions
 * @property {string} [cwd]
 * @property {NodeJS.ProcessEnv} [env]
 * @property {string} [input] written to stdin, then stdin is closed
 * @property {(chunk: string) => void} [onStderr] called with every stderr chunk as it arrives
 * @property {number} [keepStderr] keep only the last N characters of stderr (default: all)
 */

/**
 * Run a command (no shell) and collect its output.
 * @param {string} cmd
 * @param {readonly string[]} args
 * @param {RunOptions} [opts]
 * @returns {Promise<RunResult>}
 */
export function run(cmd, args, opts = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    /** @type {Buffer[]} */
    const out = [];
    let err = "";
    child.stdout.on("data", (/** @type {Buffer} */ chunk) => out.push(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (/** @type {string} */ chunk) => {
      opts.onStderr?.(chunk);
      err += chunk;
      if (opts.keepStderr !== undefined && err.length > 2 * opts.keepStderr)
        err = err.slice(-opts.keepStderr);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const stderr = opts.keepStderr !== undefined ? err.slice(-opts.keepStderr) : err;
      const status = code ?? (signal ? 128 + signalNumber(signal) : 1);
      resolve({
        code: status,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr,
        ms: performance.now() - started,
      });
    });
    child.stdin.on("error", () => {
      // The child may exit without reading its input; its exit status tells what happened.
    });
    child.stdin.end(opts.input ?? "");
  });
}

/**
 * Run a command and fail with its stderr when it exits non-zero.
 * @param {string} cmd
 * @param {readonly string[]} args
 * @param {RunOptions} [opts]
 * @returns {Promise<RunResult>}
 */
export async function runChecked(cmd, args, opts = {}) {
  const res = await run(cmd, args, opts);
  if (res.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${res.code}: ${res.stderr.trim().slice(-2000)}`);
  }
  return res;
}

/**
 * Run `<commandLine> ARGS...` through sh, so that commandLine may be any shell words
 * (`node dist/cli/main.js`, `npx umbra`, `env FOO=1 umbra`) while ARGS stay unquoted data.
 * @param {string} commandLine
 * @param {readonly string[]} args
 * @param {RunOptions} [opts]
 * @returns {Promise<RunResult>}
 */
export function runShell(commandLine, args, opts = {}) {
  return run("sh", ["-c", `${commandLine} "$@"`, "sh", ...args], opts);
}

/** @param {NodeJS.Signals} signal */
function signalNumber(signal) {
  /** @type {Record<string, number>} */
  const known = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return known[signal] ?? 0;
}

/**
 * Human-readable duration.
 * @param {number} ms
 */
export function fmtMs(ms) {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.round(s - 60 * m)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
