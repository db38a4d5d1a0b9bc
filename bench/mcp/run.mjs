#!/usr/bin/env node
// @ts-check
/**
 * MCP benchmark (issue 14), through the product path: `umbra mcp` spawned over stdio and driven by the
 * MCP SDK's own Client, each figure next to its baselines measured in the same run.
 *   search   warm `search` over MCP over ≥100k chunks (p50/p95), agent-style queries and whole issue
 *            texts; in the same run: search() in this process (the engine's own cost, no transport), the
 *            CLI process per query (`umbra search … --json`, a cold process each time) and `rg -l -w`;
 *   lints    warm TypeScript `lints` over MCP on hono: branch_create, then edit → lints cycles (p50);
 *   clients  engine memory with N MCP clients (default 10) connected and working at once, each in its own
 *            branch (search, edit, lints).
 * Usage: node bench/mcp/run.mjs [--big DIR] [--rounds N] [--cli-queries N] [--lint-cycles N]
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
import { AGENT_QUERIES, issueQueries, rgIdentifier } from "./queries.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const WORK = join(ROOT, "bench", ".work", "mcp");
const { values } = parseArgs({
  options: {
    big: { type: "string", default: join(ROOT, "bench", ".work", "big") },
    home: { type: "string", default: join(WORK, "home") },
    rounds: { type: "string", default: "3" },
    "cli-queries": { type: "string", default: "12" },
    "lint-cycles": { type: "string", default: "20" },
    clients: { type: "string", default: "10" },
    "client-seconds": { type: "string", default: "60" },
    sections: { type: "string", default: "search,lints,clients" },
    out: { type: "string", default: join(ROOT, "bench", "out", "mcp.json") },
  },
});
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
  return { client, transport, call, timedCall, close: () => client.close() };
}

/** @param {string} tool @param {string} dir */
function mustHaveIndex(tool, dir) {
  const run = spawnSync(process.execPath, [CLI, "index", dir], { env, encoding: "utf8", stdio: "inherit" });
  if (run.status !== 0) throw new Error(`${tool}: umbra index ${dir} failed`);
}

