// Event-to-page latency (issue 16 target: under 200 ms) and the page's responsiveness while sessions
// stream. Agents replayed from cassettes run commands that print a line every 50 ms; every `output`
// event carries the engine's time (`at`). On the page, a MutationObserver notes when each output line
// is inserted into the agents board and the next animation frame after it (drawn): latency = that
// frame's time - at. Baseline in the same run: a plain SSE reader in Node on the same /api/events
// (transport only, no browser). With 1 and with 20 sessions at once; for 20 also the page's long tasks
// (> 50 ms) and its worst timer lag while they stream.
//   node bench/webui/latency.mjs   (after npm run build)

import { writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { launch, scratchRepo, serve } from "./lib.mjs";

const TICKS = 60;

function sseTimes(served, sink) {
  const url = new URL(served.url);
  const req = request({
    host: "127.0.0.1",
    port: url.port,
    path: "/api/events",
    headers: { authorization: `Bearer ${served.token}`, accept: "text/event-stream" },
  });
  req.on("response", (res) => {
    let buffer = "";
    res.on("data", (chunk) => {
      const now = Date.now();
      buffer += chunk;
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").find((line) => line.startsWith("data: "));
        if (data) {
          const event = JSON.parse(data.slice(6));
          if (event.type === "output") sink.push({ session: event.session, ms: now - Date.parse(event.at) });
        }
        end = buffer.indexOf("\n\n");
      }
    });
  });
  req.end();
  return () => req.destroy();
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : Number.NaN;
};
const line = (label, values) =>
  `${label}: n=${values.length} p50 ${quantile(values, 0.5)} ms, p95 ${quantile(values, 0.95)} ms, max ${Math.max(...values)} ms`;

async function pageCredential(served) {
  const landing = await fetch(served.url, { redirect: "manual" });
  const cookie = landing.headers.get("set-cookie").split(";")[0];
  const csrf = (await (await fetch(`${served.origin}/api/csrf`, { headers: { cookie } })).json()).csrf;
  return { cookie, "x-umbra-csrf": csrf };
}

async function round(sessions, parent, served, page, credential) {
  const workspace = (await (await fetch(`${served.origin}/api/workspaces`, { headers: credential })).json())
    .workspaces[0].id;
  const transport = [];
  const stop = sseTimes(served, transport);
  const prefix = `tick ${sessions}-`;
  await page.evaluate((prefix) => {
    window.__lat = [];
    window.__lag = 0;
    window.__long = 0;
    const observer = new MutationObserver((records) => {
      const added = [];
      // this round's sessions only (a page is sent the kept events of earlier rounds when it opens)
      for (const record of records)
        for (const node of record.addedNodes)
          if (
            node instanceof HTMLElement &&
            node.dataset.type === "output" &&
            node.closest("article.session")?.querySelector(".task")?.textContent.startsWith(prefix)
          )
            added.push(Date.parse(node.dataset.at));
      if (added.length)
        requestAnimationFrame(() => {
          const now = Date.now();
          for (const at of added) window.__lat.push(now - at);
        });
    });
    observer.observe(document.getElementById("board"), { childList: true, subtree: true });
    new PerformanceObserver((list) => {
      window.__long += list.getEntries().length;
    }).observe({ type: "longtask" });
    let last = performance.now();
    setInterval(() => {
      const now = performance.now();
      window.__lag = Math.max(window.__lag, now - last - 20);
      last = now;
    }, 20);
  }, prefix);
  const started = Date.now();
  const ids = new Set();
  for (let n = 1; n <= sessions; n++) {
    const cassette = join(parent, `tick-${sessions}-${n}.jsonl`);
    const turns = [
      {
        toolCalls: [
          {
            name: "run_command",
            input: { command: `for i in $(seq 1 ${TICKS}); do echo tick-${n}-$i; sleep 0.05; done` },
          },
        ],
      },
      { text: "Done." },
    ];
    writeFileSync(
      cassette,
      `${[
        {
          type: "cassette",
          version: 1,
          note: "bench",
          provider: "openai-compatible",
          model: "fake-model",
          baseUrl: "http://127.0.0.1/v1",
        },
        ...turns.map((turn, i) => ({
          type: "exchange",
          n: i,
          request: { method: "POST", path: "/v1/chat/completions", body: {} },
          response: { status: 200, headers: { "content-type": "text/event-stream" }, body: sse(turn) },
        })),
      ]
        .map((x) => JSON.stringify(x))
        .join("\n")}\n`,
    );
    const res = await fetch(`${served.origin}/api/workspaces/${workspace}/sessions`, {
      method: "POST",
      headers: { ...credential, "content-type": "application/json" },
      body: JSON.stringify({ task: `tick ${sessions}-${n}`, cassette }),
    });
    if (res.status !== 201) throw new Error(`start: ${res.status} ${await res.text()}`);
    ids.add((await res.json()).id);
  }
  // until every session's last tick is on the page
  await page.waitForFunction(
    (count) =>
      document.querySelectorAll('#board li[data-type="output"]').length > 0 &&
      [...document.querySelectorAll("#board article.session")].filter((card) =>
        card.textContent.includes("-60"),
      ).length >= count,
    sessions,
    { timeout: 300_000, polling: 200 },
  );
  await page.waitForTimeout(500);
  stop();
  const result = await page.evaluate(() => ({ lat: window.__lat, lag: window.__lag, long: window.__long }));
  console.log(`--- ${sessions} session(s) streaming (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  // this round's sessions only: a new stream is sent the kept events of earlier rounds first
  console.log(
    line(
      "  engine -> Node SSE reader (baseline)",
      transport.filter((e) => ids.has(e.session)).map((e) => e.ms),
    ),
  );
  console.log(line("  engine -> drawn on the page", result.lat));
  console.log(`  page: ${result.long} long task(s) > 50 ms, worst timer lag ${result.lag.toFixed(0)} ms`);
}

function sse(turn) {
  const chunk = (delta, finish) =>
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "fake-model",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  const events = [chunk({ role: "assistant", content: "" }, null)];
  if (turn.text) events.push(chunk({ content: turn.text }, null));
  (turn.toolCalls ?? []).forEach((call, index) => {
    events.push(
      chunk(
        {
          tool_calls: [
            {
              index,
              id: `call_${index}_${Math.random().toString(36).slice(2)}`,
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.input) },
            },
          ],
        },
        null,
      ),
    );
  });
  events.push(chunk({}, turn.toolCalls?.length ? "tool_calls" : "stop"));
  events.push(
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "fake-model",
      choices: [],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    }),
  );
  return `${events.map((e) => `data: ${e}\n\n`).join("")}data: [DONE]\n\n`;
}

const { parent, root } = scratchRepo({ "README.md": "# bench\n" });
const served = await serve(parent, root);
const browser = await launch();
try {
  const credential = await pageCredential(served);
  for (const sessions of [1, 20]) {
    const page = await browser.newPage();
    await page.goto(served.url);
    await page.waitForSelector("#live.on");
    await round(sessions, parent, served, page, credential);
    await page.close();
  }
} finally {
  await browser.close();
  await served.stop();
}
