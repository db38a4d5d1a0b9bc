#!/usr/bin/env node
// @ts-check
/**
 * MCP benchmark (issue 14), through the product path: `umbra mcp` spawned over stdio and driven by the
 * MCP SDK's own Client, as Claude Code or Codex launch it; `umbra mcp` reaches the user's engine
 * (`umbra serve`, started on demand), which holds the index open and the language servers warm. Each
 * figure has its baselines measured in the same run:
 *   search   warm `search` over MCP over ≥100k chunks (p50/p95), agent-style queries and whole issue
 *            texts; beside it search() in this process (no transport, no previews), `umbra search --json`
 *            as a process per query with the engine (warm) and without it (UMBRA_ENGINE=off: cold), and
 *            `rg -l -w IDENTIFIER` over the tree; and the first search after each of a few edits of the tree
 *            (once the engine's watcher synced it: the index it opened anew answers);
 *   lints    warm TypeScript `lints` over MCP on hono: branch_create, then edit → lints cycles (p50);
 *   clients  engine memory with N MCP clients (default 10) connected and working at once, each in its own
 *            branch of hono (search, edit, lints), sampled from the engine's `status`.
 * The engine is stopped before and after the run, so each run measures a fresh one.
 * Usage: node bench/mcp/run.mjs [--cli PATH] [--big DIR] [--home DIR] [--rounds N] [--settle SECONDS] [--cli-queries N] [--edits N] [--lint-cycles N]
 *          [--clients N] [--client-seconds S] [--sections search,lints,clients] [--out FILE]
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { honoProject, percentile, treeRssMiB } from "../lint/projects.mjs";
import { AGENT_QUERIES, issueQueries, rgFiles } from "./queries.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WORK = join(ROOT, "bench", ".work", "mcp");
const { values } = parseArgs({
  options: {
    // the build measured (default this checkout's): another one's dist/cli/main.js compares two builds
    cli: { type: "string", default: join(ROOT, "dist", "cli", "main.js") },
    big: { type: "string", default: join(ROOT, "bench", ".work", "big") },
    // the data directory bench/speed (section 4) indexes the big tree into: indexed once for both
    home: { type: "string", default: join(ROOT, "bench", ".work", "speed", "home-big") },
    rounds: { type: "string", default: "3" },
    // seconds to wait after the warm-up (and the engine's first check of the tree) before measuring
    settle: { type: "string", default: "10" },
    "cli-queries": { type: "string", default: "12" },
    // searches timed right after an edit of the tree (each once the engine has synced it)
    edits: { type: "string", default: "8" },
    "lint-cycles": { type: "string", default: "20" },
    clients: { type: "string", default: "10" },
    "client-seconds": { type: "string", default: "60" },
    sections: { type: "string", default: "search,lints,clients" },
    out: { type: "string", default: join(ROOT, "bench", "out", "mcp.json") },
  },
});
const CLI = resolve(values.cli);
const big = resolve(values.big);
const sections = new Set(values.sections.split(","));
const env = { ...process.env, UMBRA_HOME: resolve(values.home) };
mkdirSync(env.UMBRA_HOME, { recursive: true, mode: 0o700 });
const log = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);
const round1 = (/** @type {number} */ x) => Math.round(x * 10) / 10;
/** @param {number[]} xs */
const summary = (xs) => ({
  n: xs.length,
  p50Ms: round1(percentile(xs, 50)),
  p95Ms: round1(percentile(xs, 95)),
  maxMs: round1(Math.max(...xs)),
});

/**
 * One MCP client: `umbra mcp --root ROOT` over stdio, as Claude Code or Codex launch it.
 * @param {string} root
 * @param {string} name
 */
async function connect(root, name) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", "--root", root],
    env: /** @type {Record<string, string>} */ (env),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  /**
   * Calls a tool; returns its structured result (a tool error throws, with the server's message).
   * @param {string} tool
   * @param {Record<string, unknown>} args
   * @returns {Promise<any>}
   */
  const call = async (tool, args) => {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
    if (result.isError) {
      const text = /** @type {{ text?: string }[]} */ (result.content ?? []).map((c) => c.text).join(" ");
      throw new Error(`${tool} failed: ${text}\n${stderr}`);
    }
    return result.structuredContent ?? result.content;
  };
  /** @param {string} tool @param {Record<string, unknown>} args */
  const timedCall = async (tool, args) => {
    const started = performance.now();
    const result = await call(tool, args);
    return { ms: performance.now() - started, result };
  };
  return { transport, call, timedCall, close: () => client.close() };
}

