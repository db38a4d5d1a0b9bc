import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup } from "../helpers/workspace.js";
import { body } from "../http/client.js";
import {
  launchBrowser,
  type OpenedPage,
  openPage,
  pageClient,
  repository,
  type Served,
  screenshot,
  serveHttp,
  writeCassette,
} from "./harness.js";

// Twenty sessions streaming command output at once: the page keeps answering (a click on another page
// is drawn, and back), every card keeps at most its last lines, and every session's last line arrives.
// How fast is measured in bench/webui/latency.mjs, never asserted here.

const SESSIONS = 20;
const LINES = 300;

let root: string;
let served: Served;
let browser: Browser;
let opened: OpenedPage;
let page: Page;

beforeAll(async () => {
  root = await repository({ "README.md": "# many\n" });
  served = await serveHttp(root);
  browser = await launchBrowser();
  opened = await openPage(browser, served);
  page = opened.page;
});

afterAll(async () => {
  await browser?.close();
  await served?.stop();
  await cleanup(served?.home, root ? join(root, "..") : undefined);
});

describe("twenty sessions streaming", () => {
  it("keep the page responsive and every card bounded", async () => {
    const api = await pageClient(served);
    const workspace =
      body<{ workspaces: { id: string }[] }>(await api.get("/api/workspaces")).workspaces[0]?.id ?? "";
    await page.waitForSelector("#board", { state: "attached" });
    for (let n = 1; n <= SESSIONS; n++) {
      const cassette = await writeCassette(join(served.home, `stream-${n}.jsonl`), "a command that prints", [
        {
          toolCalls: [
            {
              name: "run_command",
              input: { command: `for i in $(seq 1 ${LINES}); do echo s${n}-line-$i; done` },
            },
          ],
        },
        { toolCalls: [{ name: "run_command", input: { command: `echo s${n}-finished` } }] },
        { text: "Done." },
      ]);
      const started = await api.send("POST", `/api/workspaces/${workspace}/sessions`, {
        task: `stream ${n}`,
        cassette,
      });
      expect(started.status, started.text).toBe(201);
    }
    await page
      .locator("article.session")
      .nth(SESSIONS - 1)
      .waitFor();
    // while they stream: another page is drawn on a click, and the board comes back
    await page.click('nav a[data-view="approvals"]');
    await page.locator("main h1", { hasText: "Approvals" }).waitFor();
    await page.click('nav a[data-view="agents"]');
    await page
      .locator("article.session")
      .nth(SESSIONS - 1)
      .waitFor();
    for (let n = 1; n <= SESSIONS; n++)
      await page
        .locator("article.session", { has: page.locator(".task", { hasText: new RegExp(`^stream ${n}$`) }) })
        .locator("li.event", { hasText: `s${n}-finished` })
        .first()
        .waitFor();
    const longest = await page.$$eval("article.session ol.log", (logs) =>
      Math.max(...logs.map((log) => log.childElementCount)),
    );
    expect(longest).toBeLessThanOrEqual(200);
    await screenshot(page, "agents-twenty");
    expect(opened.problems).toEqual([]);
  });
});
