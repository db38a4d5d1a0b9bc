import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { type HttpApi, serveHttpApi } from "../../src/http/server.js";
import { PAGE_CSP } from "../../src/http/ui.js";
import { gitFixture, isolatedEnv } from "../helpers/mcp.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { errorOf, raw } from "./client.js";

// The web UI's files (dist/ui, built by npm run build): served to the page's cookie only, each with the
// page's CSP, and nothing else of the installation (or anywhere) by a crafted path.

let home: string;
let root: string;
let engine: Engine;
let http: HttpApi;
let cookie: string;

beforeAll(async () => {
  home = await tempDir("http-ui");
  root = await gitFixture();
  engine = new Engine({ env: isolatedEnv(home), watch: false });
  http = await serveHttpApi({ engine, port: 0, log: () => {} });
  const landing = await raw(http.port, "GET", `/?token=${http.token}`);
  cookie = String(landing.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
});

afterAll(async () => {
  await http?.close();
  await engine?.close();
  await cleanup(home, root ? join(root, "..") : undefined);
});

describe("the web UI's files", () => {
  it("serves the page, its modules, styles and Prism with the page's CSP", async () => {
    const cases: [string, string][] = [
      ["/", "text/html"],
      ["/ui/main.js", "text/javascript"],
      ["/ui/views/review.js", "text/javascript"],
      ["/ui/vendor/prism.js", "text/javascript"],
      ["/ui/style.css", "text/css"],
    ];
    for (const [path, type] of cases) {
      const answer = await raw(http.port, "GET", path, { cookie });
      expect(answer.status, path).toBe(200);
      expect(answer.headers["content-type"]).toContain(type);
      expect(answer.headers["content-security-policy"]).toBe(PAGE_CSP);
      expect(answer.headers["x-content-type-options"]).toBe("nosniff");
    }
    const page = await raw(http.port, "GET", "/", { cookie });
    // no script or style of elsewhere, nothing inline
    expect(page.text).not.toMatch(/https?:\/\//);
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(PAGE_CSP).not.toMatch(/unsafe-|\*|https?:/);
    expect(PAGE_CSP).toContain("require-trusted-types-for 'script'");
  });

  it("serves nothing else by a crafted path, and nothing without the page's cookie", async () => {
    for (const path of [
      "/ui/../cli/main.js",
      "/ui/%2e%2e/cli/main.js",
      "/ui/..%2fcli%2fmain.js",
      "/ui/main.js.map",
      "/ui/.hidden.js",
      "/ui//main.js",
      "/ui/MAIN.JS",
      "/ui/index.html/x",
      "/index.html",
    ]) {
      const answer = await raw(http.port, "GET", path, { cookie });
      expect(answer.status, path).toBe(404);
      expect(errorOf(answer)?.code).toBe("NOT_FOUND");
    }
    const anonymous = await raw(http.port, "GET", "/ui/main.js");
    expect(anonymous.status).toBe(401);
    const post = await raw(http.port, "POST", "/ui/main.js", { cookie, "x-umbra-csrf": "x" });
    expect(post.status).not.toBe(200);
  });
});
