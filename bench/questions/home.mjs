// @ts-check
import { createHash } from "node:crypto";
import { join } from "node:path";

/** The command run.mjs runs when no `--umbra` is given. */
export const DEFAULT_UMBRA = "node dist/cli/main.js";

/**
 * The data dir run.mjs gives the umbra command `cmd` under the work folder `work`: one per command, named
 * by a hash of it, so in-process scripts (inprocess.mjs, prose-leg.mjs, semantic/questions.sh) read the
 * index that run.mjs built for its default command.
 * @param {string} work
 * @param {string} [cmd]
 */
export function umbraHome(work, cmd = DEFAULT_UMBRA) {
  return join(work, "questions", `umbra-home-${commandHash(cmd)}`);
}

/**
 * The short hash that names a command's data dir and its results.
 * @param {string} cmd
 */
export function commandHash(cmd) {
  return createHash("sha256").update(cmd).digest("hex").slice(0, 10);
}
