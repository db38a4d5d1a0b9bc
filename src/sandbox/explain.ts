import { basename, isAbsolute, resolve } from "node:path";
import { shownPath } from "../workspace/errors.js";
import { IGNORE_FILE_NAMES } from "../workspace/ignore-rules.js";
import { hiddenRootOf } from "./hidden-masks.js";
import {
  AGENT_WRITABLE_UMBRA_DIRS,
  isAtOrBelow,
  PROTECTED_WORKSPACE_PATHS,
  workspaceRelative,
} from "./policy.js";
import { SETID_DETAIL } from "./seccomp.js";
import type { Denial, SandboxPolicy, SandboxResult } from "./types.js";

export type SandboxRule =
  | "network"
  | "protected-path"
  | "hidden-path"
  | "outside-writable-roots"
  | "seccomp"
  | "read-only-mode"
  | "limit";

/** Which sandbox rule blocked what, and what would allow it; `message` is written for an agent. */
export interface SandboxNote {
  rule: SandboxRule;
  /** What was blocked: an operation, a path, a system call, a limit. */
  blocked: string;
  /** The absolute path concerned, for filesystem rules. */
  path?: string;
  /** What would allow it (a flag, a setting, or asking the user). */
  escalation: string;
  message: string;
}

export interface ExplainOptions {
  /** Working directory of the command, for relative paths in its error messages (default: the workspace). */
  cwd?: string;
}

/** The kind of access an error message shows: a write, or not known (read or write). */
type Access = "write" | "any";

/** The policy rule that denies `access` to `path`, if any. */
export interface PathVerdict {
  rule: "protected-path" | "hidden-path" | "outside-writable-roots" | "read-only-mode";
  /** The protected or hidden entry that covers the path (absolute). */
  root?: string;
  /** Why it is protected, for protected paths. */
  reason?: string;
}

/** Paths that stay writable in every mode: the private /tmp and the usual devices. */
const ALWAYS_WRITABLE = [
  "/tmp",
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/tty",
  "/dev/stdout",
  "/dev/stderr",
];

function protectedBy(policy: SandboxPolicy, path: string): { root: string; reason: string } | undefined {
  const rel = workspaceRelative(policy.workspace, path);
  if (rel !== undefined && policy.mode !== "full-access") {
    for (const entry of PROTECTED_WORKSPACE_PATHS) {
      if (rel === entry.path || rel.startsWith(`${entry.path}/`)) {
        return { root: resolve(policy.workspace, entry.path), reason: entry.reason };
      }
    }
    const parts = rel.split("/");
    if (
      parts[0] === ".umbra" &&
      parts.length > 1 &&
      !AGENT_WRITABLE_UMBRA_DIRS.includes(parts[1] as string)
    ) {
      return {
        root: resolve(policy.workspace, ".umbra", parts[1] as string),
        reason: "commands may not change umbra's settings",
      };
    }
    if (parts.length === 1 && rel.endsWith(".code-workspace")) {
      return { root: path, reason: "commands may not change editor settings" };
    }
    if (IGNORE_FILE_NAMES.has(basename(path))) {
      return { root: path, reason: "commands may not change ignore files" };
    }
  }
  const listed = policy.protectedPaths.find((entry) => isAtOrBelow(path, entry));
  if (!listed) return undefined;
  const reason =
    listed === resolve(policy.workspace, ".umbra")
      ? "commands may not change umbra's settings"
      : "it is on the sandbox's list of protected paths";
  return { root: listed, reason };
}

/**
 * The rule of `policy` that denies `access` to the absolute `path`, or undefined when the policy allows it
 * (an error there is an ordinary one). Reads are denied only for hidden paths.
 */
export function deniedBy(policy: SandboxPolicy, path: string, access: Access): PathVerdict | undefined {
  const hidden = hiddenRootOf(policy, path);
  if (hidden) return { rule: "hidden-path", root: hidden };
  const guarded = protectedBy(policy, path);
  if (guarded) return { rule: "protected-path", ...guarded };
  if (access !== "write" || policy.mode === "full-access") return undefined;
  // The private /tmp is writable, but a workspace under /tmp is the workspace.
  const inWorkspace = isAtOrBelow(path, policy.workspace);
  if (!inWorkspace && ALWAYS_WRITABLE.some((entry) => isAtOrBelow(path, entry))) return undefined;
  if (policy.mode === "read-only") return { rule: "read-only-mode" };
  if (policy.writableRoots.some((root) => isAtOrBelow(path, root))) return undefined;
  return { rule: "outside-writable-roots" };
}

