import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BranchSummary, DiffResult, StatusResult } from "../../src/engine/api.js";
import { type EngineConnection, inProcess } from "../../src/engine/client.js";
import { Engine } from "../../src/engine/engine.js";
import { ROUTES } from "../../src/http/routes.js";
import { type HttpApi, serveHttpApi, workspaceId } from "../../src/http/server.js";
import { PAGE_CSP } from "../../src/http/ui.js";
import { NO_HOOKS } from "../helpers/engine.js";
import { gitFixture, isolatedEnv, MATH_TS, USE_TS } from "../helpers/mcp.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";
import { type ApiClient, body, client, errorOf, raw, signIn } from "./client.js";

// The HTTP API on an engine of this process, reached over loopback as the page, a program with the
// token, or a hostile page would: every endpoint, and every refusal leaves the folder and branches as
// they were.

let home: string;
let root: string;
let engine: Engine;
let agent: EngineConnection;
let http: HttpApi;
let port: number;
let ws: string;
/** The browser page: session cookie + CSRF header. */
let page: ApiClient;
/** A program the user gave the token. */
let bearer: ApiClient;
let cookie: string;
let csrf: string;
const logged: string[] = [];

beforeAll(async () => {
  home = await tempDir("http");
  root = await gitFixture();
  engine = new Engine({ env: isolatedEnv(home), watch: false });
  // an agent (through the engine's own connection) opens the workspace and works in branches
  agent = inProcess(engine, { name: "agent", hooks: NO_HOOKS });
  await agent.call("status", { root });
  http = await serveHttpApi({ engine, port: 0, log: (line) => logged.push(line) });
  port = http.port;
  ws = `/api/workspaces/${workspaceId(root)}`;
  ({ cookie, csrf, page, bearer } = await signIn(port, http.token));
});

afterAll(async () => {
  await http?.close();
  await agent?.close();
  await engine?.close();
  await cleanup(home, root ? join(root, "..") : undefined);
});

const branchIds = async (): Promise<string[]> =>
  body<{ branches: BranchSummary[] }>(await bearer.get(`${ws}/branches`)).branches.map((b) => b.id);

/** Runs `act` and checks that it changed neither the user's folder nor the set of branches. */
async function changesNothing(act: () => Promise<void>): Promise<void> {
  const [folder, branches] = [await fingerprint(root), await branchIds()];
  await act();
  expect(await fingerprint(root)).toBe(folder);
  expect(await branchIds()).toEqual(branches);
}

/** A branch an agent edited: math.ts and use.ts changed. */
async function editedBranch(): Promise<string> {
  const created = await bearer.send("POST", `${ws}/branches`, { label: "agent work" });
  expect(created.status).toBe(201);
  const id = body<BranchSummary>(created).id;
  await agent.call("writeFile", { root, branch: id, path: "math.ts", content: `${MATH_TS}// sum\n` });
  await agent.call("writeFile", { root, branch: id, path: "use.ts", content: `${USE_TS}// use\n` });
  return id;
}

