// @ts-check
/**
 * How long `umbra index` takes to stop after Ctrl-C at points through a first index (chunking, code-model
 * training, embedding and writing), against a baseline in the same run: a bare Node process that exits on
 * SIGINT (the floor: signal delivery and process exit). Each line also shows what the run said was saved.
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
 * When each phase of a first index starts and ends (in process, through the same indexer), so that the
 * interrupted CLI runs can be signalled in the middle of each.
 * @param {string} root
 */
async function phases(root) {
  const { indexWorkspace } = await import("../../dist/index/indexer.js");
  const { loadConfig } = await import("../../dist/config/config.js");
  const home = mkdtempSync(join(tmpdir(), "umbra-bench-int-home-"));
  const started = performance.now();
  /** @type {Map<string, { from: number, to: number }>} */
  const spans = new Map();
  try {
    await indexWorkspace(root, {
      config: loadConfig({ workspaceRoot: root }),
      env: { ...process.env, UMBRA_HOME: home },
      onProgress: (/** @type {{ phase: string }} */ p) => {
        const now = performance.now() - started;
        const phase = p.phase === "write" ? "embed" : p.phase;
        const span = spans.get(phase) ?? { from: now, to: now };
        span.to = now;
        spans.set(phase, span);
      },
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return { spans, totalMs: performance.now() - started };
}

const root = workspace();
try {
  const { spans, totalMs } = await phases(root);
  console.log(
    `first index of ${FILES} files, not interrupted (in process): ${(totalMs / 1000).toFixed(1)} s`,
  );
  for (const [phase, span] of spans) {
    console.log(
      `  ${phase}: ${((span.to - span.from) / 1000).toFixed(1)} s (from ${(span.from / 1000).toFixed(1)} s)`,
    );
  }
  const floors = [];
  for (let i = 0; i < 5; i++) floors.push(/** @type {number} */ (await floor()));
  floors.sort((a, b) => a - b);
  console.log(`baseline: bare node process, SIGINT to exit: median ${floors[2]?.toFixed(0)} ms`);
  // The CLI run also loads the CLI first (about 1 s), so its phases start a little later.
  for (const phase of ["chunk", "train", "embed"]) {
    const span = spans.get(phase);
    if (!span) continue;
    const delay = Math.round(1000 + (span.from + span.to) / 2);
    const r = /** @type {{ code: number, stopMs: number, message: string }} */ (await index(root, delay));
    console.log(
      `SIGINT in ${phase} (at ${(delay / 1000).toFixed(1)} s): stopped in ${r.stopMs?.toFixed(0)} ms, exit ${r.code}: ${r.message}`,
    );
  }
} finally {
  rmSync(join(root, ".."), { recursive: true, force: true });
}