/** `path` as an agent or the user should see it: relative to the workspace when inside it, and with
 * its control characters written out (a name can neither fake a line nor drive the terminal). */
function shown(policy: SandboxPolicy, path: string): string {
  const rel = workspaceRelative(policy.workspace, path);
  return shownPath(rel === undefined || rel === "" ? path : rel);
}

function pathNote(
  policy: SandboxPolicy,
  path: string,
  verdict: PathVerdict,
  operation: string | undefined,
): SandboxNote {
  const what = shown(policy, path);
  const blocked = operation ? `${operation} ${what}` : what;
  switch (verdict.rule) {
    case "protected-path": {
      const root = shown(policy, verdict.root ?? path);
      const escalation = "ask the user to make this change; commands in the sandbox may not";
      return {
        rule: "protected-path",
        blocked,
        path,
        escalation,
        message: `\`${root}\` is protected: ${verdict.reason ?? "it is read-only in the sandbox"}; ask the user to make this change.`,
      };
    }
    case "hidden-path": {
      const root = shown(policy, verdict.root ?? path);
      const why =
        workspaceRelative(policy.workspace, verdict.root ?? path) !== undefined
          ? "it matches the workspace's .umbraignore or .cursorignore rules, or is a hard link to a hidden file"
          : "it holds credentials or is on the sandbox's list of hidden paths";
      return {
        rule: "hidden-path",
        blocked,
        path,
        escalation: "ask the user for what you need from it; the sandbox keeps it unreadable",
        message: `\`${root}\` is hidden from the sandbox (${why}): commands may not read or change it. Work without it, or ask the user for what you need from it.`,
      };
    }
    case "read-only-mode":
      return {
        rule: "read-only-mode",
        blocked,
        path,
        escalation: "re-run in workspace-write mode (umbra run without --read-only)",
        message: `The sandbox is in read-only mode: commands may not write \`${what}\`. Re-run in workspace-write mode (umbra run without --read-only) if the command must write.`,
      };
    case "outside-writable-roots":
      return {
        rule: "outside-writable-roots",
        blocked,
        path,
        escalation:
          "write inside the workspace or /tmp, or ask the user to add the folder to sandbox.writableRoots",
        message: `\`${what}\` is outside the folders the sandbox lets commands write (the workspace, /tmp and the configured caches). Write inside the workspace or /tmp instead, or ask the user to add the folder to sandbox.writableRoots in .umbra/config.json.`,
      };
  }
}

const NETWORK_MESSAGE =
  "Only the sandbox's private loopback is reachable; the host and the internet need --net (servers the command starts on 127.0.0.1 or ::1 work; the host's own localhost services are not reachable). Re-run with network approval (umbra run --net, or ask the user) if the command needs them.";

function networkNote(blocked: string): SandboxNote {
  return {
    rule: "network",
    blocked,
    escalation: "re-run with network approval (umbra run --net, or ask the user)",
    message: NETWORK_MESSAGE,
  };
}

function seccompNote(denial: Denial): SandboxNote {
  const call = denial.syscall ?? "a system call";
  if (denial.detail.startsWith(SETID_DETAIL))
    return {
      rule: "seccomp",
      blocked: `${call} with setuid/setgid bits`,
      escalation: "none: set the bits yourself outside the sandbox if the file really needs them",
      message: `The sandbox refuses to make setuid or setgid files (${denial.detail}): a file left with those bits could run with the owner's rights later. Use a mode without them (e.g. 0755 instead of 4755); ask the user to set the bits outside the sandbox if they are really needed.`,
    };
  const name = denial.syscall ? `the \`${denial.syscall}\` system call` : "a system call";
  const detail = /is not allowed in the sandbox$/.test(denial.detail) ? "" : denial.detail;
  return {
    rule: "seccomp",
    blocked: call,
    escalation: "ask the user to run the command outside the sandbox (umbra run --unsandboxed)",
    message: `The sandbox blocks ${name}${detail ? ` (${detail})` : ""}; it cannot be allowed inside the sandbox. If the command really needs it, ask the user to run it outside the sandbox.`,
  };
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1 ? `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB` : `${bytes} bytes`;
}