/** `umbra ARGS` as a process; throws with its stderr when it fails. @param {string[]} args @param {NodeJS.ProcessEnv} [withEnv] */
function umbra(args, withEnv = env, input = "") {
  const run = spawnSync(process.execPath, [CLI, ...args], {
    env: withEnv,
    input,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (run.status !== 0) throw new Error(`umbra ${args.join(" ")} failed: ${run.stderr.slice(-2000)}`);
  return run.stdout;
}
const noEngine = { ...env, UMBRA_ENGINE: "off" };
/** Stops the user's engine if one runs (so the run starts with a fresh one, and leaves none behind). */
function stopEngine() {
  spawnSync(process.execPath, [CLI, "serve", "--stop"], { env, stdio: "ignore" });
}
stopEngine();

const results = /** @type {Record<string, unknown>} */ ({
  at: new Date().toISOString(),
  machine: `${process.platform} ${process.arch}, node ${process.version}, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
});

/** A source file of the big tree that the edits below append a comment to (and restore after). */
const EDITED = "pallets+flask/src/flask/helpers.py";

/**
 * Warm search right after the user saved a file: `n` times, a comment appended to EDITED, the engine's
 * watcher left to sync it (its status reports the sync done), then one search (the first on the index
 * opened after the sync) and the same search again. The file is restored afterwards.
 * @param {Awaited<ReturnType<typeof connect>>} mcp
 * @param {number} n
 */
async function searchesAfterEdits(mcp, n) {
  const file = join(big, EDITED);
  const original = readFileSync(file);
  const first = [];
  const again = [];
  const syncMs = [];
  try {
    for (let i = 0; i < n; i++) {
      const before = (await mcp.call("status", {})).index?.lastSync;
      const edited = performance.now();
      writeFileSync(file, Buffer.concat([original, Buffer.from(`\n# edited by bench/mcp ${i}\n`)]));
      for (;;) {
        const index = (await mcp.call("status", {})).index;
        if (index?.lastSync !== before && !index?.syncing) break;
        if (performance.now() - edited > 120_000) throw new Error("the engine did not sync an edit in 2 min");
        await new Promise((r) => setTimeout(r, 20));
      }
      syncMs.push(performance.now() - edited);
      const query = AGENT_QUERIES[i % AGENT_QUERIES.length] ?? "";
      first.push((await mcp.timedCall("search", { query, limit: 10 })).ms);
      again.push((await mcp.timedCall("search", { query, limit: 10 })).ms);
    }
  } finally {
    writeFileSync(file, original);
  }
  return {
    edits: n,
    firstSearch: summary(first),
    sameSearchAgain: summary(again),
    editToSynced: summary(syncMs),
  };
}

// 1. Warm search over MCP, next to search() in process, the CLI process and rg, in the same run.
if (sections.has("search")) {
  if (!existsSync(big)) throw new Error(`no ${big}: run bench/speed/prepare-big.sh first`);
  log(`index of ${big} (a no-change run when it exists)…`);
  umbra(["index", big], noEngine);
  const { openIndex } = await import(join(ROOT, "dist", "index", "open.js"));
  const { search } = await import(join(ROOT, "dist", "index", "search", "searcher.js"));
  const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
  const index = await openIndex(big, loadConfig({ env: {} }), env);
  const mcp = await connect(big, "bench-search");
  const status = await mcp.call("status", {});
  const sets = { agent: AGENT_QUERIES, issues: issueQueries() };
  // warm up: the engine opens the index on the first search, the JIT settles over the next ones
  for (const query of AGENT_QUERIES.slice(0, 8)) {
    await mcp.call("search", { query, limit: 10 });
    await search(index, query, { limit: 10 });
  }
  // the engine's watcher checks the tree once when it opens the index: warm is after that
  const settleStarted = performance.now();
  while ((await mcp.call("status", {})).index?.syncing) await new Promise((r) => setTimeout(r, 500));
  await new Promise((r) => setTimeout(r, Number(values.settle) * 1000));
  log(`engine settled after ${Math.round(performance.now() - settleStarted)} ms`);
  /** @type {Record<string, unknown>} */
  const bySet = {};
  for (const [name, queries] of Object.entries(sets)) {
    const overMcp = [];
    const firstOverMcp = [];
    const inProcess = [];
    const rg = [];
    // each measured on its own (not interleaved query by query): the in-process search and rg, run
    // between MCP calls, would take the CPU caches and the page cache from the engine in turn
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const query of queries) {
        const { ms, result } = await mcp.timedCall("search", { query, limit: 10 });
        if (!Array.isArray(result?.hits))
          throw new Error(`search gave no hits array: ${JSON.stringify(result)}`);
        overMcp.push(ms);
        if (round === 0) firstOverMcp.push(ms);
      }
    }
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const query of queries) {
        const started = performance.now();
        await search(index, query, { limit: 10 });
        inProcess.push(performance.now() - started);
      }
    }
    for (const query of queries) {
      const rgStarted = performance.now();
      rgFiles(query, big);
      rg.push(performance.now() - rgStarted);
    }
    const cliWarm = [];
    const cliCold = [];
    for (const query of queries.slice(0, Number(values["cli-queries"]))) {
      for (const [times, withEnv] of [
        [cliWarm, env],
        [cliCold, noEngine],
      ]) {
        const started = performance.now();
        umbra(["search", "-", "--root", big, "--json"], /** @type {NodeJS.ProcessEnv} */ (withEnv), query);
        /** @type {number[]} */ (times).push(performance.now() - started);
      }
    }
    bySet[name] = {
      queries: queries.length,
      rounds: Number(values.rounds),
      mcp: summary(overMcp),
      // each query's first time (later rounds repeat the same queries: SQLite's and LanceDB's caches hold
      // what they read)
      mcpFirstRound: summary(firstOverMcp),
      // the later rounds alone: each query again (the engine's preview cache and the stores' caches hold it)
      mcpRepeats: summary(overMcp.slice(queries.length)),
      inProcess: summary(inProcess),
      cliWithEngine: summary(cliWarm),
      cliWithoutEngine: summary(cliCold),
      rg: summary(rg),
    };
    log(`${name}: ${JSON.stringify(bySet[name])}`);
  }
  bySet.afterEdit = await searchesAfterEdits(mcp, Number(values.edits));
  log(`after an edit: ${JSON.stringify(bySet.afterEdit)}`);
  const engine = (await mcp.call("status", {})).engine;
  await mcp.close();
  index.close();
  results.search = {
    dir: big,
    chunks: status?.index?.chunks,
    files: status?.index?.files,
    engineRssMiB: round1((engine?.rssBytes ?? 0) / 2 ** 20),
    ...bySet,
  };
}

