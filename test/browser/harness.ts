import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { saveEvalRun } from "../../src/eval/store.js";
import { type ScriptedTurn, sseBody } from "../fakes/fake-openai.js";
import { CLI, requireBuiltCli } from "../helpers/cli.js";
import { stopEngines } from "../helpers/engine.js";
import { evalResults } from "../helpers/eval-results.js";
import { isolatedEnv } from "../helpers/mcp.js";
import { scaled, waitUntil } from "../helpers/wait.js";
import { committedRepository, tempDir } from "../helpers/workspace.js";
import { type ApiClient, body, client, raw } from "../http/client.js";

/**
 * What the browser tests share: Debian's chromium driven by playwright-core, the engine started as a
 * user starts it (`umbra serve --http`, the built CLI), cassettes written for the scripted agents, and
 * the screenshots folder (test/browser/screenshots/, git-ignored) for a person to look at.
 */

export const SCREENSHOTS = join(import.meta.dirname, "screenshots");

/** Debian's chromium (UMBRA_CHROMIUM to use another build). */
export const CHROMIUM = process.env.UMBRA_CHROMIUM ?? "/usr/bin/chromium";

/**
 * Headless chromium. Its own sandbox needs unprivileged user namespaces and refuses to start as root;
 * CI runs as root, so there (and only in these tests, which load nothing but umbra's own page from
 * 127.0.0.1) it runs with --no-sandbox. As any other user it keeps its sandbox.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: apt-get install chromium (.ci/run installs it), or set UMBRA_CHROMIUM`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
    timeout: scaled(60_000),
  });
}

export interface Served {
  url: string;
  port: number;
  env: NodeJS.ProcessEnv;
  home: string;
  stop(): Promise<void>;
}

/**
 * `umbra serve --http --root ROOT` with a data dir of its own (and `extraEnv`: a model for sessions that
 * are not replays); resolves once it printed its URL.
 */
export async function serveHttp(root: string, extraEnv: Record<string, string> = {}): Promise<Served> {
  requireBuiltCli();
  const home = await tempDir("browser-home");
  const env = { ...isolatedEnv(home), ...extraEnv };
  await mkdir(join(home, "config", "umbra"), { recursive: true });
  // bounds a loaded machine needs for language servers (as test/agent's testEnv)
  await writeFile(
    join(home, "config", "umbra", "config.json"),
    JSON.stringify({ lsp: { requestTimeoutMs: 90_000, lintTimeoutMs: 100_000 } }),
  );
  const child: ChildProcess = spawn(process.execPath, [CLI, "serve", "--http", "--root", root], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitUntil(
    () => stdout.includes("\n") || child.exitCode !== null,
    "umbra serve --http to print its URL",
  );
  const url = stdout.split("\n")[0] ?? "";
  const port = Number(/:(\d+)\//.exec(url)?.[1]);
  if (!port) throw new Error(`umbra serve --http printed no URL: ${stdout}${stderr}`);
  return {
    url,
    port,
    env,
    home,
    stop: async () => {
      await stopEngines(env);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    },
  };
}

/**
 * The page's credential outside the browser (cookie + CSRF value), for a test that starts many sessions
 * at once: only the page may name a cassette.
 */
export async function pageClient(served: Served): Promise<ApiClient> {
  const landing = await raw(served.port, "GET", new URL(served.url).pathname + new URL(served.url).search);
  const cookie = String(landing.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
  const csrf = body<{ csrf: string }>(await client(served.port, { cookie }).get("/api/csrf")).csrf;
  return client(served.port, { cookie, "x-umbra-csrf": csrf });
}

/**
 * A hand-written cassette: the model's answers, one turn per request, as the OpenAI-compatible endpoint
 * streams them (test/fakes/fake-openai.ts). The requests are not recorded, so a replay warns that they
 * differ and answers in order, which is all a scripted agent needs.
 */
export async function writeCassette(path: string, note: string, turns: ScriptedTurn[]): Promise<string> {
  const lines = [
    {
      type: "cassette",
      version: 1,
      note,
      provider: "openai-compatible",
      model: "fake-model",
      baseUrl: "http://127.0.0.1/v1",
    },
    ...turns.map((turn, n) => ({
      type: "exchange",
      n,
      request: { method: "POST", path: "/v1/chat/completions", body: {} },
      response: { status: 200, headers: { "content-type": "text/event-stream" }, body: sseBody(turn) },
    })),
  ];
  await writeFile(path, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
  return path;
}

/** A git repository with `files`, committed. */
export function repository(files: Record<string, string>): Promise<string> {
  return committedRepository("browser-ws", files);
}

export interface OpenedPage {
  page: Page;
  /** The page's script errors and console errors (CSP violations among them) so far. */
  problems: string[];
}

/** Opens the printed URL (the page trades the token for its cookie) and waits for the shell. */
export async function openPage(browser: Browser, served: Served): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(scaled(60_000));
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => {
    // a failed request is reported below with its address and answer
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
      problems.push(message.text());
  });
  page.on("response", async (response) => {
    if (response.status() >= 400)
      problems.push(
        `${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}: ${await response.text().catch(() => "")}`,
      );
  });
  await page.goto(served.url);
  await page.waitForSelector("header nav");
  return { page, problems };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Two stored eval runs of the workspace (as `umbra eval` leaves them): a-model passes 1 of 3, b-model 3. */
export async function storeEvalRuns(root: string, env: NodeJS.ProcessEnv): Promise<[string, string]> {
  // a task name is untrusted text: it must stay text in the report
  const results = (model: string, passed: boolean[]) =>
    evalResults(model, passed, "<img src=x onerror=alert(1)>");
  const real = realpathSync(root);
  const a = await saveEvalRun(
    real,
    results("a-model", [true, false, false]),
    [],
    env,
    new Date("2026-01-01T00:00:00Z"),
  );
  const b = await saveEvalRun(
    real,
    results("b-model", [true, true, true]),
    [],
    env,
    new Date("2026-01-02T00:00:00Z"),
  );
  return [a, b];
}