function limitNotes(result: SandboxResult, policy: SandboxPolicy): SandboxNote[] {
  const notes: SandboxNote[] = [];
  const { limits } = policy;
  if (result.timedOut) {
    const seconds = Math.round(limits.timeoutMs / 100) / 10;
    notes.push({
      rule: "limit",
      blocked: `run time over ${seconds} s`,
      escalation: "re-run with a longer time limit (umbra run --timeout SECONDS)",
      message: `The command was stopped after the sandbox's time limit of ${seconds} s. Re-run with a longer limit (umbra run --timeout SECONDS) if it needs more time, or run a smaller part of it.`,
    });
  }
  if (result.outputTruncated) {
    notes.push({
      rule: "limit",
      blocked: `output over ${formatBytes(limits.outputBytes)}`,
      escalation: "write bulky output to a file in the workspace or /tmp and read the part you need",
      message: `The command's output passed the sandbox's limit of ${formatBytes(limits.outputBytes)} and was cut. Write bulky output to a file (in the workspace or /tmp) and read the part you need.`,
    });
  }
  if (result.signal === "SIGXCPU") {
    notes.push({
      rule: "limit",
      blocked: `CPU time over ${limits.cpuSeconds} s`,
      escalation: "ask the user to raise sandbox.limits.cpuSeconds",
      message: `The command used up the sandbox's CPU time limit of ${limits.cpuSeconds} s and was stopped. Run a smaller part of it, or ask the user to raise sandbox.limits.cpuSeconds.`,
    });
  }
  if (
    /\bfork: (retry: )?Resource temporarily unavailable|\bfork failed: Resource temporarily unavailable/i.test(
      result.stderr,
    )
  ) {
    notes.push({
      rule: "limit",
      blocked: `more than ${limits.processes} processes`,
      escalation: "run fewer processes at once, or ask the user to raise sandbox.limits.processes",
      message: `The command could not start more processes: the sandbox allows ${limits.processes} at once. Run fewer in parallel, or ask the user to raise sandbox.limits.processes.`,
    });
  }
  return notes;
}

// ---------------------------------------------------------------------------------------------------
// Error messages on stderr

const ERRNO_TEXT = /permission denied|operation not permitted|read-only file system|\bE(ACCES|PERM|ROFS)\b/i;
const EROFS_TEXT = /read-only file system|\bEROFS\b/i;
/**
 * The message shows a write (or a creation, removal, rename…), not a read. `open … for writing` is read
 * up to the next `cannot open ` (`can't open `, `failed to open `…) unless `for writing` follows it,
 * where the next try starts: reading on to the line's end from every `cannot open` was quadratic.
 */
const WRITE_CONTEXT =
  /\b(cannot|can't|could not|couldn't|unable to|failed to) (create|touch|remove|delete|unlink|make|write|move|rename|copy|overwrite|lock|link|symlink|change|set|open (?:(?!\b(?:cannot|can't|could not|couldn't|unable to|failed to) open (?!for writing))[^:])* for writing)\b|, (mkdir|rmdir|unlink|rename|copyfile|cp|symlink|link|chmod|chown|lchown|utime|futime|mkdtemp|rm) '|^\s*(mkdir|rmdir|unlink|rename|remove|write|symlink|link|chmod|chown|create|creat)\b|\b(mkdir|rmdir|unlink|rename|remove|write|symlink|chmod|chown|create|creat) [^:\s]+: (permission denied|operation not permitted)/i;
/** A curly quotation ends before the next opening one: each unclosed one read on to the line's end. */
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"|‘([^‘’\n]+)’|“([^“”\n]+)”|`([^`\n]+)`/g;
const NOT_A_PATH =
  /^(E[A-Z]+|open|mkdir|rmdir|unlink|rename|copyfile|symlink|link|chmod|chown|utime|access|stat|lstat|scandir|readdir|write|read)$/;
/** Errors of a command that tried to reach beyond the loopback (the only interface without --net). */
const NETWORK_TEXT =
  /\bENETUNREACH\b|network is unreachable|\bEAI_AGAIN\b|temporary failure in name resolution|could not resolve host|couldn't resolve host/i;

