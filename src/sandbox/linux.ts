/**
 * The Linux backend: turns a policy into an `umbra-helper sandbox` command line, reads the helper's
 * report lines, and asks the helper what the kernel offers (`umbra-helper sandbox-probe`).
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import { dataDir } from "../config/paths.js";
import type { BranchSandboxView } from "../shadow/branch.js";
import { compactHidden } from "./hidden-masks.js";
import { currentSeccompArch, describeSeccompDenial } from "./seccomp.js";
import type { Denial, SandboxPolicy } from "./types.js";

/**
 * Descriptors of the helper: 3 carries the seccomp program in, 4 the report lines out, 5 the hidden
 * paths in (see hiddenPathList).
 */
export const SECCOMP_FD = 3;
export const REPORT_FD = 4;
export const HIDDEN_FD = 5;

export interface LinuxSupport {
  ok: boolean;
  landlockAbi: number;
  userNamespaces: boolean;
  seccomp: boolean;
  missing: string[];
}

/** Parses the output of `umbra-helper sandbox-probe`. */
export function parseSupport(stdout: string): LinuxSupport {
  let userNamespaces = false;
  let seccomp = false;
  let landlockAbi = 0;
  const missing: string[] = [];
  for (const line of stdout.split("\n")) {
    const [key, value, ...rest] = line.trim().split(" ");
    const reason = rest.join(" ");
    if (key === "userns") {
      userNamespaces = value === "ok";
      if (!userNamespaces)
        missing.push(
          `user namespaces (${reason || "unavailable"}): enable unprivileged user namespaces, e.g. sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces=10000, or kernel.apparmor_restrict_unprivileged_userns=0`,
        );
    } else if (key === "landlock") {
      landlockAbi = Number.parseInt(value ?? "0", 10) || 0;
      if (landlockAbi === 0)
        missing.push(
          `Landlock (${reason || "unavailable"}): needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= boot parameter`,
        );
    } else if (key === "seccomp") {
      seccomp = value === "ok";
      if (!seccomp) missing.push(`seccomp user notification (${reason || "unavailable"}): needs Linux 5.0+`);
    }
  }
  if (!stdout.includes("userns")) missing.push("the sandbox probe printed nothing");
  return { ok: userNamespaces && seccomp && landlockAbi > 0, landlockAbi, userNamespaces, seccomp, missing };
}

/** What the sandbox shows at the workspace's path, and where the command starts. */
export interface HelperPlan {
  args: string[];
}

/** Where `path` below `from` lies once `from` is shown at `to`; other paths stay as they are. */
export function shownAt(path: string, from: string, to: string): string {
  const inside = relative(from, path);
  if (inside === "") return to;
  if (inside.startsWith("..") || isAbsolute(inside)) return path;
  return join(to, inside);
}

/**
 * Where the helper journals the placeholders of absent protected paths (see make_placeholder in
 * native/sandbox.c): in umbra's data directory, so that every run on the machine shares one journal.
 * Placeholders below the workspace are made only in a branch's view (they land in the branch); in the
 * user's own folder nothing is made, and what appeared there is checked after the run
 * (absent-guard.ts). The helper sweeps the journal on every run, so leftovers of killed runs (and of
 * older versions, which made them in the user's folder) still go.
 */
export function placeholderJournal(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(dataDir(env), "sandbox", "placeholders");
}

/** Where the sandbox shows `path` of the policy: a branch that cannot be bound at the workspace's path
 * is used at its own path. */
function viewPath(policy: SandboxPolicy, view: BranchSandboxView | undefined): (path: string) => string {
  return (path) => (view?.kind === "path" ? shownAt(path, policy.workspace, view.path) : path);
}

/**
 * The hidden paths and masked folders as the helper reads them from HIDDEN_FD (see native/hidden.c):
 * records ended by a NUL byte (no name can hold one), so that neither their number nor the bytes of a
 * name (a newline) are limited by a command line: `m` and a masked folder, then `k` and each of its kept
 * names; `h` and each path hidden on its own.
 */
export function hiddenPathList(policy: SandboxPolicy, view?: BranchSandboxView): Buffer {
  const move = viewPath(policy, view);
  const { paths, masks } = compactHidden(policy);
  const records: string[] = [];
  for (const mask of masks) {
    records.push(`m${move(mask.folder)}\0`);
    for (const name of mask.keep) records.push(`k${name}\0`);
  }
  for (const path of paths) records.push(`h${move(path)}\0`);
  return Buffer.from(records.join(""));
}

/** The helper's arguments for running `command` under `policy`, optionally in a branch. */
export function helperArgs(
  policy: SandboxPolicy,
  command: string,
  args: readonly string[],
  options: { cwd: string; view?: BranchSandboxView | undefined; placeholderDir?: string },
): string[] {
  const view = options.view;
  const move = viewPath(policy, view);
  const out = ["sandbox", "--workspace", move(policy.workspace), "--cwd", move(options.cwd)];
  if (view?.kind === "join") out.push("--join", String(view.pid));
  if (view?.kind === "bind") out.push("--bind-source", view.source);
  out.push("--placeholder-dir", options.placeholderDir ?? placeholderJournal());
  if (view) out.push("--workspace-placeholders");
  for (const path of policy.writableRoots) out.push("--writable", move(path));
  for (const path of policy.readableRoots ?? []) out.push("--readable", path);
  for (const path of policy.protectedPaths) out.push("--protected", move(path));
  if (policy.hiddenPaths.length > 0 || (policy.hiddenMasks?.length ?? 0) > 0)
    out.push("--hidden-fd", String(HIDDEN_FD));
  if (policy.network) out.push("--network");
  if (policy.mode === "full-access") out.push("--no-landlock");
  const { limits } = policy;
  out.push("--nproc", String(Math.max(0, Math.floor(limits.processes))));
  out.push("--memory", String(Math.max(0, Math.floor(limits.memoryBytes))));
  out.push("--cpu", String(Math.max(0, Math.floor(limits.cpuSeconds))));
  out.push("--seccomp-fd", String(SECCOMP_FD), "--report-fd", String(REPORT_FD), "--", command, ...args);
  return out;
}

/** One line of the helper's report. */
export type ReportEvent =
  | { type: "denial"; denial: Denial }
  | { type: "exit"; code: number }
  | { type: "signal"; signal: number }
  | { type: "setup"; reason: string }
  | { type: "unknown"; line: string };

export function parseReportLine(line: string): ReportEvent {
  const [word, ...rest] = line.split(" ");
  if (word === "seccomp") {
    const [nr, ...args] = rest;
    const numbers = args.map((arg) => {
      try {
        return BigInt(arg);
      } catch {
        return 0n;
      }
    });
    return { type: "denial", denial: describeSeccompDenial(Number(nr), numbers, currentSeccompArch()) };
  }
  if (word === "status" && rest[0] === "exit") return { type: "exit", code: Number(rest[1]) };
  if (word === "status" && rest[0] === "signal") return { type: "signal", signal: Number(rest[1]) };
  if (word === "setup") return { type: "setup", reason: rest.join(" ") };
  return { type: "unknown", line };
}
