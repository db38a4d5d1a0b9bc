// @ts-check
/**
 * Language servers the way the product runs them (`umbra lint`, the agent): a shadow branch of the
 * project and the sandboxed branch launcher (src/lsp/branch-launcher.ts), so that the benchmarks see
 * what users see (the pid namespace, the read-only home, the private /tmp, no network).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PROJECTS, ROOT, treeRssMiB } from "./projects.mjs";

const dist = (/** @type {string} */ path) => import(join(ROOT, "dist", path));
const { LspHost } = await dist("lsp/host.js");
const { branchLauncher } = await dist("lsp/branch-launcher.js");
const { fork } = await dist("shadow/index.js");
const { loadConfig } = await dist("config/config.js");

// Branches of the benchmark projects live in a data folder of the benchmarks' own.
process.env.UMBRA_HOME ??= join(PROJECTS, "..", "umbra-home");
mkdirSync(process.env.UMBRA_HOME, { recursive: true, mode: 0o700 });

/**
 * A host whose servers start in a shadow branch of `root` through the branch launcher.
 * `fork()` makes further branches of the same workspace (served by the same servers).
 * `lintTimeoutMs` (the --lint-timeout-ms flag of the benchmarks) overrides `lsp.lintTimeoutMs` (15 s):
 * a loaded machine may need more.
 * @param {string} root
 * @param {{ lintTimeoutMs?: string | number }} [options]
 */
export async function productHost(root, options = {}) {
  const config = loadConfig({ workspaceRoot: root });
  const branch = await fork(root);
  const { launcher } = await branchLauncher(branch, config);
  const lsp = options.lintTimeoutMs ? { lintTimeoutMs: Number(options.lintTimeoutMs) } : {};
  const host = new LspHost({ config: { ...config.lsp, ...lsp }, launcher });
  /** @type {any[]} */
  const forks = [];
  return {
    host,
    branch,
    async fork() {
      const other = await fork(root);
      forks.push(other);
      return other;
    },
    async close() {
      await host.shutdown();
      for (const b of [branch, ...forks]) await b.discard();
    },
  };
}

/**
 * Samples the resident memory of a host's servers (each server's whole process tree: the sandbox
 * helper and the server below it) every `everyMs`; `peak()` is the largest sum seen per server pid.
 * @param {() => (number | undefined)[]} pids
 * @param {number} [everyMs]
 */
export function rssSampler(pids, everyMs = 200) {
  /** @type {Map<number, number>} */
  const peaks = new Map();
  const sample = () => {
    for (const pid of pids()) {
      if (pid === undefined) continue;
      const now = treeRssMiB(pid);
      if (now > (peaks.get(pid) ?? 0)) peaks.set(pid, now);
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    sample,
    /** The highest tree RSS of any one server seen so far (MiB). */
    peak: () => Math.max(0, ...peaks.values()),
    stop: () => clearInterval(timer),
  };
}
