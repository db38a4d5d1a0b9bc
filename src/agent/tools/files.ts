import { readdirSync } from "node:fs";
import { join } from "node:path";
import {
  AGENT_WRITABLE_UMBRA_DIRS,
  PROTECTED_WORKSPACE_PATHS,
  type SandboxPolicy,
} from "../../sandbox/index.js";
import { workspaceRelative } from "../../sandbox/policy.js";
import type { AccessRules } from "../../shadow/index.js";
import { FileAccessError } from "../../workspace/errors.js";
import { failure, type ToolResult } from "./types.js";

/**
 * What the agent's file tools may not see or change, from the same policy its commands run under: the
 * sandbox's hidden paths (ignore-file matches and credentials) and its protected paths.
 */
export function accessRulesFor(policy: SandboxPolicy, root: string): AccessRules {
  const hidden: string[] = [];
  const hiddenOutside: string[] = [];
  // A masked folder hides every entry it holds now but its kept ones (read here: the door checks names).
  const masked = (policy.hiddenMasks ?? []).flatMap(({ folder, keep }) =>
    listNames(folder)
      .filter((name) => !keep.includes(name))
      .map((name) => join(folder, name)),
  );
  for (const path of [...policy.hiddenPaths, ...masked]) {
    const rel = workspaceRelative(root, path);
    if (rel === undefined) hiddenOutside.push(path);
    else if (rel !== "") hidden.push(rel);
  }
  const protectedPaths = PROTECTED_WORKSPACE_PATHS.map(({ path, reason }) => ({ path, reason }));
  for (const path of policy.protectedPaths) {
    const rel = workspaceRelative(root, path);
    // `.umbra` itself stands in for its entries when it does not exist; its agent folders stay writable
    if (rel && rel !== ".umbra")
      protectedPaths.push({ path: rel, reason: "it is read-only by the sandbox policy" });
  }
  return { hidden, hiddenOutside, protected: protectedPaths, umbraWritable: AGENT_WRITABLE_UMBRA_DIRS };
}

function listNames(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** A refused file access as the model reads it; other errors are thrown on. */
export function refused(error: unknown): ToolResult {
  if (error instanceof FileAccessError) return failure(error.message);
  throw error;
}