describe("the session: token, cookie, CSRF value", () => {
  it("gives the browser that opens the printed URL an HttpOnly, SameSite=Strict cookie and drops the token", async () => {
    expect(http.url).toBe(`http://127.0.0.1:${port}/?token=${http.token}`);
    expect(http.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const landing = await raw(port, "GET", `/?token=${http.token}&view=review`);
    expect(landing.status).toBe(303);
    expect(landing.headers.location).toBe("/?view=review");
    const set = String(landing.headers["set-cookie"]?.[0]);
    expect(set).toMatch(
      new RegExp(`^umbra_session_${port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`),
    );
    // the cookie is not the token: the token never lands in the browser's storage
    expect(set).not.toContain(http.token);
    const home = await raw(port, "GET", "/", { cookie });
    expect(home.status).toBe(200);
    expect(home.headers["content-type"]).toContain("text/html");
    expect(home.headers["content-security-policy"]).toBe(PAGE_CSP);
  });

  it("refuses a wrong token in the URL: no cookie", async () => {
    const wrong = await raw(port, "GET", "/?token=not-the-token");
    expect(wrong.status).toBe(401);
    expect(errorOf(wrong)?.code).toBe("UNAUTHORIZED");
    expect(wrong.headers["set-cookie"]).toBeUndefined();
  });

  it("refuses every API request without a credential, or with a wrong one", async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: "Basic abc" },
      { cookie: `umbra_session_${port}=wrong` },
      { cookie: cookie.replace(`_${port}=`, `_${port + 1}=`) },
      // a wrong bearer decides, whatever cookie comes with it
      { cookie, authorization: "Bearer wrong" },
    ];
    for (const headers of cases) {
      for (const path of ["/api/workspaces", "/api/csrf", "/api/openapi.json", `${ws}/status`, "/"]) {
        const answer = await raw(port, "GET", path, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(errorOf(answer)?.code).toBe("UNAUTHORIZED");
        expect(answer.text).not.toContain(csrf);
      }
    }
    await changesNothing(async () => {
      const create = await raw(port, "POST", `${ws}/branches`, { "content-type": "application/json" }, "{}");
      expect(create.status).toBe(401);
    });
  });

  it("refuses a state-changing request of the page without the CSRF value; a bearer needs none", async () => {
    const id = await editedBranch();
    await changesNothing(async () => {
      for (const headers of [{ cookie }, { cookie, "x-umbra-csrf": "wrong" }] as Record<string, string>[]) {
        const noCsrf = client(port, headers);
        for (const [method, path, payload] of [
          ["POST", `${ws}/branches`, {}],
          ["POST", `${ws}/branches/${id}/accept`, {}],
          ["POST", `${ws}/branches/${id}/rebase`, undefined],
          ["DELETE", `${ws}/branches/${id}`, undefined],
          ["POST", `${ws}/undo`, undefined],
        ] as const) {
          const answer = await noCsrf.send(method, path, payload);
          expect(answer.status, `${method} ${path}`).toBe(403);
          expect(errorOf(answer)?.message).toContain("x-umbra-csrf");
        }
      }
    });
    // a read needs none
    expect((await client(port, { cookie }).get(`${ws}/branches`)).status).toBe(200);
    expect((await bearer.send("DELETE", `${ws}/branches/${id}`)).status).toBe(200);
  });

  it("refuses a foreign Host (DNS rebinding) and a foreign Origin, even with good credentials", async () => {
    const id = await editedBranch();
    await changesNothing(async () => {
      for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1:${port + 1}`, "127.0.0.1"]) {
        const credentials: Record<string, string>[] = [
          { authorization: `Bearer ${http.token}` },
          { cookie, "x-umbra-csrf": csrf },
        ];
        for (const credential of credentials) {
          const answer = await raw(
            port,
            "POST",
            `${ws}/branches/${id}/accept`,
            {
              ...credential,
              host,
              "content-type": "application/json",
            },
            "{}",
          );
          expect(answer.status, host).toBe(403);
          expect(errorOf(answer)).toEqual({
            code: "FORBIDDEN",
            message: `Host must be 127.0.0.1:${port} or localhost:${port}`,
          });
        }
        // the URL's token is not exchanged for a cookie under a foreign name
        const landing = await raw(port, "GET", `/?token=${http.token}`, { host });
        expect(landing.status).toBe(403);
        expect(landing.headers["set-cookie"]).toBeUndefined();
      }
      for (const origin of [
        "https://evil.example",
        `http://localhost:${port}`,
        `http://127.0.0.1:${port + 1}`,
        "null",
      ]) {
        const answer = await page.send("POST", `${ws}/branches/${id}/accept`, {}, { origin });
        expect(answer.status, origin).toBe(403);
        expect(errorOf(answer)?.code).toBe("FORBIDDEN");
        expect((await page.send("DELETE", `${ws}/branches/${id}`, undefined, { origin })).status).toBe(403);
      }
    });
    // this very origin, by either loopback name, passes
    expect((await page.get(`${ws}/branches`, { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    const local = await raw(port, "GET", "/api/workspaces", {
      cookie,
      host: `localhost:${port}`,
      origin: `http://localhost:${port}`,
    });
    expect(local.status).toBe(200);
    expect((await page.send("DELETE", `${ws}/branches/${id}`)).status).toBe(200);
  });

  it("answers JSON that a browser will not sniff or cache", async () => {
    const answer = await page.get("/api/workspaces");
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(answer.headers["x-content-type-options"]).toBe("nosniff");
    expect(answer.headers["cache-control"]).toBe("no-store");
    // no CORS: another origin's script cannot read an answer
    expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

describe("workspaces, files and search", () => {
  it("lists the engine's open workspaces and their status; an unknown id is NOT_FOUND", async () => {
    const list = body<{ workspaces: { id: string; root: string }[] }>(await page.get("/api/workspaces"));
    expect(list.workspaces).toEqual([{ id: workspaceId(root), root }]);
    const status = await page.get(`${ws}/status`);
    expect(status.status).toBe(200);
    expect(body<StatusResult>(status).root).toBe(root);
    expect(body<StatusResult>(status).index).toMatchObject({ watched: false, syncing: false });
    for (const path of ["/api/workspaces/0123456789abcdef/status", "/api/workspaces/%2Fetc/files"]) {
      const unknown = await page.get(path);
      expect(unknown.status).toBe(404);
      expect(errorOf(unknown)?.code).toBe("NOT_FOUND");
    }
  });

  it("reads and lists the user's folder, hiding what the user hides; bad queries are BAD_REQUEST", async () => {
    const read = await page.get(`${ws}/file?path=math.ts&startLine=2&endLine=2`);
    expect(read.status).toBe(200);
    expect(body<{ ok: boolean; text: string }>(read)).toMatchObject({ ok: true });
    expect(body<{ text: string }>(read).text).toContain("return a + b;");
    const secret = body<{ ok: boolean; text: string }>(await page.get(`${ws}/file?path=.env`));
    expect(secret.ok).toBe(false);
    expect(secret.text).not.toContain("hunter2");
    const list = body<{ text: string }>(await page.get(`${ws}/files?depth=2`));
    expect(list.text).toContain("use.ts");
    expect(list.text).not.toContain(".env");
    for (const [query, where] of [
      ["", "path"],
      ["?path=math.ts&startLine=two", "startLine"],
      ["?path=math.ts&startLine=0", "startLine"],
      ["?path=math.ts&root=/etc", "query"],
      // names of Object.prototype's members are parameters like any other: unknown ones
      ["?path=math.ts&__proto__=x", "query"],
      ["?path=math.ts&constructor=x", "query"],
      ["?path=math.ts&path=use.ts", "path"],
    ] as const) {
      const bad = await page.get(`${ws}/file${query}`);
      expect(bad.status, query).toBe(400);
      expect(errorOf(bad)?.code).toBe("BAD_REQUEST");
      expect(errorOf(bad)?.message.startsWith(where)).toBe(true);
      expect(errorOf(bad)?.message).not.toContain("\n");
    }
    const noBranch = await page.get(`${ws}/file?path=math.ts&branch=no-such-branch`);
    expect(noBranch.status).toBe(404);
    expect(errorOf(noBranch)?.code).toBe("NOT_FOUND");
  });

  it("searches and greps; malformed bodies are refused with a clear error", async () => {
    const missing = await page.send("POST", `${ws}/search`, { query: "add" });
    expect(missing.status).toBe(503);
    expect(errorOf(missing)?.code).toBe("UNAVAILABLE");
    const search = await page.send("POST", `${ws}/search`, { query: "add numbers", build: true, limit: 5 });
    expect(search.status).toBe(200);
    const hits = body<{ hits: { path: string }[] }>(search).hits.map((hit) => hit.path);
    expect(hits).toContain("math.ts");
    expect(hits).not.toContain(".env");
    const grep = body<{ matches: { path: string; line: number }[] }>(
      await page.send("POST", `${ws}/grep`, { pattern: "return a \\+ b" }),
    );
    expect(grep.matches).toEqual([expect.objectContaining({ path: "math.ts", line: 2 })]);
    const bad: [string, Record<string, string>, number, string][] = [
      ["{not json", {}, 400, "BAD_REQUEST"],
      ["[]", {}, 400, "BAD_REQUEST"],
      [JSON.stringify({ query: "add", limit: 0 }), {}, 400, "BAD_REQUEST"],
      [JSON.stringify({ query: "add", root: "/etc" }), {}, 400, "BAD_REQUEST"],
      [JSON.stringify({ query: 7 }), {}, 400, "BAD_REQUEST"],
      ["query=add", { "content-type": "application/x-www-form-urlencoded" }, 415, "UNSUPPORTED_MEDIA_TYPE"],
      ['{"query":"add"}', { "content-type": "text/plain" }, 415, "UNSUPPORTED_MEDIA_TYPE"],
    ];
    for (const [payload, headers, status, code] of bad) {
      const answer = await page.send("POST", `${ws}/search`, payload, headers);
      expect(answer.status, payload).toBe(status);
      expect(errorOf(answer)?.code).toBe(code);
    }
  });

  it("answers an unknown endpoint NOT_FOUND and a wrong method METHOD_NOT_ALLOWED", async () => {
    const unknown = await page.get("/api/nothing");
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown)?.code).toBe("NOT_FOUND");
    const method = await page.send("PUT", "/api/workspaces", {});
    expect(method.status).toBe(405);
    expect(errorOf(method)?.code).toBe("METHOD_NOT_ALLOWED");
  });
});

describe("branches: list, create, diff, lints, rebase, discard, accept, undo", () => {
  it("answers a branch's lints: the errors its edits brought, cross-file; an unknown branch is NOT_FOUND", async () => {
    const created = await bearer.send("POST", `${ws}/branches`, { label: "breaks use.ts" });
    const id = body<BranchSummary>(created).id;
    // add() now takes strings: use.ts, which the branch did not touch, no longer type-checks
    const broken = MATH_TS.replaceAll("number", "string");
    await agent.call("writeFile", { root, branch: id, path: "math.ts", content: broken });
    const answer = await bearer.get(`${ws}/branches/${id}/lints`);
    expect(answer.status).toBe(200);
    const lints = body<{ introduced: { path: string; line: number; severity: string }[]; errors: number }>(
      answer,
    );
    expect(lints.errors).toBeGreaterThan(0);
    expect(lints.introduced.some((d) => d.path === "use.ts" && d.severity === "error")).toBe(true);
    await changesNothing(async () => {
      const unknown = await bearer.get(`${ws}/branches/no-such-branch/lints`);
      expect(unknown.status).toBe(404);
      const outside = await bearer.get(`${ws}/branches/${id}/lints?path=../../etc/passwd`);
      expect(outside.status).toBe(403);
      expect(errorOf(outside)?.code).toBe("REFUSED");
    });
    expect((await page.send("DELETE", `${ws}/branches/${id}`)).status).toBe(200);
  });

  it("creates, lists, diffs, rebases and discards a branch; unknown branches are NOT_FOUND", async () => {
    const id = await editedBranch();
    const listed = body<{ branches: BranchSummary[] }>(await page.get(`${ws}/branches`)).branches;
    expect(listed.find((b) => b.id === id)).toMatchObject({ label: "agent work", client: "http api" });
    const diff = await page.get(`${ws}/branches/${id}/diff`);
    expect(diff.status).toBe(200);
    expect(body<DiffResult>(diff).files).toEqual([
      { path: "math.ts", kind: "modified" },
      { path: "use.ts", kind: "modified" },
    ]);
    expect(body<DiffResult>(diff).diff).toContain("+// sum");
    await writeFile(join(root, "README.md"), "the user's own new file\n");
    // a POST that needs no input needs no body, nor a Content-Type
    const rebase = await raw(port, "POST", `${ws}/branches/${id}/rebase`, { cookie, "x-umbra-csrf": csrf });
    expect(rebase.status).toBe(200);
    const read = body<{ text: string }>(await page.get(`${ws}/file?path=README.md&branch=${id}`));
    expect(read.text).toContain("the user's own new file");
    await changesNothing(async () => {
      for (const [method, path] of [
        ["GET", `${ws}/branches/no-such-branch/diff`],
        ["POST", `${ws}/branches/no-such-branch/rebase`],
        ["POST", `${ws}/branches/no-such-branch/accept`],
        ["DELETE", `${ws}/branches/no-such-branch`],
      ] as const) {
        const answer = await page.send(method, path, method === "POST" ? {} : undefined);
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(errorOf(answer)?.code).toBe("NOT_FOUND");
      }
      const badLabel = await page.send("POST", `${ws}/branches`, { label: 7 });
      expect(badLabel.status).toBe(400);
      const badAccept = await page.send("POST", `${ws}/branches/${id}/accept`, { files: "math.ts" });
      expect(badAccept.status).toBe(400);
    });
    const discard = await page.send("DELETE", `${ws}/branches/${id}`);
    expect(discard.status).toBe(200);
    expect(body<{ discarded: string }>(discard).discarded).toBe(id);
    expect(await branchIds()).not.toContain(id);
    await writeFile(join(root, "README.md"), "");
  });

  it("does not take a bearer client's accept as confirmed: nothing is written", async () => {
    const id = await editedBranch();
    await changesNothing(async () => {
      const accept = await bearer.send("POST", `${ws}/branches/${id}/accept`, {});
      expect(accept.status).toBe(200);
      expect(body<{ confirmed: boolean; written: boolean }>(accept)).toMatchObject({
        confirmed: false,
        written: false,
      });
    });
    await bearer.send("DELETE", `${ws}/branches/${id}`);
  });

  it("accepts the files the page names, and undoes it for the page only", async () => {
    const id = await editedBranch();
    const accept = await page.send("POST", `${ws}/branches/${id}/accept`, { files: ["math.ts"] });
    expect(accept.status).toBe(200);
    expect(body<{ confirmed: boolean; written: boolean }>(accept)).toMatchObject({
      confirmed: true,
      written: true,
    });
    expect(await readFile(join(root, "math.ts"), "utf8")).toBe(`${MATH_TS}// sum\n`);
    expect(await readFile(join(root, "use.ts"), "utf8")).toBe(USE_TS);
    // the rest stays in the branch
    expect(await branchIds()).toContain(id);
    await changesNothing(async () => {
      const refused = await bearer.send("POST", `${ws}/undo`);
      expect(refused.status).toBe(403);
      expect(errorOf(refused)?.code).toBe("FORBIDDEN");
    });
    const undo = await page.send("POST", `${ws}/undo`);
    expect(undo.status).toBe(200);
    expect(body<{ found: boolean; restored: string[] }>(undo)).toMatchObject({
      found: true,
      restored: ["math.ts"],
    });
    expect(await readFile(join(root, "math.ts"), "utf8")).toBe(MATH_TS);
    await page.send("DELETE", `${ws}/branches/${id}`);
  });
});

describe("accepting one hunk", () => {
  it("writes only the hunk the page names; hunks without exactly one file are BAD_REQUEST", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    await writeFile(join(root, "lines.txt"), `${lines.join("\n")}\n`);
    const id = body<BranchSummary>(await page.send("POST", `${ws}/branches`, {})).id;
    const edited = lines.map((line, i) => (i === 0 || i === 29 ? `${line} (agent)` : line));
    await agent.call("writeFile", { root, branch: id, path: "lines.txt", content: `${edited.join("\n")}\n` });
    const diff = body<DiffResult>(await page.get(`${ws}/branches/${id}/diff`)).diff;
    expect(diff.match(/^@@/gm)).toHaveLength(2);
    await changesNothing(async () => {
      for (const payload of [
        { hunks: [2] },
        { files: ["lines.txt", "math.ts"], hunks: [2] },
        { files: ["lines.txt"], hunks: [] },
      ]) {
        const bad = await page.send("POST", `${ws}/branches/${id}/accept`, payload);
        expect(bad.status, JSON.stringify(payload)).toBe(400);
        expect(errorOf(bad)?.code).toBe("BAD_REQUEST");
      }
    });
    const accept = await page.send("POST", `${ws}/branches/${id}/accept`, {
      files: ["lines.txt"],
      hunks: [2],
    });
    expect(body<{ confirmed: boolean; written: boolean }>(accept)).toMatchObject({
      confirmed: true,
      written: true,
    });
    const now = (await readFile(join(root, "lines.txt"), "utf8")).split("\n");
    expect(now[0]).toBe("line 1");
    expect(now[29]).toBe("line 30 (agent)");
    expect((await page.send("POST", `${ws}/undo`)).status).toBe(200);
    expect(await readFile(join(root, "lines.txt"), "utf8")).toBe(`${lines.join("\n")}\n`);
    await page.send("DELETE", `${ws}/branches/${id}`);
  });
});

describe("settling a conflict", () => {
  it("takes the page's resolution; bad ones are BAD_REQUEST and a stale one STALE, with nothing changed", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `row ${i + 1}`);
    const text = (edit: (line: string, i: number) => string) => `${lines.map(edit).join("\n")}\n`;
    await writeFile(
      join(root, "rows.txt"),
      text((line) => line),
    );
    const id = body<BranchSummary>(await page.send("POST", `${ws}/branches`, {})).id;
    await agent.call("writeFile", {
      root,
      branch: id,
      path: "rows.txt",
      content: text((line, i) => (i === 1 ? "row 2 (agent)" : line)),
    });
    const mine = text((line, i) => (i === 1 ? "row 2 (mine)" : line));
    await writeFile(join(root, "rows.txt"), mine);
    const accept = (payload: unknown) => page.send("POST", `${ws}/branches/${id}/accept`, payload);
    const first = body<{
      written: boolean;
      conflicts: { path: string; yoursSha256: string; markers?: string }[];
    }>(await accept({}));
    expect(first.written).toBe(false);
    const [conflict] = first.conflicts;
    expect(conflict).toMatchObject({ path: "rows.txt", markers: expect.stringContaining("row 2 (agent)") });
    const seen = conflict?.yoursSha256 ?? "";
    const edited = { path: "rows.txt", choice: "edited", content: "settled by hand\n", yoursSha256: seen };
    await changesNothing(async () => {
      for (const resolve of [
        [],
        [{ path: "../rows.txt", choice: "ours" }],
        [{ path: `${root}/../x`, choice: "theirs" }],
        [{ path: "rows.txt", choice: "mine" }],
        [{ path: "rows.txt", choice: "ours", extra: 1 }],
        [{ path: "rows.txt", choice: "ours", content: "x" }],
        [{ path: "rows.txt", choice: "edited", content: "x" }],
        [{ path: "rows.txt", choice: "ours", yoursSha256: "not-a-hash" }],
        [
          { path: "rows.txt", choice: "ours" },
          { path: "./rows.txt", choice: "theirs" },
        ],
        // the branch did not change math.ts
        [{ path: "math.ts", choice: "ours" }],
      ]) {
        const bad = await accept({ resolve });
        expect(bad.status, JSON.stringify(resolve)).toBe(400);
        expect(errorOf(bad)?.code).toBe("BAD_REQUEST");
      }
      expect((await accept({ resolve: "rows.txt" })).status).toBe(400);
    });
    // the user types on after seeing the conflict: the edit made from the old version is refused
    const later = mine.replace("row 9", "row 9 (typed later)");
    await writeFile(join(root, "rows.txt"), later);
    await changesNothing(async () => {
      const stale = await accept({ resolve: [edited] });
      expect(stale.status).toBe(409);
      expect(errorOf(stale)).toMatchObject({
        code: "STALE",
        message: expect.stringContaining("changed since"),
      });
    });
    await writeFile(join(root, "rows.txt"), mine);
    const done = await accept({ resolve: [edited] });
    expect(body<{ written: boolean; applied: string[] }>(done)).toMatchObject({
      written: true,
      applied: ["rows.txt"],
    });
    expect(await readFile(join(root, "rows.txt"), "utf8")).toBe("settled by hand\n");
    expect((await page.send("POST", `${ws}/undo`)).status).toBe(200);
    expect(await readFile(join(root, "rows.txt"), "utf8")).toBe(mine);
    await page.send("DELETE", `${ws}/branches/${id}`).catch(() => undefined);
  });
});