/**
 * hono, laid out once for both sections that edit it, indexed, and the edits its cycles make: each one
 * replaces the line after a line found once in the file (so `edit` has exactly one match).
 */
const hono = sections.has("lints") || sections.has("clients") ? honoProject() : undefined;
if (hono) umbra(["index", hono.root], noEngine);
/** @param {string} text */
function uniqueAnchor(text) {
  const lines = text.split("\n");
  const anchor = lines.findLast(
    (line) => line.trim().length > 3 && lines.indexOf(line) === lines.lastIndexOf(line),
  );
  if (!anchor) throw new Error("no line found once in the edited file");
  return anchor;
}

// 2. Warm TypeScript lints over MCP: a branch of hono, one-line edits, lints of exactly that version.
if (sections.has("lints")) {
  if (!hono) throw new Error("no hono mirror under ../.mirror (honojs+hono)");
  const mcp = await connect(hono.root, "bench-lints");
  const branch = (await mcp.call("branch_create", { label: "bench-lints" })).id;
  const anchor = uniqueAnchor(readFileSync(join(hono.root, hono.file), "utf8"));
  const edits = [];
  const lints = [];
  let tail = "";
  let reported = 0;
  const cycles = Number(values["lint-cycles"]);
  for (let i = 0; i <= cycles; i++) {
    const next = `\n${hono.line(i)}`;
    const edit = await mcp.timedCall("edit", {
      branch,
      path: hono.file,
      search: `${anchor}${tail}`,
      replace: `${anchor}${next}`,
    });
    if (!edit.result?.ok) throw new Error(`edit ${i} failed: ${JSON.stringify(edit.result)}`);
    tail = next;
    const lint = await mcp.timedCall("lints", { branch, path: hono.file });
    // odd edits use an undeclared name: the lints must report it (even ones are clean)
    if (i % 2 === 1 && JSON.stringify(lint.result).includes(hono.undeclared(i))) reported++;
    // the first cycle starts the language server and loads the project: not warm
    if (i === 0) continue;
    edits.push(edit.ms);
    lints.push(lint.ms);
  }
  await mcp.call("branch_discard", { branch });
  await mcp.close();
  results.lints = {
    project: hono.name,
    file: hono.file,
    cycles,
    edit: summary(edits),
    lints: summary(lints),
    undeclaredReported: `${reported} of ${Math.ceil(cycles / 2)}`,
  };
  log(`lints: ${JSON.stringify(results.lints)}`);
}

