import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { cleanup } from "../helpers/workspace.js";
import {
  launchBrowser,
  type OpenedPage,
  openPage,
  repository,
  type Served,
  screenshot,
  serveHttp,
  storeEvalRuns,
  writeCassette,
} from "./harness.js";

// The whole web UI against `umbra serve --http` as a user starts it: two agents replayed from cassettes
// run at once and their events appear live on the board; one asks for the network, the request waits in
// the approvals queue, is approved there and its command goes on; one hunk of the other's branch is
// accepted from the review page, the user's folder then holds exactly that hunk, and undo takes it back.
// Then: a rule saved "for this repository" is listed and removed; an agent's HTML in a request stays
// text and a denied command does not run; stop and resume; an eval report and an A/B comparison.
// Screenshots of each page go to test/browser/screenshots/.

const LINES = Array.from({ length: 30 }, (_, i) => `export const v${i + 1} = ${i + 1};`);
const BASE = `${LINES.join("\n")}\n`;
const ONLY_FIRST = BASE.replace("export const v2 = 2;", "export const v2 = 200;");

let root: string;
let served: Served;
let browser: Browser;
let opened: OpenedPage;
let page: Page;
let model: FakeOpenAI;
let cassettes: { edits: string; network: string; repository: string; hostile: string; slow: string };

beforeAll(async () => {
  root = await repository({ "values.ts": BASE, "README.md": "# values\n" });
  // the model of sessions that are not replays (a resumed one): scripted, on loopback
  model = await startFakeOpenAI([{ text: "Resumed: nothing more to do." }]);
  served = await serveHttp(root, { UMBRA_MODEL: "fake-model", UMBRA_MODEL_BASE_URL: model.url });
  cassettes = {
    edits: await writeCassette(join(served.home, "edits.jsonl"), "two edits, then the tests", [
      {
        text: "I change v2 and v28.",
        toolCalls: [
          {
            name: "edit",
            input: { path: "values.ts", search: "export const v2 = 2;", replace: "export const v2 = 200;" },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: "edit",
            input: {
              path: "values.ts",
              search: "export const v28 = 28;",
              replace: "export const v28 = 2800;",
            },
          },
        ],
      },
      { toolCalls: [{ name: "run_command", input: { command: "echo tests-ran" } }] },
      { text: "Done: v2 and v28 changed." },
    ]),
    repository: await writeCassette(join(served.home, "repository.jsonl"), "asks for the network again", [
      {
        toolCalls: [
          { name: "run_command", input: { command: "echo again", network: true, reason: "again" } },
        ],
      },
      { text: "Done." },
    ]),
    hostile: await writeCassette(join(served.home, "hostile.jsonl"), "a request in HTML", [
      {
        toolCalls: [
          {
            name: "run_command",
            input: {
              command: "echo '<img src=x onerror=\"window.__pwned=3\">'",
              network: true,
              reason: "<b>trust me</b>",
            },
          },
        ],
      },
      { text: "Done." },
    ]),
    slow: await writeCassette(join(served.home, "slow.jsonl"), "a command that takes long", [
      { toolCalls: [{ name: "run_command", input: { command: "echo started-slow; sleep 600" } }] },
      { text: "Done." },
    ]),
    network: await writeCassette(
      join(served.home, "network.jsonl"),
      "one command that asks for the network",
      [
        {
          toolCalls: [
            {
              name: "run_command",
              input: {
                command: "echo fetched-with-network",
                network: true,
                reason: "download the dependencies",
              },
            },
          ],
        },
        { text: "Done: fetched." },
      ],
    ),
  };
  browser = await launchBrowser();
  opened = await openPage(browser, served);
  page = opened.page;
});

afterAll(async () => {
  await browser?.close();
  await served?.stop();
  await model?.close();
  await cleanup(served?.home, root ? join(root, "..") : undefined);
});

const card = (task: string, state?: string) =>
  page.locator(state ? `article.session[data-state="${state}"]` : "article.session", {
    has: page.locator(".task", { hasText: task }),
  });

async function startAgent(task: string, cassette: string): Promise<void> {
  await page.fill(".new-session input[name=task]", task);
  await page.fill(".new-session input[name=cassette]", cassette);
  await page.click(".new-session button[type=submit]");
  await card(task).waitFor();
}

