import { stat } from "node:fs/promises";
import type { ShadowConfig } from "../config/config.js";
import { privateDir } from "../config/private.js";
import { ShadowError } from "./errors.js";
import { helperReason, runHelper } from "./helper.js";

/** How a branch is made: kernel overlayfs, fuse-overlayfs, a reflink copy, or a plain copy. */
export type BranchMode = "overlay" | "fuse-overlayfs" | "reflink" | "copy";
export type ModeSetting = ShadowConfig["mode"];

export const BRANCH_MODES: readonly BranchMode[] = ["overlay", "fuse-overlayfs", "reflink", "copy"];

/** What `umbra-helper probe` found: each way of mounting or copying, and why it failed. */
export interface ProbeResult {
  overlay: ProbeLine;
  "fuse-overlayfs": ProbeLine;
  /** Bind mounts in a user namespace: processes see a copy-mode branch at the workspace's path. */
  bind: ProbeLine;
  /** FICLONE works in the data directory. */
  reflink: ProbeLine;
}

export interface ProbeLine {
  ok: boolean;
  reason?: string;
}

export interface ModeChoice {
  mode: BranchMode;
  /** Set when the choice is a degraded one (a full copy per branch), to be shown to the user. */
  warning?: string;
  /** Copy modes only: whether processes can see the copy at the workspace's own path (bind mount). */
  bind: boolean;
  probe: ProbeResult;
}

const probes = new Map<string, Promise<ProbeResult>>();

function parseProbe(stdout: string): ProbeResult {
  const lines = new Map<string, ProbeLine>();
  for (const line of stdout.split("\n")) {
    const match = /^(\S+) (ok|fail)(?: (.*))?$/.exec(line.trim());
    if (!match?.[1]) continue;
    lines.set(match[1], match[2] === "ok" ? { ok: true } : { ok: false, reason: match[3] ?? "unknown" });
  }
  const get = (name: string): ProbeLine => lines.get(name) ?? { ok: false, reason: "not probed" };
  return {
    overlay: get("overlay"),
    "fuse-overlayfs": get("fuse-overlayfs"),
    bind: get("bind"),
    reflink: get("reflink"),
  };
}

/**
 * Tries each way of mounting a branch on a tiny tree in `probeDir` (a folder of the data directory, so that
 * the upper layers' filesystem is the one tested). The result is cached for the life of the process.
 */
export function probeModes(probeDir: string): Promise<ProbeResult> {
  let cached = probes.get(probeDir);
  if (!cached) {
    cached = (async () => {
      await privateDir(probeDir);
      const result = await runHelper(["probe", "--dir", probeDir]);
      if (result.code !== 0) {
        throw new ShadowError("NO_MODE", `umbra-helper probe failed: ${helperReason(result.stderr)}`);
      }
      return parseProbe(result.stdout);
    })();
    cached.catch(() => probes.delete(probeDir));
    probes.set(probeDir, cached);
  }
  return cached;
}

/** Forgets cached probe results (for tests that change the machine's state). */
export function forgetProbes(): void {
  probes.clear();
}

async function sameFilesystem(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev;
  } catch {
    return false;
  }
}

/**
 * The mode branches of `workspaceRoot` are made with: the configured one, or for `auto` the first that
 * works of overlay, fuse-overlayfs, reflink and copy (copy comes with a warning). A configured overlay
 * mode that does not work here is an error (NO_MODE); a configured reflink on a filesystem that cannot
 * clone falls back to a full copy, with a warning.
 */
export async function chooseMode(
  setting: ModeSetting,
  context: { probeDir: string; workspaceRoot: string; dataDir: string },
): Promise<ModeChoice> {
  const probe = await probeModes(context.probeDir);
  const bind = probe.bind.ok;
  const canClone = probe.reflink.ok && (await sameFilesystem(context.workspaceRoot, context.dataDir));
  const cloneReason = probe.reflink.ok
    ? "the workspace and the data directory are on different filesystems"
    : `the filesystem cannot clone files: ${probe.reflink.reason}`;
  const choice = (mode: BranchMode, ...notes: (string | false)[]): ModeChoice => {
    const parts = notes.filter((note): note is string => typeof note === "string" && note !== "");
    if (!bind && (mode === "reflink" || mode === "copy")) {
      parts.push(
        `processes run in the copy's own folder, not at the workspace's path (bind mounts fail: ${probe.bind.reason})`,
      );
    }
    return parts.length > 0 ? { mode, bind, probe, warning: parts.join("; ") } : { mode, bind, probe };
  };
  const fullCopy = "every branch is a full copy of the workspace";
  switch (setting) {
    case "overlay":
    case "fuse-overlayfs": {
      const line = probe[setting];
      if (!line.ok) {
        throw new ShadowError(
          "NO_MODE",
          `shadow.mode is ${setting} but it does not work here: ${line.reason}`,
        );
      }
      return choice(setting);
    }
    case "reflink":
      return choice("reflink", !canClone && `reflink copies are not possible (${cloneReason}): ${fullCopy}`);
    case "copy":
      return choice("copy", `shadow.mode is copy: ${fullCopy}`);
    case "auto": {
      if (probe.overlay.ok) return choice("overlay");
      if (probe["fuse-overlayfs"].ok) return choice("fuse-overlayfs");
      const why =
        `kernel overlayfs (${probe.overlay.reason}) and fuse-overlayfs (${probe["fuse-overlayfs"].reason}) ` +
        "do not work here";
      if (canClone) return choice("reflink", `${why}: branches are reflink copies, made at fork`);
      return choice("copy", `${why} and ${cloneReason}: ${fullCopy}`);
    }
  }
}
