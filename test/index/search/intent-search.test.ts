import { describe, expect, it } from "vitest";
import type { QueryIntent } from "../../../src/index/search/intent.js";
import { type SearchHit, search } from "../../../src/index/search/searcher.js";
import { indexedFiles } from "../../helpers/indexed.js";

/** Ranking by what a query is: one small workspace, indexed once, searched with each kind of query. */

/** A TypeScript function of about three hundred tokens: a chunk of its own. */
function routine(name: string, words: string): string {
  const body = Array.from({ length: 20 }, (_, i) => `  const step${i} = ${JSON.stringify(`${words} ${i}`)};`);
  return `export function ${name}(input: string): string {\n${body.join("\n")}\n  return input + step0 + step5;\n}\n`;
}

const ROUTER = [
  routine("normaliseSlashes", "collapse repeated slashes of the request path"),
  routine("splitSegments", "split the request path into its segments"),
  routine("matchParameters", "bind each :name segment to the value in the request path"),
  routine("compileRoute", "compile a route pattern into a matcher of segments"),
  routine("routeScore", "rank static segments above dynamic ones"),
].join("\n");

const FILES: Record<string, string> = {
  // the implementation of cookie signing, named in code words
  "src/flask/sessions.py":
    'import hmac\n\n\ndef get_signing_serializer(app):\n    """Serializer for the cookie value."""\n    return hmac.new(app.secret_key, digestmod="sha1")\n\n\ndef save_session(app, session, response):\n    value = get_signing_serializer(app).hexdigest()\n    response.set_cookie(app.config["SESSION_COOKIE_NAME"], value)\n',
  // prose that repeats the question's words
  "docs/sessions.rst":
    "Sessions\n========\n\nWhere is the session cookie signed? The session cookie is signed with the secret key.\nA signed session cookie cannot be changed by the client: the session cookie is signed on save.\n",
  "CHANGES.rst":
    "Version 2.3\n-----------\n\n- The session cookie is signed with the new key when the session cookie is signed again.\n",
  "tests/test_sessions.py":
    'def test_session_cookie_is_signed(client):\n    """The session cookie is signed: where the session cookie is signed, the signature matches."""\n    assert client.get("/").headers["Set-Cookie"]\n',
  "src/router/trie.ts": ROUTER,
  // an identifier used far more often than it is defined
  "src/routes/parse.ts":
    "export function parseRoute(pattern: string): string[] {\n  return pattern.split('/').filter(Boolean);\n}\n",
  "src/routes/table.ts": `import { parseRoute } from "./parse";\n\nexport const table = [\n${Array.from(
    { length: 12 },
    (_, i) => `  parseRoute("/r${i}"), // parseRoute again`,
  ).join("\n")}\n];\n`,
  "test/routes/parse.test.ts": `import { parseRoute } from "../../src/routes/parse";\n\n${Array.from(
    { length: 8 },
    (_, i) => `test("parseRoute ${i}", () => expect(parseRoute("/a/${i}")).toEqual(["a", "${i}"]));`,
  ).join("\n")}\n`,
  "docs/routes.md": `# parseRoute\n\nCall parseRoute with a pattern. parseRoute splits it; parseRoute drops empty parts.\n`,
};

const index = indexedFiles(FILES);

async function hits(text: string): Promise<{ hits: SearchHit[]; intent: QueryIntent | undefined }> {
  let intent: QueryIntent | undefined;
  const found = await search(index(), text, {
    limit: 20,
    onIntent: (read) => {
      intent = read;
    },
  });
  return { hits: found, intent };
}

/** The line a function's declaration is on in the router file. */
function lineOf(name: string): number {
  return (ROUTER.split("\n").findIndex((line) => line.includes(`function ${name}(`)) ?? -1) + 1;
}

describe("search by intent", () => {
  it("puts the implementing code above docs, changelog and tests that repeat a question's words", async () => {
    const { hits: found, intent } = await hits("where is the session cookie signed?");
    expect(intent?.kind).toBe("question");
    expect(found[0]?.path).toBe("src/flask/sessions.py");
  });

  it("does not push docs down for a question about the docs", async () => {
    const { hits: found, intent } = await hits("which docs say where the session cookie is signed?");
    expect(intent).toEqual({ kind: "question", about: "docs" });
    expect(found[0]?.path).toBe("docs/sessions.rst");
  });

  it("puts a named identifier's definition first, then its uses", async () => {
    const { hits: found, intent } = await hits("parseRoute");
    expect(intent?.kind).toBe("identifier");
    expect(found[0]).toMatchObject({ path: "src/routes/parse.ts", symbol: "parseRoute" });
    expect(found.map((hit) => hit.path)).toEqual(
      expect.arrayContaining(["src/routes/table.ts", "test/routes/parse.test.ts"]),
    );
  });

  it.each([
    ["a path and line", (line: number) => `src/router/trie.ts:${line}`],
    ["a path, line and column", (line: number) => `src/router/trie.ts:${line}:3`],
    ["a #L anchor", (line: number) => `src/router/trie.ts#L${line}`],
    ["a #L range", (line: number) => `src/router/trie.ts#L${line}-L${line + 2}`],
    ["a GitHub link", (line: number) => `https://github.com/o/r/blob/main/src/router/trie.ts#L${line}`],
    ["a path from elsewhere", (line: number) => `/home/me/checkout/src/router/trie.ts:${line}`],
    ["a path and line in words", (line: number) => `src/router/trie.ts line ${line}`],
    ["a line of a path in words", (line: number) => `line ${line} of src/router/trie.ts`],
  ])("lands %s on the chunk holding the line", async (_, query) => {
    for (const name of ["matchParameters", "routeScore"]) {
      const line = lineOf(name) + 2;
      const { hits: found, intent } = await hits(query(line));
      expect(intent?.kind).toBe("location");
      expect(found[0]?.path).toBe("src/router/trie.ts");
      expect(found[0]?.startLine).toBeLessThanOrEqual(line);
      expect(found[0]?.endLine).toBeGreaterThanOrEqual(line);
      expect(found[0]?.symbol).toBe(name);
    }
  });

  it("puts the innermost frame of a Node trace first", async () => {
    const trace = [
      "TypeError: Cannot read properties of undefined (reading 'length')",
      `    at splitSegments (/srv/app/src/router/trie.ts:${lineOf("splitSegments") + 2}:9)`,
      `    at compileRoute (/srv/app/src/router/trie.ts:${lineOf("compileRoute") + 2}:3)`,
      "    at node:internal/main/run_main_module:28:49",
    ].join("\n");
    const { hits: found, intent } = await hits(trace);
    expect(intent?.kind).toBe("trace");
    expect(found[0]).toMatchObject({ path: "src/router/trie.ts", symbol: "splitSegments" });
  });

  it("puts a named file first, then the other legs' hits", async () => {
    const { hits: found, intent } = await hits("src/flask/sessions.py");
    expect(intent?.kind).toBe("path");
    expect(found[0]).toMatchObject({ path: "src/flask/sessions.py", startLine: 1 });
    expect(found.length).toBeGreaterThan(1);
  });

  it("searches as before when a path or name resolves to nothing", async () => {
    expect((await hits("src/nowhere.ts:12")).hits[0]?.path).not.toBe("src/nowhere.ts");
    const { hits: found } = await hits("noSuchFunction");
    expect(found.every((hit) => hit.symbol !== "noSuchFunction")).toBe(true);
  });
});