describe("the OpenAPI description", () => {
  it("describes every route, with the input the engine's schemas check", async () => {
    const answer = await bearer.get("/api/openapi.json");
    expect(answer.status).toBe(200);
    const doc = body<{
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: unknown; parameters: { name: string; in: string }[] }>
      >;
    }>(answer);
    expect(doc.openapi).toBe("3.1.0");
    for (const route of ROUTES)
      expect(doc.paths[route.path]?.[route.method.toLowerCase()], route.path).toBeDefined();
    const search = doc.paths["/api/workspaces/{workspace}/search"]?.post;
    expect(search?.requestBody).toMatchObject({
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["query"],
            additionalProperties: false,
            properties: { limit: { type: "integer", minimum: 1, maximum: 200, default: 10 } },
          },
        },
      },
    });
    expect(JSON.stringify(search?.requestBody)).not.toContain('"root"');
    const read = doc.paths["/api/workspaces/{workspace}/file"]?.get;
    expect(read?.parameters.map((p) => `${p.in} ${p.name}`).sort()).toEqual(
      ["path workspace", "query branch", "query endLine", "query path", "query startLine"].sort(),
    );
    const accept = doc.paths["/api/workspaces/{workspace}/branches/{branch}/accept"]?.post;
    expect(accept?.parameters.map((p) => p.name)).toEqual(["workspace", "branch"]);
    // the resolutions the page sends for conflicting files, as the engine checks them
    expect(accept?.requestBody).toMatchObject({
      content: {
        "application/json": {
          schema: {
            properties: {
              resolve: {
                type: "array",
                items: {
                  type: "object",
                  required: ["path", "choice"],
                  additionalProperties: false,
                  properties: {
                    choice: { enum: ["ours", "theirs", "markers", "edited"] },
                    yoursSha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
                    content: { type: "string" },
                  },
                },
              },
            },
          },
        },
      },
    });
    expect(logged).toEqual([]);
  });
});
