/**
 * Security probes through the HTTP API (`umbra serve --http`, the built CLI as the user starts it): the
 * escape suites of the MCP front end, driven by the two kinds of caller the API has. A bearer client (a
 * program holding the token) is an agent: everything it sends is untrusted. A hostile web page (another
 * origin, a DNS-rebinding name, a form post carrying the cookie) must get nothing at all. Each `attack
 * ...` probe tries one way out and must fail; `work: ...` probes are ordinary work that must keep
 * working. The reporter (test/security/reporter.ts) prints `escapes=N broken=M probes=K`.
 *
 * The workspace is the hostile one of hostile.ts. After every probe the user's folder, the fake home
 * and the folder beside are exactly as they were, and no answer quotes a secret.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type {
  AcceptResult,
  BranchSummary,
  GrepResult,
  SearchResult,
  ToolOutcome,
} from "../../src/engine/api.js";
import { workspaceId } from "../../src/http/server.js";
import { CLI, requireBuiltCli } from "../helpers/cli.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup } from "../helpers/workspace.js";
import { type Answer, type ApiClient, body, client, errorOf, raw, signIn } from "../http/client.js";
import { McpClient, stopEngine } from "../mcp/helpers.js";
import {
  expectUntouched,
  type Hostile,
  hostileWorkspace,
  LINKS_OUT,
  leak,
  NEVER_ACCEPTED,
  pathsOut,
  type Snapshot,
  snapshotAll,
} from "./hostile.js";

let h: Hostile;
let before: Snapshot;
let serve: ChildProcess;
let port: number;
let token: string;
let cookie: string;
let csrf: string;
/** The user's page: session cookie + CSRF header. */
let page: ApiClient;
/** A program the user gave the token: an agent. */
let bearer: ApiClient;
/** An agent on the same engine (MCP), to write into branches. */
let agent: McpClient;
let ws: string;
/** A branch of the workspace with an agent's edit of README.md. */
let branch: string;

/** Fails when `answer` quotes a secret; the answer. */
function clean(answer: Answer, what: string): Answer {
  expect(leak(answer.text), `${what}: ${answer.text.slice(0, 300)}`).toBeUndefined();
  return answer;
}

/** Whether `answer` refused: an error status, or a tool outcome that is not ok. */
function refusal(answer: Answer): boolean {
  return answer.status >= 400 || (answer.json as Partial<ToolOutcome> | undefined)?.ok === false;
}

async function get(path: string, as: ApiClient = bearer): Promise<Answer> {
  return clean(await as.get(path), `GET ${path}`);
}

async function post(path: string, payload: unknown, as: ApiClient = bearer): Promise<Answer> {
  return clean(await as.send("POST", path, payload), `POST ${path}`);
}

async function refusedGet(path: string, as: ApiClient = bearer): Promise<Answer> {
  const answer = await get(path, as);
  expect(refusal(answer), `GET ${path} was not refused: ${answer.text.slice(0, 300)}`).toBe(true);
  return answer;
}

/** The query string of `params` (values encoded as a browser does). */
const query = (params: Record<string, string | undefined>): string =>
  new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();

/** The entries GET .../files shows (one a line); none when it was refused. */
async function listed(path: string, target?: string): Promise<string[]> {
  const answer = await get(`${ws}/files?${query({ path, branch: target })}`);
  return refusal(answer) ? [] : body<ToolOutcome>(answer).text.split("\n");
}

async function grepped(payload: Record<string, unknown>): Promise<GrepResult["matches"]> {
  const answer = await post(`${ws}/grep`, payload);
  return answer.status === 200 ? body<GrepResult>(answer).matches : [];
}

/** A branch the agent made with README.md rewritten (and whatever `extra` files). */
async function editedBranch(label: string): Promise<string> {
  const made = await post(`${ws}/branches`, { label });
  expect(made.status, made.text).toBe(201);
  const id = body<BranchSummary>(made).id;
  await agent.ok("write_file", { branch: id, path: "README.md", content: "taken over\n" });
  return id;
}

const branchIds = async (): Promise<string[]> =>
  body<{ branches: BranchSummary[] }>(await get(`${ws}/branches`)).branches.map((b) => b.id);