// 3. Engine memory with N clients connected and working, each in its own branch.
if (sections.has("clients")) {
  if (!hono) throw new Error("no hono mirror under ../.mirror (honojs+hono)");
  const n = Number(values.clients);
  const clients = [];
  for (let i = 0; i < n; i++) clients.push(await connect(hono.root, `bench-client-${i}`));
  const first = /** @type {Awaited<ReturnType<typeof connect>>} */ (clients[0]);
  const idle = (await first.call("status", {})).engine;
  const until = Date.now() + Number(values["client-seconds"]) * 1000;
  const anchor = uniqueAnchor(readFileSync(join(hono.root, hono.file), "utf8"));
  let calls = 0;
  const work = clients.map(async (mcp, c) => {
    const branch = (await mcp.call("branch_create", { label: `bench-client-${c}` })).id;
    let tail = "";
    for (let i = 0; Date.now() < until; i++) {
      await mcp.call("search", { query: `${hono.undeclared(i)} app route handler`, limit: 10 });
      const next = `\nexport const client${c}Edit${i} = ${i};`;
      await mcp.call("edit", {
        branch,
        path: hono.file,
        search: `${anchor}${tail}`,
        replace: `${anchor}${next}`,
      });
      tail = next;
      await mcp.call("lints", { branch, path: hono.file });
      calls += 3;
    }
    return branch;
  });
  /** @type {{ clients: number, ownMiB: number, treeMiB: number }[]} */
  const samples = [];
  while (Date.now() < until) {
    const engine = (await first.call("status", {})).engine;
    samples.push({
      clients: engine.clients,
      ownMiB: engine.rssBytes / 2 ** 20,
      treeMiB: treeRssMiB(engine.pid),
    });
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const branches = await Promise.all(work);
  const adapters = clients.map((mcp) => treeRssMiB(mcp.transport.pid ?? undefined));
  for (const [c, branch] of branches.entries()) await clients[c]?.call("branch_discard", { branch });
  for (const mcp of clients) await mcp.close();
  results.clients = {
    project: hono.name,
    clients: n,
    seconds: Number(values["client-seconds"]),
    calls,
    clientsSeenByEngine: Math.max(...samples.map((s) => s.clients)),
    engineIdleMiB: round1(idle.rssBytes / 2 ** 20),
    enginePeakMiB: round1(Math.max(...samples.map((s) => s.ownMiB))),
    engineWithServersPeakMiB: round1(Math.max(...samples.map((s) => s.treeMiB))),
    mcpAdapterMiBEach: round1(percentile(adapters, 50)),
  };
  log(`clients: ${JSON.stringify(results.clients)}`);
}

stopEngine();
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
mkdirSync(WORK, { recursive: true });
appendFileSync(join(WORK, "history.jsonl"), `${JSON.stringify(results)}\n`);
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
