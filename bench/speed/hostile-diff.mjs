#!/usr/bin/env node
// @ts-check
/**
 * An agent's rewrite of a file, diffed and accepted through the CLI: a workspace holds `f.txt` of n lines,
 * a sandboxed command in a kept shadow branch rewrites it (`umbra run --shadow --keep`), then the time of
 * `umbra shadow diff` (what the user reads) and of `umbra shadow apply` after the user edited the file's
 * first line (a three-way merge, then the conflict regions placed in the user's file).
 * The rewrites: `different` (no line in common), `reversed` (every line in common, in the other order),
 * `sparse` (every tenth line changed, an ordinary large edit).
 * Usage: node bench/speed/hostile-diff.mjs [--n 5000,20000] [--kind different,reversed,sparse]
 *        [--dist DIR] [--timeout SECONDS]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    n: { type: "string", default: "5000,20000" },
    kind: { type: "string", default: "different,reversed,sparse" },
    dist: { type: "string", default: join(ROOT, "dist") },
    timeout: { type: "string", default: "300" },
  },
});
const cli = join(resolve(values.dist ?? ""), "cli", "main.js");
const timeoutMs = Number(values.timeout) * 1000;
/** @type {Record<string, string>} */
const REWRITES = {
  different: `awk '{ sub(/^a/, "b"); print }' f.txt > g && mv g f.txt`,
  reversed: "tac f.txt > g && mv g f.txt",
  sparse: `awk 'NR % 10 == 0 { $0 = "changed " $0 } { print }' f.txt > g && mv g f.txt`,
};

/** @param {string[]} args @param {string} cwd @param {NodeJS.ProcessEnv} env */
function umbra(args, cwd, env) {
  const start = performance.now();
  const run = spawnSync(process.execPath, [cli, ...args], {
    cwd,
    env,
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 1 << 30,
  });
  const ms = performance.now() - start;
  if (run.error || (run.status !== 0 && run.status !== 1)) {
    const why = run.error
      ? String(run.error.message)
      : `exit ${run.status}: ${run.stderr.trim().split("\n")[0]}`;
    return { ms, out: "", err: run.stderr ?? "", failed: why };
  }
  return { ms, out: run.stdout, err: run.stderr, failed: undefined };
}

process.stdout.write(
  `build ${values.dist}\n| rewrite | lines | shadow diff | diff lines | shadow apply (user edited line 1) |\n`,
);
process.stdout.write("| --- | ---: | ---: | ---: | ---: |\n");
for (const n of (values.n ?? "").split(",").map(Number)) {
  for (const kind of (values.kind ?? "").split(",")) {
    const work = mkdtempSync(join(tmpdir(), "umbra-hostile-diff-"));
    const root = join(work, "ws");
    const env = { ...process.env, UMBRA_HOME: join(work, "home"), UMBRA_ENGINE: "off" };
    try {
      spawnSync("mkdir", ["-p", root]);
      writeFileSync(join(root, "f.txt"), Array.from({ length: n }, (_, i) => `a line ${i}\n`).join(""));
      const made = umbra(
        ["run", "--shadow", "--keep", "--", "sh", "-c", REWRITES[kind] ?? "false"],
        root,
        env,
      );
      const branch = /kept branch (\S+)/.exec(made.err)?.[1];
      if (!branch) throw new Error(`no branch: ${made.failed ?? made.err}`);
      const diff = umbra(["shadow", "diff", branch], root, env);
      const file = join(root, "f.txt");
      writeFileSync(file, readFileSync(file, "utf8").replace(/^a line 0\n/, "the user's line 0\n"));
      const apply = umbra(["shadow", "apply", branch], root, env);
      const shown = (/** @type {{ms: number, failed?: string}} */ r) =>
        r.failed ? `${r.failed} after ${(r.ms / 1000).toFixed(1)} s` : `${(r.ms / 1000).toFixed(2)} s`;
      const lines = diff.out.split("\n").filter((line) => /^[-+][^-+]/.test(line)).length;
      process.stdout.write(`| ${kind} | ${n} | ${shown(diff)} | ${lines} | ${shown(apply)} |\n`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}
