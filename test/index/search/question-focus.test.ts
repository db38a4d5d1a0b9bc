import { describe, expect, it } from "vitest";
import { type SearchHit, search } from "../../../src/index/search/searcher.js";
import { indexedFiles } from "../../helpers/indexed.js";

/**
 * Which chunk stands for a file when a question is asked: the definition whose name says what the
 * question says, not the file's chunk that repeats its words most; and the file that answers may show
 * three of the first five hits.
 */

/** A Python function of about three hundred tokens (a chunk of its own) whose body says `words`. */
function routine(name: string, words: string): string {
  const body = Array.from({ length: 18 }, (_, i) => `    step${i} = ${JSON.stringify(`${words} ${i}`)}`);
  return `def ${name}(app, response):\n${body.join("\n")}\n    return step0\n`;
}

const SESSIONS = [
  // repeats the question's words more than any other chunk: lexically the best
  routine("describe_policy", "the session cookie and the session cookie policy: session cookie settings"),
  routine("save_session", "write the signed value into the response cookie"),
  routine("open_session", "read the value back from the request cookie"),
  routine("cookie_domain", "the domain the session cookie is set for"),
].join("\n\n");

const FILES: Record<string, string> = {
  "src/app/sessions.py": SESSIONS,
  // weaker matches: one of the question's words each, among others
  "src/app/helpers.py": routine("format_header", "format a header line of a response, such as a cookie"),
  "src/app/json.py": routine("dumps", "serialise any value to text, the value of a session too"),
  "src/app/wrappers.py": routine("wrap_response", "wrap the response object of the app"),
  "src/app/routing.py": routine("match_route", "match the path of a request against the routes"),
  "src/app/config.py": routine("load_config", "read configuration values from the environment"),
};

const index = indexedFiles(FILES);

const located = (hit: SearchHit | undefined) => hit && `${hit.path} ${hit.symbol}`;

describe("a question's hits", () => {
  it("lead with the definition named after what the question asks", async () => {
    const found = await search(index(), "where is the session saved into the cookie?", { limit: 10 });
    expect(located(found[0])).toBe("src/app/sessions.py save_session");
  });

  it("give the answering file three of the first five", async () => {
    const found = await search(index(), "where is the session saved into the cookie?", { limit: 10 });
    const top = found.slice(0, 5).map((hit) => hit.path);
    expect(top.filter((path) => path === "src/app/sessions.py")).toHaveLength(3);
    expect(new Set(top).size).toBe(3); // and other files the other two
  });

  it("keep a name's lookup as it was: an identifier is not a question", async () => {
    const found = await search(index(), "save_session", { limit: 10 });
    expect(located(found[0])).toBe("src/app/sessions.py save_session");
    expect(found.slice(0, 5).filter((hit) => hit.path === "src/app/sessions.py").length).toBeLessThanOrEqual(
      2,
    );
  });
});
