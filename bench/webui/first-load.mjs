// The web UI's first load: every byte the browser receives (headers and bodies, as Chrome's network
// layer counts them) from opening the printed URL until the agents board has drawn, with an empty cache.
// Split by kind: the page's own files, Prism (the one vendored library), the API answers the page asks.
// Budget (issue 16): under 300 KB.   node bench/webui/first-load.mjs  (after npm run build)
import { launch, scratchRepo, serve } from "./lib.mjs";

const { parent, root } = scratchRepo({ "src/app.ts": "export const answer = 42;\n" });
const served = await serve(parent, root);
const browser = await launch();
try {
  const runs = [];
  for (let run = 0; run < 3; run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    const urls = new Map();
    const bytes = { page: 0, prism: 0, api: 0, other: 0 };
    let requests = 0;
    cdp.on("Network.responseReceived", (event) => urls.set(event.requestId, event.response.url));
    cdp.on("Network.loadingFinished", (event) => {
      requests++;
      const url = new URL(urls.get(event.requestId) ?? "about:blank");
      const kind = url.pathname.startsWith("/api/")
        ? "api"
        : url.pathname.includes("/vendor/prism")
          ? "prism"
          : url.origin === served.origin
            ? "page"
            : "other";
      bytes[kind] += event.encodedDataLength;
    });
    const start = performance.now();
    await page.goto(served.url);
    await page.waitForSelector("#board", { state: "attached" });
    await page.waitForLoadState("networkidle");
    const ms = performance.now() - start;
    const total = bytes.page + bytes.prism + bytes.api + bytes.other;
    runs.push({ total, ...bytes, requests, ms });
    await context.close();
  }
  const kb = (n) => (n / 1024).toFixed(1);
  for (const [i, r] of runs.entries())
    console.log(
      `run ${i + 1}: ${kb(r.total)} KB in ${r.requests} responses (page files ${kb(r.page)} KB, prism ${kb(r.prism)} KB, api ${kb(r.api)} KB, elsewhere ${kb(r.other)} KB), ${r.ms.toFixed(0)} ms to the drawn board`,
    );
  const worst = Math.max(...runs.map((r) => r.total));
  console.log(`first load: ${kb(worst)} KB (budget 300 KB: ${worst < 300 * 1024 ? "met" : "OVER"})`);
} finally {
  await browser.close();
  await served.stop();
}