const results = /** @type {Record<string, unknown>} */ ({
  at: new Date().toISOString(),
  machine: `${process.platform} ${process.arch}, node ${process.version}, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
});

// 1. Warm search over MCP, next to search() in process, the CLI process and rg, in the same run.
if (sections.has("search")) {
  if (!existsSync(big)) throw new Error(`no ${big}: run bench/speed/prepare-big.sh first`);
  log(`index of ${big} (a no-change run when it exists)…`);
  mustHaveIndex("search", big);
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
  /** @type {Record<string, unknown>} */
  const bySet = {};
  for (const [name, queries] of Object.entries(sets)) {
    const overMcp = [];
    const inProcess = [];
    const rg = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const query of queries) {
        const { ms, result } = await mcp.timedCall("search", { query, limit: 10 });
        if (!Array.isArray(result?.hits)) throw new Error(`search gave no hits array: ${JSON.stringify(result)}`);
        overMcp.push(ms);
        const started = performance.now();
        await search(index, query, { limit: 10 });
        inProcess.push(performance.now() - started);
        if (round === 0) {
          const rgStarted = performance.now();
          spawnSync("rg", ["-l", "-w", rgIdentifier(query), big], { maxBuffer: 1 << 30 });
          rg.push(performance.now() - rgStarted);
        }
      }
    }
    const cli = [];
    for (const query of queries.slice(0, Number(values["cli-queries"]))) {
      const started = performance.now();
      const run = spawnSync(process.execPath, [CLI, "search", "-", "--root", big, "--json"], {
        env,
        input: query,
        encoding: "utf8",
        maxBuffer: 1 << 30,
      });
      if (run.status !== 0) throw new Error(`umbra search failed: ${run.stderr}`);
      cli.push(performance.now() - started);
    }
    bySet[name] = {
      queries: queries.length,
      rounds: Number(values.rounds),
      mcp: summary(overMcp),
      inProcess: summary(inProcess),
      cliProcess: summary(cli),
      rg: summary(rg),
    };
    log(`${name}: ${JSON.stringify(bySet[name])}`);
  }
  await mcp.close();
  index.close();
  results.search = { dir: big, chunks: status?.index?.chunks, files: status?.index?.files, ...bySet };
}

// 2. Warm TypeScript lints over MCP: a branch of hono, one-line edits, lints of exactly that version.
if (sections.has("lints")) {
  const project = honoProject();
  if (!project) throw new Error("no hono mirror under ../.mirror (honojs+hono)");
  const mcp = await connect(project.root, "bench-lints");
  const branch = (await mcp.call("branch_create", { label: "bench-lints" })).id;
  const original = readFileSync(join(project.root, project.file), "utf8");
  const lastLine = original.trimEnd().split("\n").at(-1) ?? "";
  const edits = [];
  const lints = [];
  let previous = lastLine;
  let errorsSeen = 0;
  const cycles = Number(values["lint-cycles"]);
  for (let i = 0; i <= cycles; i++) {
    const line = `${lastLine}\n${project.line(i)}`;
    const edit = await mcp.timedCall("edit", { branch, path: project.file, search: previous, replace: line });
    if (!edit.result?.ok) throw new Error(`edit ${i} failed: ${JSON.stringify(edit.result)}`);
    previous = line;
    const lint = await mcp.timedCall("lints", { branch, path: project.file });
    const found = JSON.stringify(lint.result?.introduced ?? []).includes(project.undeclared(i));
    if (i % 2 === 1 && found) errorsSeen++;
    // the first cycle starts the language server and loads the project: not warm
    if (i === 0) continue;
    edits.push(edit.ms);
    lints.push(lint.ms);
  }
  await mcp.call("branch_discard", { branch });
  await mcp.close();
  results.lints = {
    project: project.name,
    file: project.file,
    cycles,
    edit: summary(edits),
    lints: summary(lints),
    undeclaredReported: `${errorsSeen} of ${Math.floor((cycles + 1) / 2)}`,
  };
  log(`lints: ${JSON.stringify(results.lints)}`);
}

// 3. Engine memory with N clients connected and working, each in its own branch.
if (sections.has("clients")) {
  const project = honoProject();
  if (!project) throw new Error("no hono mirror under ../.mirror (honojs+hono)");
  mustHaveIndex("clients", project.root);
  const n = Number(values.clients);
  const first = await connect(project.root, "bench-client-0");
  const before = (await first.call("status", {})).engine;
  const clients = [first];
  for (let i = 1; i < n; i++) clients.push(await connect(project.root, `bench-client-${i}`));
  const until = Date.now() + Number(values["client-seconds"]) * 1000;
  const original = readFileSync(join(project.root, project.file), "utf8");
  const lastLine = original.trimEnd().split("\n").at(-1) ?? "";
  let calls = 0;
  const work = clients.map(async (mcp, c) => {
    const branch = (await mcp.call("branch_create", { label: `bench-client-${c}` })).id;
    let previous = lastLine;
    for (let i = 0; Date.now() < until; i++) {
      await mcp.call("search", { query: AGENT_QUERIES[(c + i) % AGENT_QUERIES.length] ?? "", limit: 10 });
      const line = `${lastLine}\nexport const client${c}Edit${i} = ${i};`;
      await mcp.call("edit", { branch, path: project.file, search: previous, replace: line });
      previous = line;
      await mcp.call("lints", { branch, path: project.file });
      calls += 3;
    }
    return branch;
  });
  let peakEngine = 0;
  let peakTree = 0;
  /** @type {number | undefined} */
  let enginePid = before?.pid;
  const samples = [];
  const sampling = (async () => {
    while (Date.now() < until) {
      const status = (await first.call("status", {})).engine;
      enginePid = status?.pid;
      const own = (status?.rssBytes ?? 0) / 2 ** 20;
      const tree = treeRssMiB(enginePid);
      samples.push({ clients: status?.clients, own, tree });
      peakEngine = Math.max(peakEngine, own);
      peakTree = Math.max(peakTree, tree);
      await new Promise((r) => setTimeout(r, 2000));
    }
  })();
  const branches = await Promise.all(work);
  await sampling;
  const adapters = clients.map((mcp) => treeRssMiB(mcp.transport.pid ?? undefined));
  for (const [c, branch] of branches.entries()) await clients[c]?.call("branch_discard", { branch });
  for (const mcp of clients) await mcp.close();
  results.clients = {
    project: project.name,
    clients: n,
    seconds: Number(values["client-seconds"]),
    calls,
    engineIdleMiB: round1((before?.rssBytes ?? 0) / 2 ** 20),
    enginePeakMiB: round1(peakEngine),
    engineTreePeakMiB: round1(peakTree),
    clientsSeenByEngine: Math.max(...samples.map((s) => s.clients ?? 0)),
    adapterMiBEach: round1(percentile(adapters, 50)),
  };
  log(`clients: ${JSON.stringify(results.clients)}`);
}

mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
mkdirSync(WORK, { recursive: true });
appendFileSync(join(WORK, "history.jsonl"), `${JSON.stringify(results)}\n`);
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
