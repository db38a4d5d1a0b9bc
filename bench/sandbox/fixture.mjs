// @ts-check
/**
 * The workspace the sandbox benchmarks run in, and its sandbox opened the way umbra opens it: through
 * the one entry point (openSandbox: the configuration's policy resolved for the folder, credentials of
 * the home folder and system secrets hidden, git metadata protected, the admin policy applied). A git
 * repository with a hidden file, an ignored folder and the usual ignore files; umbra's data directory
 * and an absent admin policy in a temporary folder.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * @param {{ limits?: Record<string, number> }} [options] process and memory limits to use instead of the
 *   configuration's (e.g. 0: none, so no cgroups)
 */
export async function openBenchSandbox(options = {}) {
  const { openSandbox } = await import(join(ROOT, "dist", "sandbox", "sandbox.js"));
  const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
  const { filterEnv } = await import(join(ROOT, "dist", "sandbox", "policy.js"));
  const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-sbx-")));
  const ws = join(base, "ws");
  mkdirSync(ws);
  execFileSync("git", ["init", "-q", ws]);
  writeFileSync(join(ws, ".umbraignore"), "secret.env\n");
  writeFileSync(join(ws, ".gitignore"), "node_modules/\n");
  writeFileSync(join(ws, "secret.env"), "KEY=1\n");
  writeFileSync(join(ws, "README.md"), "# bench\n");
  const env = {
    ...process.env,
    UMBRA_HOME: join(base, "data"),
    XDG_CONFIG_HOME: join(base, "config"),
    UMBRA_ADMIN_POLICY: join(base, "no-admin-policy.json"),
  };
  const config = loadConfig({ workspaceRoot: ws, env });
  const sandbox = await openSandbox({
    workspace: ws,
    config,
    flags: { mode: "workspace-write", network: false, timeoutMs: 60_000, limits: options.limits ?? {} },
    env,
  });
  /** The environment the sandboxed command gets, for the variants that are not umbra. */
  const commandEnv = filterEnv(env, sandbox.policy.envAllowlist);
  return { base, ws, sandbox, commandEnv };
}
