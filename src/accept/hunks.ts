/**
 * The hunks of a file's change, numbered as in its unified diff (base → branch, 3 lines of context, as
 * src/shadow/diff.ts writes it), and the base with only some of them applied (a partial accept).
 */
import { applyPatch } from "diff";
import { linePatch } from "../workspace/line-diff.js";
import { AcceptError } from "./errors.js";

function patchOf(base: string, branch: string) {
  return linePatch(base, branch, 3);
}

/** How many hunks the change `base` → `branch` has. */
export function hunkCount(base: string, branch: string): number {
  return patchOf(base, branch).hunks.length;
}

/** `base` with only the hunks `chosen` (1-based) of `base` → `branch` applied. */
export function applyHunks(path: string, base: string, branch: string, chosen: readonly number[]): string {
  const patch = patchOf(base, branch);
  const count = patch.hunks.length;
  const wrong = chosen.filter((n) => !Number.isInteger(n) || n < 1 || n > count);
  if (wrong.length > 0)
    throw new AcceptError("USAGE", `${path} has ${count} hunk(s); there is no hunk ${wrong.join(", ")}`);
  const keep = new Set(chosen);
  const result = applyPatch(base, { ...patch, hunks: patch.hunks.filter((_, i) => keep.has(i + 1)) });
  if (result === false)
    throw new AcceptError("USAGE", `the chosen hunks of ${path} do not apply to its base`);
  return result;
}
