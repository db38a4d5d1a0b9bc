/**
 * What the user confirmed a repository may do: today, the test command that a workspace's own
 * `.umbra/config.json` asks umbra to run in the user's folder after an accept. One confirmation per
 * repository and command, kept in the workspace's data folder (0600), never in the workspace itself.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { workspaceDir } from "./paths.js";
import { PRIVATE_FILE, privateDirSync } from "./private.js";

function confirmationFile(realRoot: string, env: NodeJS.ProcessEnv): string {
  return join(workspaceDir(realRoot, env), "confirmed-test-command");
}

/** Whether the user confirmed exactly `command` for the workspace at `realRoot`. */
export function testCommandConfirmed(
  realRoot: string,
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  try {
    return readFileSync(confirmationFile(realRoot, env), "utf8") === command;
  } catch {
    return false;
  }
}

/** Records the user's confirmation of `command` for the workspace at `realRoot` (replacing an older one). */
export function confirmTestCommand(
  realRoot: string,
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const file = confirmationFile(realRoot, env);
  privateDirSync(workspaceDir(realRoot, env));
  writeFileSync(file, command, { mode: PRIVATE_FILE });
}