beforeAll(async () => {
  requireBuiltCli();
  h = await hostileWorkspace();
  before = await snapshotAll(h);
  serve = spawn(process.execPath, [CLI, "serve", "--http", "--root", h.root], {
    env: h.env,
    stdio: ["ignore", "pipe", "ignore"],
  });
  let stdout = "";
  serve.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await waitUntil(() => stdout.includes("\n") || serve.exitCode !== null, "umbra serve --http's URL");
  const url = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)$/.exec(stdout.split("\n")[0] ?? "");
  expect(url, stdout).not.toBeNull();
  port = Number(url?.[1]);
  token = url?.[2] ?? "";
  ({ cookie, csrf, page, bearer } = await signIn(port, token));
  ws = `/api/workspaces/${workspaceId(h.root)}`;
  agent = await McpClient.open({ root: h.root, env: h.env, name: "http-probe-agent" });
  branch = await editedBranch("probes");
});

afterEach(async () => {
  if (before) await expectUntouched(h, before);
});

afterAll(async () => {
  await agent?.close();
  if (h) await stopEngine(h.env);
  if (serve && serve.exitCode === null) serve.kill("SIGKILL");
  if (h) await cleanup(h.base);
});

describe("file access through the HTTP API", () => {
  it("attack hidden: file, files, grep and search of .env and secrets/, in the folder and a branch", async () => {
    for (const target of [undefined, branch]) {
      for (const path of [".env", "secrets/id.pem"])
        await refusedGet(`${ws}/file?${query({ path, branch: target })}`);
      const names = await listed("", target);
      expect(names).toContain("README.md");
      expect(names).not.toContain(".env");
      expect(names).not.toContain("secrets/");
      expect((await listed("secrets", target)).join("\n")).not.toContain("id.pem");
      expect(await grepped({ branch: target, pattern: "SECRET" })).toEqual([]);
      expect(await grepped({ branch: target, pattern: "WS_SECRET", path: "secrets" })).toEqual([]);
    }
    const search = await post(`${ws}/search`, { query: "WS_SECRET_env WS_SECRET_pem id.pem env", limit: 50 });
    for (const hit of body<SearchResult>(search).hits ?? [])
      expect(hit.path).not.toMatch(/^(\.env|secrets\/)/);
    // a path filter cannot widen the search to hidden files or out of the workspace
    for (const path of ["secrets/**", ".env", "../**", "/etc/**", "**/.env", "homelink/**"]) {
      const filtered = await post(`${ws}/search`, { query: "secret env key passwd", path, limit: 50 });
      if (filtered.status === 200) expect(body<SearchResult>(filtered).hits).toEqual([]);
    }
  });

  it("attack links: links out (~, ~/.ssh, /etc), to hidden files, and hard links to .env and ~/.ssh/id_rsa", async () => {
    for (const target of [undefined, branch]) {
      for (const path of [
        ...LINKS_OUT,
        "up/outside.txt",
        "env-link.txt",
        "secrets-link/id.pem",
        "notes-link.txt",
        "key-copy.txt",
      ])
        await refusedGet(`${ws}/file?${query({ path, branch: target })}`);
      for (const path of ["homelink", "ssh", "etc", "up", "secrets-link"])
        expect((await listed(path, target)).join("\n")).not.toMatch(
          /\.bashrc|id_rsa|passwd|outside\.txt|id\.pem/,
        );
      expect(await grepped({ branch: target, pattern: "SECRET|root:", path: "homelink" })).toEqual([]);
      expect(await grepped({ branch: target, pattern: "SECRET", fixed: true })).toEqual([]);
    }
    const search = await post(`${ws}/search`, {
      query: "HOME_SECRET_bashrc root passwd key copy",
      limit: 50,
    });
    for (const hit of body<SearchResult>(search).hits ?? [])
      expect(hit.path).not.toMatch(/^(homelink|ssh|etc|passwd|up|notes-link|key-copy)/);
  });

  it("attack path: `..`, absolute, ~, /proc, NUL and percent-encoded paths in the query", async () => {
    for (const target of [undefined, branch]) {
      for (const path of pathsOut(h)) await refusedGet(`${ws}/file?${query({ path, branch: target })}`);
      const b = target === undefined ? "" : `&branch=${target}`;
      // written by hand: encodings a client could send that URLSearchParams would not make
      for (const raw of [
        "%2e%2e/outside.txt",
        "%2E%2E%2Foutside.txt",
        "..%2f..%2fetc%2fpasswd",
        "%2fetc%2fpasswd",
        ".env%00",
        ".env%00.txt",
        "%2eenv",
        "secrets%2fid.pem",
        "%252e%252e%252foutside.txt",
        "..\\outside.txt",
      ])
        await refusedGet(`${ws}/file?path=${raw}${b}`);
      await refusedGet(`${ws}/files?path=..%2F${b}`);
      expect(await grepped({ branch: target, pattern: "SECRET", path: "../" })).toEqual([]);
      expect(await grepped({ branch: target, pattern: "root:", path: "/etc" })).toEqual([]);
    }
    // a field given twice (the second to slip past a check of the first) is refused
    const twice = await get(`${ws}/file?path=README.md&path=.env`);
    expect(twice.status).toBe(400);
  });

  it("attack path: `..` and encoded dots in the URL's path never reach another endpoint or a file", async () => {
    for (const path of [
      `${ws}/../../../etc/passwd`,
      `${ws}/%2e%2e/%2e%2e/etc/passwd`,
      `/api/workspaces/..%2F..%2Fetc/status`,
      `/api/workspaces/${encodeURIComponent(h.root)}/status`,
      `/api/workspaces/${encodeURIComponent(h.other)}/files`,
      "/..%2f..%2fetc%2fpasswd",
      "//etc/passwd",
      `${ws}/file/..%2F..%2F.env`,
      `${ws}/evals/..%2F..%2F..%2Fetc/report`,
      `${ws}/evals/.env/report`,
      `${ws}/evals/compare?a=..&b=..`,
      `${ws}/sessions/..%2F..%2Fx`,
      `${ws}/sessions/..`,
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
    }
  });

  it("attack names: newlines and terminal escapes in names reach a client only escaped", async () => {
    const list = await get(`${ws}/files?${query({ path: "", depth: "1" })}`);
    const text = body<ToolOutcome>(list).text;
    expect(text).toContain("a\\nfake-entry.ts");
    expect(text).not.toContain("\u001b");
    expect(text.split("\n")).not.toContain("fake-entry.ts");
    const read = await get(`${ws}/file?${query({ path: "\u001b[31mred.ts" })}`);
    expect(body<ToolOutcome>(read).text).not.toContain("\u001b");
    // JSON carries the exact names (the page asks for a file by them), escaped on the wire
    const grep = await post(`${ws}/grep`, { pattern: "export const (a|red) = 1" });
    expect(body<GrepResult>(grep).matches.map((m) => m.path)).toContain("a\nfake-entry.ts");
    expect(grep.text).not.toContain("\u001b");
    expect(grep.text).not.toContain("\n");
    const made = await post(`${ws}/branches`, { label: "x\nfake-branch \u001b[2J" });
    const status = await get(`${ws}/status`);
    expect(status.text).not.toContain("\u001b");
    expect((await bearer.send("DELETE", `${ws}/branches/${body<BranchSummary>(made).id}`)).status).toBe(200);
  });

  it("work: read, list, grep and search the user's folder and a branch; a link inside it reads like its target", async () => {
    expect(body<ToolOutcome>(await get(`${ws}/file?path=billing/money.ts`)).text).toContain("export");
    expect(body<ToolOutcome>(await get(`${ws}/file?path=lib/money.ts`, page)).text).toContain("export");
    expect(body<ToolOutcome>(await get(`${ws}/file?path=README.md&branch=${branch}`)).text).toContain(
      "taken over",
    );
    expect(await listed("billing")).toContain("billing/money.ts");
    expect((await grepped({ pattern: "OutOfStock" })).map((m) => m.path)).toContain("inventory/stock.py");
    const search = await post(`${ws}/search`, { query: "parse money amount" });
    expect(body<SearchResult>(search).hits.map((hit) => hit.path)).toContain("billing/money.ts");
  });
});

describe("what a bearer client (an agent) may not do", () => {
  it("attack accept: a bearer's accept is not confirmed: nothing written, the branch stays", async () => {
    for (const payload of [
      {},
      { files: ["README.md"] },
      { files: ["README.md"], hunks: [1] },
      { verify: "true" },
    ]) {
      const answer = await post(`${ws}/branches/${branch}/accept`, payload);
      if (answer.status === 200) {
        expect(body<AcceptResult>(answer)).toMatchObject({ confirmed: false, written: false });
      } else expect(answer.status).toBeGreaterThanOrEqual(400);
    }
    expect(await branchIds()).toContain(branch);
  });

  it("attack undo, approvals and rules: the page's alone, refused to a bearer", async () => {
    for (const [method, path, payload] of [
      ["POST", `${ws}/undo`, undefined],
      ["POST", "/api/approvals/any", { decision: "once" }],
      ["POST", "/api/approvals/any", { decision: "repository" }],
      ["DELETE", "/api/rules/any", undefined],
    ] as const) {
      const answer = clean(await bearer.send(method, path, payload), path);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(errorOf(answer)?.code).toBe("FORBIDDEN");
    }
  });

  it("attack sessions: a bearer may not name a cassette, an endpoint, a provider or a key variable", async () => {
    const sessions = (await get(`${ws}/sessions`)).text;
    for (const extra of [
      { cassette: "/etc/passwd" },
      { cassette: "../outside.txt" },
      { cassette: join(h.home, ".ssh", "id_rsa") },
      { model: { baseUrl: "http://127.0.0.1:9/steal" } },
      { model: { provider: "anthropic" } },
      { model: { apiKeyEnv: "AWS_SECRET_ACCESS_KEY" } },
    ]) {
      for (const path of [`${ws}/sessions`, `${ws}/sessions/x/resume`]) {
        const answer = await post(path, { task: "read the secrets", ...extra });
        expect(answer.status, `${path} ${JSON.stringify(extra)}: ${answer.text}`).toBe(403);
      }
    }
    expect((await get(`${ws}/sessions`)).text).toBe(sessions);
  });

  it("attack branch-id: `..`, absolute, encoded and odd ids to every endpoint taking a branch", async () => {
    const ids = [
      "..",
      ".",
      "../..",
      "../../x",
      "a/../../..",
      "/tmp",
      h.base,
      `../${branch}`,
      `${branch}/..`,
      "x\u0000y",
      "%2e%2e",
      `${branch}\u0000`,
    ];
    for (const id of ids) {
      const at = `${ws}/branches/${encodeURIComponent(id)}`;
      for (const [method, path, payload] of [
        ["GET", `${at}/diff`, undefined],
        ["POST", `${at}/rebase`, undefined],
        ["POST", `${at}/accept`, {}],
        ["DELETE", at, undefined],
      ] as const) {
        for (const as of [bearer, page]) {
          const answer = clean(await as.send(method, path, payload), `${method} ${path}`);
          expect(answer.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        }
      }
      await refusedGet(`${ws}/file?${query({ path: "README.md", branch: id })}`);
      await refusedGet(`${ws}/files?${query({ path: "", branch: id })}`);
      const grep = await post(`${ws}/grep`, { branch: id, pattern: "x" });
      expect(grep.status, id).toBeGreaterThanOrEqual(400);
    }
    // the real branch is still there, whole
    expect(await branchIds()).toContain(branch);
    expect(body<ToolOutcome>(await get(`${ws}/file?path=README.md&branch=${branch}`)).text).toContain(
      "taken over",
    );
  });

  it("work: a bearer creates, diffs, rebases and discards a branch", async () => {
    const id = await editedBranch("bearer work");
    const diff = await get(`${ws}/branches/${id}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.text).toContain("README.md");
    expect((await bearer.send("POST", `${ws}/branches/${id}/rebase`)).status).toBe(200);
    expect((await bearer.send("DELETE", `${ws}/branches/${id}`)).status).toBe(200);
    expect(await branchIds()).not.toContain(id);
  });
});

describe("what the page's accept writes", () => {
  it("attack accept: files naming hidden, protected and outside paths are not written", async () => {
    const answer = await post(
      `${ws}/branches/${branch}/accept`,
      {
        files: NEVER_ACCEPTED,
      },
      page,
    );
    if (answer.status === 200) expect(body<AcceptResult>(answer).applied).toEqual([]);
    expect(await branchIds()).toContain(branch);
  });

  it("attack accept: a branch whose changes touch .git/hooks, .git/config and .husky writes none of them", async () => {
    const made = await post(`${ws}/branches`, { label: "hooks" });
    const id = body<BranchSummary>(made).id;
    await agent.call("run", {
      branch: id,
      command: [
        "mkdir -p .husky && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .husky/pre-commit",
        "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit",
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
        "true",
      ].join("; "),
    });
    const answer = await post(`${ws}/branches/${id}/accept`, {}, page);
    if (answer.status === 200) {
      const { applied } = body<AcceptResult>(answer);
      expect(applied.filter((path) => /(^|\/)\.(git|husky)\//i.test(path))).toEqual([]);
      // nothing else was in the branch: nothing was written
      expect(applied).toEqual([]);
    }
  });
});

describe("what a hostile page (or a request without the right credential) gets", () => {
  it("attack place: a foreign Host (DNS rebinding) or Origin reads and changes nothing, whatever the credential", async () => {
    const reads = [`${ws}/file?path=README.md`, `${ws}/files`, "/api/workspaces", "/api/csrf", "/api/events"];
    const places: Record<string, string>[] = [
      ...["evil.example", `evil.example:${port}`, `127.0.0.1:${port + 1}`, `[::1]:${port}`].map((host) => ({
        host,
      })),
      ...[
        "https://evil.example",
        "null",
        `http://127.0.0.1:${port + 1}`,
        `http://localhost.evil.example:${port}`,
      ].map((origin) => ({ origin })),
    ];
    const credentials: Record<string, string>[] = [
      { authorization: `Bearer ${token}` },
      { cookie, "x-umbra-csrf": csrf },
    ];
    for (const credential of credentials) {
      for (const place of places) {
        const what = JSON.stringify(place);
        for (const path of reads) {
          const answer = clean(await raw(port, "GET", path, { ...credential, ...place }), path);
          expect(answer.status, `${what} ${path}`).toBe(403);
          expect(answer.text).not.toContain("export");
          expect(answer.text).not.toContain(csrf);
        }
        const headers = { ...credential, ...place, "content-type": "application/json" };
        const accept = await raw(port, "POST", `${ws}/branches/${branch}/accept`, headers, "{}");
        expect(accept.status, what).toBe(403);
      }
    }
  });

  it("attack csrf: a form post or a script's request with the cookie but no CSRF value changes nothing", async () => {
    for (const headers of [
      { cookie, "content-type": "application/x-www-form-urlencoded" },
      { cookie, "content-type": "text/plain" },
      { cookie, "content-type": "application/json" },
      { cookie, "content-type": "application/json", "x-umbra-csrf": "" },
      { cookie, "content-type": "application/json", "x-umbra-csrf": token },
      { cookie, "content-type": "application/json", "x-umbra-csrf": `${csrf}x` },
    ] as Record<string, string>[]) {
      for (const [method, path] of [
        ["POST", `${ws}/branches/${branch}/accept`],
        ["POST", `${ws}/undo`],
        ["DELETE", `${ws}/branches/${branch}`],
        ["POST", `${ws}/sessions`],
        ["POST", "/api/approvals/any"],
        ["DELETE", "/api/rules/any"],
      ] as const) {
        const payload = method === "POST" ? '{"task":"x","decision":"once"}' : undefined;
        const answer = await raw(port, method, path, headers, payload);
        expect(answer.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
      }
    }
    // methods the API does not have change nothing either, whatever the credential
    for (const method of ["PUT", "PATCH"])
      for (const headers of [
        { authorization: `Bearer ${token}` },
        { cookie, "x-umbra-csrf": csrf },
      ] as Record<string, string>[]) {
        const answer = await raw(port, method, `${ws}/branches/${branch}/accept`, headers, "{}");
        expect(answer.status, method).toBeGreaterThanOrEqual(400);
      }
    // a preflight is never granted: a page of another origin cannot send the header at all
    const preflight = await raw(port, "OPTIONS", `${ws}/branches/${branch}/accept`, {
      origin: "https://evil.example",
      "access-control-request-method": "POST",
      "access-control-request-headers": "x-umbra-csrf",
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    expect(preflight.headers["access-control-allow-headers"]).toBeUndefined();
    expect(await branchIds()).toContain(branch);
  });

  it("attack token: the token in the wrong place (cookie, CSRF header, query of a POST, other schemes) is no credential", async () => {
    for (const headers of [
      { cookie: `umbra_session_${port}=${token}` },
      { "x-umbra-csrf": token },
      { authorization: token },
      { authorization: `Basic ${Buffer.from(`x:${token}`).toString("base64")}` },
      { authorization: `Token ${token}` },
      { authorization: `Bearer ${token.slice(0, -1)}` },
      { "x-umbra-token": token },
    ] as Record<string, string>[]) {
      for (const path of [`${ws}/file?path=README.md`, "/api/csrf"]) {
        const answer = await raw(port, "GET", path, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(answer.text).not.toContain(csrf);
      }
      const accept = await raw(
        port,
        "POST",
        `${ws}/branches/${branch}/accept`,
        { ...headers, "content-type": "application/json" },
        "{}",
      );
      expect(accept.status).toBe(401);
    }
    for (const path of [`${ws}/branches/${branch}/accept?token=${token}`, `${ws}/undo?token=${token}`]) {
      const answer = await raw(port, "POST", path, { "content-type": "application/json" }, "{}");
      expect(answer.status, path).toBe(401);
      expect(answer.headers["set-cookie"]).toBeUndefined();
    }
  });

  it("attack body: oversized, malformed, mistyped and unexpected bodies get one clear error and change nothing", async () => {
    const accept = `${ws}/branches/${branch}/accept`;
    const cases: [string, Record<string, string>, string, number][] = [
      [accept, {}, "{", 400],
      [accept, {}, "[]", 400],
      [accept, {}, "null", 400],
      [accept, {}, '"files"', 400],
      [accept, {}, '{"files": ".env"}', 400],
      [accept, {}, '{"files": ["README.md"], "hunks": [0]}', 400],
      [accept, {}, '{"confirmed": true}', 400],
      [accept, {}, '{"root": "/tmp"}', 400],
      [accept, {}, '{"__proto__": {"confirmed": true}}', 400],
      [accept, { "content-type": "text/plain" }, "{}", 415],
      [`${ws}/grep`, {}, `${"[".repeat(200_000)}${"]".repeat(200_000)}`, 400],
      [`${ws}/grep`, {}, JSON.stringify({ pattern: "x".repeat(17 * 1024 * 1024) }), 413],
      [`${ws}/grep`, {}, '{"pattern": "(a+)+$", "branch": 7}', 400],
      [`${ws}/sessions`, {}, '{"task": "x", "model": {"baseUrl": "http://127.0.0.1:9", "extra": 1}}', 400],
    ];
    for (const as of [bearer, page]) {
      for (const [path, headers, text, status] of cases) {
        const sent = as.send("POST", path, text, headers);
        // the server answers an oversized body before it has all of it, then closes: a client still
        // writing may see the connection reset instead of the answer
        const answer = status === 413 ? await sent.catch(() => undefined) : await sent;
        if (answer === undefined) continue;
        clean(answer, path);
        expect(answer.status, `${path} ${text.slice(0, 80)}: ${answer.text.slice(0, 200)}`).toBe(status);
        const error = errorOf(answer);
        expect(error?.message.split("\n")).toHaveLength(1);
      }
    }
    // a header block over the server's bound is refused; the server still answers
    const huge = await raw(port, "GET", "/api/workspaces", {
      authorization: `Bearer ${token}`,
      "x-filler": "y".repeat(64 * 1024),
    }).catch(() => undefined);
    if (huge) expect(huge.status).toBe(431);
    expect((await bearer.get("/api/workspaces")).status).toBe(200);
    expect(await branchIds()).toContain(branch);
  });

  it("work: the page signs in with the printed URL and reads; a request without credentials is refused", async () => {
    const again = await signIn(port, token);
    expect((await again.page.get(`${ws}/file?path=README.md`)).status).toBe(200);
    expect((await client(port, {}).get(`${ws}/file?path=README.md`)).status).toBe(401);
  });
});

describe("git through the HTTP API", () => {
  it("attack git: a cloned repository's core.fsmonitor and pager never ran while umbra served it", () => {
    expect(existsSync(join(h.base, "ran-fsmonitor"))).toBe(false);
    expect(existsSync(join(h.base, "ran-pager"))).toBe(false);
  });
});
