// @ts-check
/**
 * How long a first index takes to stop when interrupted in each phase (chunking, code-model training,
 * embedding and writing): in process, 100 ms into each phase, and `umbra index` signalled with SIGINT;
 * against, in the same run, how long each phase lasts uninterrupted (what a run that finishes its current
 * step waits) and a bare Node process that exits on SIGINT (the floor). Each line shows what was saved.
 *
 *   node bench/interrupt/run.mjs [FILES]      (default 3000 generated Python files; build first)
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const FILES = Number(process.argv[2] ?? 3000);

/** A workspace of FILES Python modules, 8 functions each. */
function workspace() {
  const root = join(mkdtempSync(join(tmpdir(), "umbra-bench-int-")), "ws");
  const words = ["parse", "money", "amount", "stock", "order", "user", "total", "price", "cart", "token"];
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `pkg${Math.floor(i / 100)}`);
    mkdirSync(dir, { recursive: true });
    const defs = Array.from({ length: 8 }, (_, k) => {
      const a = words[(i + k) % words.length];
      const b = words[(i * 7 + k) % words.length];
      const body = Array.from({ length: 6 }, (_, j) => `    ${b}_${j} = ${a} * ${words[j]}_${k} + x`).join(
        "\n",
      );
      return `def ${a}_${b}_${i}_${k}(x, ${a}):\n${body}\n    return ${a}\n`;
    });
    writeFileSync(join(dir, `mod${i}.py`), defs.join("\n"));
  }
  return root;
}

/**
 * Runs `umbra index` with a fresh data directory, sending SIGINT after `delayMs` when it is given; the
 * delays are fractions of an uninterrupted run, so they fall in its successive phases.
 * @param {string} root
 * @param {number | undefined} delayMs
 */
function index(root, delayMs) {
  const home = mkdtempSync(join(tmpdir(), "umbra-bench-int-home-"));
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, "index", root], {
      env: { ...process.env, UMBRA_HOME: home },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    let sent = 0;
    if (delayMs !== undefined) {
      setTimeout(() => {
        sent = performance.now();
        child.kill("SIGINT");
      }, delayMs);
    }
    child.on("exit", (code) => {
      const now = performance.now();
      rmSync(home, { recursive: true, force: true });
      const message = stderr.trim().split("\n").pop() ?? "";
      resolve({ code, totalMs: now - started, stopMs: sent ? now - sent : undefined, message });
    });
  });
}

/** The floor: a Node process that exits on SIGINT, signalled after it is ready. */
function floor() {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["-e", "process.on('SIGINT',()=>process.exit(130));console.log('ready');setInterval(()=>{},1e6)"],
      {
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    let sent = 0;
    child.stdout.once("data", () => {
      sent = performance.now();
      child.kill("SIGINT");
    });
    child.on("exit", () => resolve(performance.now() - sent));
  });
}

/**
 * A first index in process through the built indexer. With `stopIn`, aborts 100 ms after that phase is
 * first announced and measures how long the run takes to reject after the abort; without, records how
 * long each phase lasts.
 * @param {string} root
 * @param {string} [stopIn]
 */
async function inProcess(root, stopIn) {
  const { indexWorkspace } = await import("../../dist/index/indexer.js");
  const { loadConfig } = await import("../../dist/config/config.js");
  const home = mkdtempSync(join(tmpdir(), "umbra-bench-int-home-"));
  const controller = new AbortController();
  const started = performance.now();
  /** @type {{ phase: string, at: number }[]} */
  const transitions = [];
  let aborted = 0;
  let message = "";
  try {
    await indexWorkspace(root, {
      config: loadConfig({ workspaceRoot: root }),
      env: { ...process.env, UMBRA_HOME: home },
      signal: controller.signal,
      onProgress: (/** @type {{ phase: string }} */ p) => {
        if (transitions.at(-1)?.phase === p.phase) return;
        transitions.push({ phase: p.phase, at: performance.now() - started });
        if (p.phase === stopIn && !aborted) {
          setTimeout(() => {
            aborted = performance.now();
            controller.abort();
          }, 100);
        }
      },
    });
  } catch (error) {
    message = /** @type {Error} */ (error).message;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const stopMs = aborted ? performance.now() - aborted : undefined;
  return { transitions, totalMs: performance.now() - started, stopMs, message };
}

const root = workspace();
try {
  const full = await inProcess(root);
  console.log(
    `first index of ${FILES} files, not interrupted (in process): ${(full.totalMs / 1000).toFixed(1)} s`,
  );
  const { transitions } = full;
  const first = (/** @type {string} */ phase) => transitions.findIndex((t) => t.phase === phase);
  const at = (/** @type {number} */ i) => transitions[i]?.at ?? full.totalMs;
  // chunking for training, training, then batches of chunk/embed/write until the postings are compacted
  console.log(`  chunk for training: ${((at(first("train")) - at(first("chunk"))) / 1000).toFixed(1)} s`);
  console.log(
    `  train the code model: ${((at(first("train") + 1) - at(first("train"))) / 1000).toFixed(1)} s`,
  );
  console.log(`  embed and write: ${((at(first("compact")) - at(first("embed"))) / 1000).toFixed(1)} s`);
  const floors = [];
  for (let i = 0; i < 5; i++) floors.push(/** @type {number} */ (await floor()));
  floors.sort((a, b) => a - b);
  console.log(`baseline: bare node process, SIGINT to exit: median ${floors[2]?.toFixed(0)} ms`);
  for (const phase of ["chunk", "train", "write"]) {
    const r = await inProcess(root, phase);
    console.log(
      `abort 100 ms into ${phase} (in process): stopped in ${r.stopMs?.toFixed(0)} ms: ${r.message}`,
    );
  }
  // The CLI, signalled halfway through an uninterrupted run (where that lands depends on the machine's load).
  const cli = /** @type {{ code: number, stopMs: number, message: string }} */ (
    await index(root, Math.round(full.totalMs / 2))
  );
  console.log(
    `umbra index, SIGINT at half its run: stopped in ${cli.stopMs?.toFixed(0)} ms, exit ${cli.code}: ${cli.message}`,
  );
} finally {
  rmSync(join(root, ".."), { recursive: true, force: true });
}
