import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "vitest";
import type { ClientHooks } from "../../src/engine/api.js";
import { CLI, umbraSync } from "./cli.js";
import { waitUntil } from "./wait.js";

/** A client that says no to every question of the engine. */
export const NO_HOOKS: ClientHooks = {
  approveNetwork: async () => false,
  confirmAccept: async () => false,
};

/**
 * The pids of every live process whose environment names this UMBRA_HOME: the engines a test started
 * (through `umbra serve` or a client that started one), and whatever they started (language servers).
 */
export function processesOf(home: string): number[] {
  const mark = `UMBRA_HOME=${home}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.startsWith("Z")) continue;
      if (`${readFileSync(`/proc/${entry}/environ`, "latin1")}\0`.includes(mark)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** `umbra serve ARGS` in the foreground, as a child of the test; resolves once it answers --status. */
export async function startServe(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, "serve", ...args], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  await waitUntil(() => exited || umbraSync(env, ["serve", "--status"]).code === 0, "the engine to listen");
  expect(exited).toBe(false);
  return child;
}

/**
 * Stops the engine of `env` (if one runs) and checks that nothing the test started through it is left:
 * no engine, no language server. Every test that starts one ends with this.
 */
export async function stopEngines(env: NodeJS.ProcessEnv): Promise<void> {
  const home = env.UMBRA_HOME ?? "";
  const stop = umbraSync(env, ["serve", "--stop"]);
  expect(stop.code, stop.stderr).toBe(0);
  await waitUntil(() => processesOf(home).length === 0, "every process of the engine to exit");
}