/** Candidate paths named on a line that carries an errno text. */
function pathsOnLine(line: string): string[] {
  const quoted: string[] = [];
  for (const match of line.matchAll(QUOTED)) {
    const text = (match[1] ?? match[2] ?? match[3] ?? match[4] ?? match[5] ?? "").trim();
    if (text && !NOT_A_PATH.test(text) && !/^\d+$/.test(text)) quoted.push(text);
  }
  if (quoted.length > 0) return quoted;
  // `prog: PATH: Permission denied`, `open PATH: permission denied`: the path ends the segment before
  // the errno text.
  const segments = line.split(/:\s+/);
  const at = segments.findIndex((segment) => ERRNO_TEXT.test(segment));
  if (at < 1) return [];
  if (at === 1 && segments.length > 2 && !/[/.]/.test(segments[0] ?? "")) return [];
  const words = (segments[at - 1] ?? "").trim().split(/\s+/);
  const last = words[words.length - 1] ?? "";
  return last && !NOT_A_PATH.test(last) ? [last] : [];
}

/**
 * Notes on the sandbox-caused failures of a run: first the exact denials the sandbox reported, then
 * errno texts on stderr (EACCES, EPERM, EROFS) that name a path the policy denies (protected, hidden,
 * outside the writable roots, or any write in read-only mode), then, when the network is off and the
 * command failed, errors of reaching beyond the loopback (unreachable network, failed name lookup), then
 * time-outs and cut output. An ordinary failure (a missing file, a failing test, a permission error on a
 * path the policy allows, a refused connection on the loopback) gets no note, nor does a command that
 * succeeded in spite of what it printed. Pure.
 */
export function explain(
  result: SandboxResult,
  policy: SandboxPolicy,
  options: ExplainOptions = {},
): SandboxNote[] {
  const notes: SandboxNote[] = [];
  const seen = new Set<string>();
  const add = (note: SandboxNote): void => {
    const key = `${note.rule}\0${note.path ?? note.blocked}`;
    if (seen.has(key)) return;
    seen.add(key);
    notes.push(note);
  };
  const cwd = options.cwd ?? policy.workspace;
  const absolute = (path: string): string => (isAbsolute(path) ? resolve(path) : resolve(cwd, path));

  for (const denial of result.denials) {
    if (denial.kind === "network") add(networkNote(denial.detail || "network access"));
    else if (denial.kind === "seccomp") add(seccompNote(denial));
    else if (denial.path) {
      const path = absolute(denial.path);
      const verdict = deniedBy(policy, path, "write") ?? {
        rule: policy.mode === "read-only" ? "read-only-mode" : "outside-writable-roots",
      };
      add(pathNote(policy, path, verdict, denial.detail || undefined));
    } else {
      add({
        rule: policy.mode === "read-only" ? "read-only-mode" : "outside-writable-roots",
        blocked: denial.detail,
        escalation: "ask the user",
        message: `The sandbox blocked a filesystem operation (${shownPath(denial.detail)}). Ask the user if the command needs it.`,
      });
    }
  }

  const stderr = result.stderr.length > 1_000_000 ? result.stderr.slice(-1_000_000) : result.stderr;
  for (const line of stderr.split("\n")) {
    if (!ERRNO_TEXT.test(line)) continue;
    const erofs = EROFS_TEXT.test(line);
    const write = erofs || WRITE_CONTEXT.test(line);
    for (const candidate of pathsOnLine(line)) {
      const path = absolute(candidate);
      const verdict = deniedBy(policy, path, write ? "write" : "any");
      if (verdict) add(pathNote(policy, path, verdict, write ? "write to" : "access to"));
    }
  }

  const failed = result.exitCode !== 0 || result.signal !== null;
  if (!policy.network && failed && !notes.some((note) => note.rule === "network")) {
    const line = stderr.split("\n").find((text) => NETWORK_TEXT.test(text));
    if (line) add(networkNote(line.trim().slice(0, 200)));
  }

  for (const note of limitNotes(result, policy)) add(note);
  return notes;
}

/** `umbra: sandbox: <message>` lines, as the CLI prints them on stderr. */
export function formatNotes(notes: readonly SandboxNote[]): string {
  return notes.map((note) => `umbra: sandbox: ${note.message}\n`).join("");
}