describe("the web UI with two agents at once", () => {
  it("shows both sessions' events live on the agents board", async () => {
    await page.goto(`${new URL(served.url).origin}/#/agents`);
    await page.waitForSelector("#live.on");
    await startAgent("change v2 and v28", cassettes.edits);
    await startAgent("fetch the dependencies", cassettes.network);
    await card("change v2 and v28")
      .locator("li.event[data-type=tool]", { hasText: "edit" })
      .first()
      .waitFor();
    await card("fetch the dependencies").locator("li.event").first().waitFor();
    await screenshot(page, "agents");
  });

  it("draws each tool call once: live, the lines its history gives after a reload", async () => {
    const done = card("change v2 and v28", "done");
    await done.waitFor();
    // the tool calls and results (the history holds them; lints, notices and output are live only)
    const tools = () =>
      done
        .locator('li.event[data-type="tool"]')
        .evaluateAll((items) => items.map((item) => item.textContent?.replace(/^\S+ /, "") ?? ""));
    const live = await tools();
    await page.reload();
    await done.locator('li.event[data-type="tool"]').first().waitFor();
    // the history's lines say less (no lint counts): as many, in the same order (none twice, none lost)
    const history = await tools();
    expect(history).toHaveLength(live.length);
    expect(history.map((line) => line.split(" ").slice(0, 3).join(" "))).toEqual(
      live.map((line) => line.split(" ").slice(0, 3).join(" ")),
    );
    expect(live.length).toBeGreaterThan(1);
  });

  it("queues the network request; approving it once lets the command go on", async () => {
    await page.click('nav a[data-view="approvals"]');
    const item = page.locator(".approval", { hasText: "echo fetched-with-network" });
    await item.waitFor();
    expect(await item.textContent()).toContain("download the dependencies");
    await screenshot(page, "approvals");
    await item.locator("button.approve-once").click();
    await page.locator("#queue-empty").waitFor();
    await page.click('nav a[data-view="agents"]');
    const network = card("fetch the dependencies");
    await network.locator("li.event", { hasText: "fetched-with-network" }).first().waitFor();
    await card("fetch the dependencies", "done").waitFor();
  });

  it("accepts one hunk of the other agent's branch: the user's folder holds exactly it; undo takes it back", async () => {
    await card("change v2 and v28", "done").locator("button.review").click();
    const hunk = page.locator('section.file[data-path="values.ts"] .hunk[data-hunk="1"]');
    await page.locator('section.file[data-path="values.ts"] .hunk[data-hunk="2"]').waitFor();
    await screenshot(page, "review-agent");
    await hunk.locator("button.accept-hunk").click();
    await page.locator("#result .result.ok").waitFor();
    expect(await readFile(join(root, "values.ts"), "utf8")).toBe(ONLY_FIRST);
    await page.click("#undo");
    await page.locator("#result .result", { hasText: /values\.ts|restored|undid/i }).waitFor();
    expect(await readFile(join(root, "values.ts"), "utf8")).toBe(BASE);
  });

  it("approves for this repository: the rule is saved, listed and removable", async () => {
    await page.click('nav a[data-view="agents"]');
    await startAgent("ask again", cassettes.repository);
    await page.click('nav a[data-view="approvals"]');
    await page.locator(".approval", { hasText: "echo again" }).locator("button.approve-repo").click();
    const rule = page.locator("#rules li.rule", { hasText: "echo again" });
    await rule.waitFor();
    await screenshot(page, "approvals-rule");
    await rule.locator("button.remove-rule").click();
    await page.locator("#rules", { hasText: "No saved rules." }).waitFor();
  });

  it("shows an agent's HTML in a request as text; denying it keeps the command from running", async () => {
    await page.click('nav a[data-view="agents"]');
    await startAgent("ask in HTML", cassettes.hostile);
    await page.click('nav a[data-view="approvals"]');
    const item = page.locator(".approval", { hasText: "<img src=x" });
    await item.waitFor();
    // as the engine quotes it for the shell, shown as text
    expect(await item.locator(".command").textContent()).toContain("<img src=x onerror=");
    expect(await item.textContent()).toContain("<b>trust me</b>");
    expect(await page.locator("main img, main b").count()).toBe(0);
    await item.locator("button.deny").click();
    await page.locator("#queue-empty").waitFor();
    await page.click('nav a[data-view="agents"]');
    const hostile = card("ask in HTML");
    await hostile.locator("li.event", { hasText: "not approved" }).first().waitFor();
    await card("ask in HTML", "done").waitFor();
    expect(await hostile.locator('li.event[data-type="output"]').count()).toBe(0);
    expect(await page.evaluate("typeof window.__pwned")).toBe("undefined");
  });

  it("stops a running session, and resumes it in a new one", async () => {
    await page.click('nav a[data-view="agents"]');
    await startAgent("run something slow", cassettes.slow);
    const slow = card("run something slow");
    await slow.locator("li.event", { hasText: "started-slow" }).first().waitFor();
    await slow.locator("button.stop").click();
    await card("run something slow", "stopped").waitFor();
    const id = await slow.getAttribute("data-session");
    await slow.locator("button.resume").click();
    const resumed = page.locator("article.session", {
      has: page.locator(".where", { hasText: `resumes ${id}` }),
    });
    await resumed.locator("li.event", { hasText: "Resumed: nothing more to do." }).waitFor();
  });

  it("shows an eval run's report sandboxed, and the A/B comparison of two", async () => {
    const [a, b] = await storeEvalRuns(root, served.env);
    await page.goto(`${new URL(served.url).origin}/#/eval?a=${a}`);
    const frame = page.locator("iframe#report");
    await frame.waitFor();
    expect(await frame.getAttribute("sandbox")).toBe("");
    await page.frameLocator("iframe#report").locator("body", { hasText: "a-model" }).waitFor();
    await screenshot(page, "eval-report");
    await page.selectOption("#eval-b", b);
    await page.locator("#comparison td", { hasText: "+66.7 pts" }).first().waitFor();
    await screenshot(page, "eval-compare");
  });

  it("ran with no script error and no CSP violation", () => {
    expect(opened.problems).toEqual([]);
  });
});
