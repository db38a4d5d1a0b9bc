// @ts-check
/**
 * How long a session's event takes from the engine to a page's event stream (issue 16: "an event reaches
 * the page within 200 ms"), with N agent sessions streaming at once. The engine and the HTTP API run
 * in this process (dist/), the sessions talk to a fake OpenAI-compatible model on loopback (each makes
 * STEPS edits, then says it is done), and C clients read GET /api/events as a page does. Latency: the
 * time an event is received minus its `at` (the engine's clock, the same process; 1 ms resolution).
 * Baseline in the same run: a plain GET /api/workspaces round trip.
 *
 *   npm run build && node bench/http/events.mjs [--sessions 20] [--steps 10] [--clients 3]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Engine } from "../../dist/engine/engine.js";
import { serveHttpApi, workspaceId } from "../../dist/http/server.js";
import { median } from "../lib/stats.mjs";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "20" },
    steps: { type: "string", default: "10" },
    clients: { type: "string", default: "3" },
  },
});
const SESSIONS = Number(values.sessions);
const STEPS = Number(values.steps);
const CLIENTS = Number(values.clients);

const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

/** One streamed chat completion: a tool call (an edit creating a file) or the final text. */
function completion(/** @type {number} */ turn, /** @type {number} */ n) {
  const chunk = (/** @type {unknown} */ delta, /** @type {string | null} */ finish) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } })}\n\n`;
  if (turn >= STEPS)
    return `${chunk({ role: "assistant", content: "done" }, null)}${chunk({}, "stop")}${usage}data: [DONE]\n\n`;
  const args = JSON.stringify({ path: `s${n}-f${turn}.txt`, search: "", replace: `${turn}\n` });
  return `${chunk({ role: "assistant", content: "" }, null)}${chunk({ tool_calls: [{ index: 0, id: `call_${n}_${turn}`, type: "function", function: { name: "edit", arguments: args } }] }, null)}${chunk({}, "tool_calls")}${usage}data: [DONE]\n\n`;
}

const model = createServer((req, res) => {
  let text = "";
  req.on("data", (c) => {
    text += c;
  });
  req.on("end", () => {
    const body = JSON.parse(text);
    const turn = body.messages.filter((/** @type {{role: string}} */ m) => m.role === "tool").length;
    const task = String(
      body.messages.find((/** @type {{role: string}} */ m) => m.role === "user")?.content ?? "",
    );
    const n = Number(/session (\d+)/.exec(task)?.[1] ?? 0);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(completion(turn, n));
  });
});
await new Promise((resolve) => model.listen(0, "127.0.0.1", () => resolve(undefined)));
const modelPort = /** @type {import("node:net").AddressInfo} */ (model.address()).port;

const home = mkdtempSync(join(tmpdir(), "umbra-bench-events-"));
const root = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-events-ws-")));
mkdirSync(join(home, "config"), { recursive: true });
writeFileSync(join(root, "README.md"), "bench\n");
execFileSync("git", ["-c", "user.email=b@example.com", "-c", "user.name=b", "init", "-q"], { cwd: root });
const env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
const engine = new Engine({ env, watch: false });
const http = await serveHttpApi({ engine, port: 0, log: () => {} });
const opener = engine.connect("bench", {
  approveNetwork: async () => false,
  confirmAccept: async () => false,
});
await engine.call(opener, "status", { root });

/** @returns {Promise<{status: number, headers: import("node:http").IncomingHttpHeaders, text: string}>} */
function call(
  /** @type {string} */ method,
  /** @type {string} */ path,
  /** @type {Record<string,string>} */ headers = {},
  /** @type {string=} */ body,
) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: http.port,
        method,
        path,
        headers: { host: `127.0.0.1:${http.port}`, ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const landing = await call("GET", `/?token=${http.token}`);
const cookie = String(landing.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
const csrf = JSON.parse((await call("GET", "/api/csrf", { cookie })).text).csrf;

// baseline: a plain request's round trip, engine idle
const baseline = [];
for (let i = 0; i < 200; i++) {
  const t = performance.now();
  await call("GET", "/api/workspaces", { cookie });
  baseline.push(performance.now() - t);
}

/** @type {number[]} */
const latencies = [];
let received = 0;
const streams = [];
for (let c = 0; c < CLIENTS; c++) {
  const req = request(
    {
      host: "127.0.0.1",
      port: http.port,
      path: "/api/events",
      headers: { host: `127.0.0.1:${http.port}`, cookie },
    },
    (res) => {
      let buffer = "";
      res.on("data", (chunk) => {
        const now = Date.now();
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split("\n").find((line) => line.startsWith("data: "));
          if (!data) continue;
          latencies.push(now - Date.parse(JSON.parse(data.slice(6)).at));
          received++;
        }
      });
    },
  );
  req.end();
  streams.push(req);
}

const ws = `/api/workspaces/${workspaceId(root)}`;
const started = performance.now();
const ids = await Promise.all(
  Array.from({ length: SESSIONS }, async (_, n) => {
    const answer = await call(
      "POST",
      `${ws}/sessions`,
      { cookie, "x-umbra-csrf": csrf, "content-type": "application/json" },
      JSON.stringify({
        task: `session ${n}`,
        model: { provider: "openai-compatible", baseUrl: `http://127.0.0.1:${modelPort}/v1`, model: "m" },
      }),
    );
    if (answer.status !== 201) throw new Error(answer.text);
    return JSON.parse(answer.text).id;
  }),
);
for (;;) {
  const list = JSON.parse((await call("GET", `${ws}/sessions`, { cookie })).text).sessions;
  if (
    list.filter((/** @type {{id: string, live: boolean}} */ s) => ids.includes(s.id) && !s.live).length ===
    ids.length
  )
    break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const wall = performance.now() - started;
await new Promise((resolve) => setTimeout(resolve, 200));
for (const req of streams) req.destroy();
const states = JSON.parse((await call("GET", `${ws}/sessions`, { cookie })).text).sessions.map(
  (/** @type {{state: string}} */ s) => s.state,
);

console.log(
  JSON.stringify(
    {
      sessions: SESSIONS,
      steps: STEPS,
      clients: CLIENTS,
      done: states.filter((/** @type {string} */ s) => s === "done").length,
      wallSeconds: +(wall / 1000).toFixed(1),
      eventsReceived: received,
      eventsPerSecondPerClient: +(received / CLIENTS / (wall / 1000)).toFixed(0),
      latencyMs: {
        p50: median(latencies),
        p95: pct(latencies, 95),
        p99: pct(latencies, 99),
        max: Math.max(...latencies),
      },
      baselineGetMs: { p50: +median(baseline).toFixed(2), p95: +pct(baseline, 95).toFixed(2) },
    },
    null,
    2,
  ),
);
await http.close();
await engine.close();
model.close();
rmSync(home, { recursive: true, force: true });
rmSync(root, { recursive: true, force: true });
