import { join } from "node:path";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcess } from "../../src/engine/client.js";
import { Engine } from "../../src/engine/engine.js";
import { EventLog } from "../../src/engine/events.js";
import { type HttpApi, serveHttpApi, workspaceId } from "../../src/http/server.js";
import { NO_HOOKS } from "../helpers/engine.js";
import { isolatedEnv } from "../helpers/mcp.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { launchBrowser, repository } from "./harness.js";

// The page's live events resume from the last event id it heard: a reload asks only for what came
// after it (?since=), the browser's own reconnect sends Last-Event-ID, and a stream the browser gave up
// on (an error answer) is opened again with ?since=, so that no reconnect replays the whole backlog.

let home: string;
let root: string;
let engine: Engine;
let http: HttpApi;
let browser: Browser;
let page: Page;
const asked: Request[] = [];

beforeAll(async () => {
  home = await tempDir("browser-events");
  root = await repository({ "README.md": "# events\n" });
  engine = new Engine({ env: isolatedEnv(home), watch: false });
  const opener = inProcess(engine, { name: "test", hooks: NO_HOOKS });
  await opener.call("status", { root });
  await opener.close();
  http = await serveHttpApi({ engine, port: 0, log: () => {} });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/api/events") asked.push(request);
  });
  await page.goto(http.url);
  await page.waitForSelector("header .live.on");
});

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await engine?.close();
  await cleanup(home, root ? join(root, "..") : undefined);
});

const publish = (message: string) =>
  engine.events.publish({ type: "notice", workspace: workspaceId(root), session: "s1", message }).id;
const cursor = async () => Number(await page.evaluate(`sessionStorage.getItem("umbra.events.last") ?? "0"`));
const since = (request: Request | undefined) =>
  request ? new URL(request.url()).searchParams.get("since") : undefined;

describe("the page's event cursor", () => {
  it("keeps the last id heard; a reload resumes after it and gets what it missed", async () => {
    expect(since(asked[0])).toBeNull();
    publish("one");
    const second = publish("two");
    await waitUntil(async () => (await cursor()) === second, "the page heard both");
    const before = asked.length;
    await page.reload();
    // published while the page was away: the resumed stream brings it
    const missed = publish("while reloading");
    await page.waitForSelector("header .live.on");
    expect(since(asked[before])).toBe(String(second));
    await waitUntil(async () => (await cursor()) === missed, "the missed event");
  });

  it("opens a stream the browser gave up on again, from where it was", async () => {
    const last = publish("before the outage");
    await waitUntil(async () => (await cursor()) === last, "the page heard it");
    let n = 0;
    const seen: Request[] = [];
    await page.route("**/api/events*", async (route) => {
      seen.push(route.request());
      n++;
      // the stream ends (the browser reconnects by itself, with Last-Event-ID), then an error answer
      // (the browser gives up), then the engine again
      if (n === 1)
        return route.fulfill({
          status: 200,
          contentType: "text/event-stream",
          body: `retry: 50\nid: ${last}\nevent: notice\ndata: {"type":"notice"}\n\n`,
        });
      if (n === 2) return route.fulfill({ status: 503, body: "" });
      return route.continue();
    });
    await page.reload();
    await waitUntil(() => seen.length >= 3, "the page to open the stream again", 15_000);
    // the browser's own reconnect (Last-Event-ID, which interception does not show) after the first
    // ended; after the error answer only the page opens a stream, from the id it heard
    expect(seen.map(since)).toEqual([String(last), String(last), String(last)]);
    await page.waitForSelector("header .live.on");
    await page.unroute("**/api/events*");
    const after = publish("after the outage");
    await waitUntil(async () => (await cursor()) === after, "live again");
  });
});

describe("EventLog.since", () => {
  it("replays after the cursor; a cursor past the last id (an earlier engine's) replays all kept", () => {
    const log = new EventLog(3);
    for (const message of ["a", "b", "c", "d"])
      log.publish({ type: "notice", workspace: "w", session: "s", message });
    expect(log.since(2).map((event) => event.id)).toEqual([3, 4]);
    expect(log.since(4)).toEqual([]);
    expect(log.since(0).map((event) => event.id)).toEqual([2, 3, 4]);
    expect(log.since(99).map((event) => event.id)).toEqual([2, 3, 4]);
  });
});
