/** The accept rules (rules.ts) applied to a diff, with what the sandbox policy protects and hides in the folder. */
import { loadConfig, type UmbraConfig } from "../config/config.js";
import { openSandbox, workspaceRelative } from "../sandbox/index.js";
import { umbraIgnoreMatcher } from "../workspace/ignore-rules.js";
import { type DiffSection, judgeSection, type Refusal, splitDiff, trackedPaths } from "./rules.js";

export interface ScreenOptions {
  /** The effective configuration of the folder (default: loaded for it). */
  config?: UmbraConfig;
  env?: NodeJS.ProcessEnv;
}

/** The sections of `diff` that the accept rules let through, and what they refused (see rules.ts). */
export async function screenDiff(
  root: string,
  diff: string,
  options: ScreenOptions = {},
): Promise<{ kept: DiffSection[]; refused: Refusal[] }> {
  const env = options.env ?? process.env;
  const config = options.config ?? loadConfig({ workspaceRoot: root, env });
  const { policy, git: guard } = await openSandbox({
    workspace: root,
    config,
    flags: { mode: "workspace-write", network: false },
    env,
  });
  const inside = (paths: readonly string[]) =>
    paths.flatMap((abs) => {
      const rel = workspaceRelative(policy.workspace, abs);
      return rel === undefined || rel === "" ? [] : [rel];
    });
  const hooks = new Set(inside(guard?.hooksPaths ?? []));
  const protectedPaths = [
    ...inside(policy.protectedPaths).map((path) => ({
      path,
      why: hooks.has(path)
        ? "the git hooks folder (core.hooksPath) is protected"
        : "protected: the sandbox keeps it read-only (git configuration, or a path your configuration protects)",
    })),
    // absent git control files (an include target, commondir, config.worktree): git would read them
    ...inside(guard?.watch ?? []).map((path) => ({
      path,
      why: "a git configuration file your git would read once it exists (an include target)",
    })),
  ];
  const sections = splitDiff(diff);
  const readable = sections.filter((section): section is DiffSection => !("unreadable" in section));
  const removed = readable.flatMap((s) => (s.oldPath && s.oldPath !== s.newPath ? [s.oldPath] : []));
  const context = {
    root,
    protectedPaths,
    hiddenPaths: inside(policy.hiddenPaths),
    isHidden: umbraIgnoreMatcher(root),
    tracked: await trackedPaths(root, removed),
  };
  const kept: DiffSection[] = [];
  const refused: Refusal[] = [];
  for (const section of sections) {
    if ("unreadable" in section) {
      const line = section.text.split("\n", 1)[0] ?? "";
      refused.push({
        path: line.slice("diff --git ".length),
        why: "umbra cannot read this part of the diff",
      });
      continue;
    }
    const refusals = await judgeSection(section, context);
    if (refusals.length === 0) kept.push(section);
    else refused.push(...refusals);
  }
  return { kept, refused };
}
