#!/usr/bin/env node
// @ts-check
/**
 * Per-command overhead of the Linux sandbox. Runs `true` and `node -e 0` (a) unsandboxed, (b) under
 * bubblewrap with a comparable profile (new user, mount, pid, net, ipc and uts namespaces, / bound
 * read-only, the workspace bound read-write, a tmpfs /tmp, a fresh /proc and a minimal /dev), and (c)
 * through the sandbox entry point with the workspace's own policy (openSandbox, see fixture.mjs;
 * umbra-helper sandbox: the same namespaces plus Landlock, seccomp with a notification listener, hidden
 * and protected paths, credentials hidden, limits). "umbra" is the sandboxed run itself; the last column
 * adds the git guard's check of the folder that follows a run in the user's folder. Every variant is started from Node the
 * same way (spawn with the policy's filtered environment, wait for exit), interleaved, in the same run; medians of --runs runs (default 30).
 * Overhead = median(variant) - median(unsandboxed). Target: umbra under 30 ms and at most 2x bwrap's.
 * Usage: node bench/sandbox/run.mjs [--runs 30]. Needs `npm run build` first (dist/ and the helper).
 * Writes bench/out/sandbox.{json,md} and prints the markdown table.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openBenchSandbox } from "./fixture.mjs";

const ROOT = join(import.meta.dirname, "..", "..");
const { values } = parseArgs({ options: { runs: { type: "string", default: "30" } } });
const RUNS = Math.max(20, Number(values.runs));

const { sandboxSupport } = await import(join(ROOT, "dist", "sandbox", "run.js"));

const support = await sandboxSupport();
if (!support.ok) {
  console.error(`the sandbox cannot run here: ${support.missing.join("; ")}`);
  process.exit(1);
}

const { base, ws, sandbox, commandEnv: ENV } = await openBenchSandbox();
const BWRAP = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();
/** @param {string[]} cmd */
const bwrapArgs = (cmd) => [
  "--unshare-user",
  "--unshare-pid",
  "--unshare-net",
  "--unshare-ipc",
  "--unshare-uts",
  "--die-with-parent",
  "--ro-bind",
  "/",
  "/",
  "--tmpfs",
  "/tmp",
  "--bind",
  ws,
  ws,
  "--proc",
  "/proc",
  "--dev",
  "/dev",
  "--chdir",
  ws,
  "--",
  ...cmd,
];

/** Spawns and waits; returns milliseconds. @param {string} file @param {string[]} args */
function timeSpawn(file, args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The same environment as the sandboxed command gets, so that only the sandbox differs.
    const child = spawn(file, args, { cwd: ws, env: ENV, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${file} ${args.join(" ")} exited ${code}: ${err}`));
      else resolve(performance.now() - started);
    });
  });
}

/**
 * One run through the sandbox entry point, as `umbra run` makes it in the user's folder: the sandboxed
 * command (its own duration, from the start of the sandbox to the end of every process in it), then the
 * git guard's check of the folder. @param {string[]} cmd
 */
async function timeUmbra(cmd) {
  const started = performance.now();
  const result = await sandbox.run(cmd[0], cmd.slice(1), { cwd: ws });
  if (result.exitCode !== 0)
    throw new Error(`umbra ${cmd.join(" ")} exited ${result.exitCode}: ${result.stderr}`);
  return { run: result.durationMs, withCheck: performance.now() - started };
}

/** @param {number[]} xs */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const commands = [["true"], [process.execPath, "-e", "0"]];
const rows = [];
try {
  for (const cmd of commands) {
    /** @type {Record<string, number[]>} */
    const times = { plain: [], bwrap: [], umbra: [], checked: [] };
    // warm-up
    await timeSpawn(cmd[0], cmd.slice(1));
    if (BWRAP) await timeSpawn(BWRAP, bwrapArgs(cmd));
    await timeUmbra(cmd);
    for (let i = 0; i < RUNS; i++) {
      times.plain.push(await timeSpawn(cmd[0], cmd.slice(1)));
      if (BWRAP) times.bwrap.push(await timeSpawn(BWRAP, bwrapArgs(cmd)));
      const umbra = await timeUmbra(cmd);
      times.umbra.push(umbra.run);
      times.checked.push(umbra.withCheck);
    }
    const plain = median(times.plain);
    const bwrap = BWRAP ? median(times.bwrap) : Number.NaN;
    const umbra = median(times.umbra);
    const checked = median(times.checked);
    rows.push({
      command: cmd[0] === process.execPath ? "node -e 0" : cmd.join(" "),
      runs: RUNS,
      plainMs: plain,
      bwrapMs: bwrap,
      umbraMs: umbra,
      umbraWithCheckMs: checked,
      bwrapOverheadMs: bwrap - plain,
      umbraOverheadMs: umbra - plain,
      ratio: bwrap - plain > 0.5 ? (umbra - plain) / (bwrap - plain) : Number.NaN,
      // Met: under 30 ms of overhead, and no more than twice bwrap's overhead (or no slower than bwrap).
      met: umbra - plain < 30 && (umbra - plain <= 2 * (bwrap - plain) || umbra <= bwrap),
    });
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}

const f = (/** @type {number} */ x) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
const lines = [
  `Sandbox overhead per command (medians of ${RUNS} runs, interleaved; Landlock ABI ${support.landlockAbi}; ${process.platform} ${process.arch}, node ${process.version})`,
  "",
  "| command | unsandboxed ms | bwrap ms | umbra ms | bwrap overhead ms | umbra overhead ms | umbra / bwrap overhead | target (<30 ms, ≤2×) | umbra + git check after the run ms |",
  "|---|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.command} | ${f(r.plainMs)} | ${f(r.bwrapMs)} | ${f(r.umbraMs)} | ${f(r.bwrapOverheadMs)} | ${f(r.umbraOverheadMs)} | ${Number.isFinite(r.ratio) ? `${f(r.ratio)}×` : "n/a"} | ${r.met ? "met" : "missed"} | ${f(r.umbraWithCheckMs)} |`,
  ),
];
const table = lines.join("\n");
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(join(ROOT, "bench", "out", "sandbox.json"), `${JSON.stringify({ support, rows }, null, 2)}\n`);
writeFileSync(join(ROOT, "bench", "out", "sandbox.md"), `${table}\n`);
console.log(table);
