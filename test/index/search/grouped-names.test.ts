import { describe, expect, it } from "vitest";
import { type SearchHit, search } from "../../../src/index/search/searcher.js";
import { indexedFiles } from "../../helpers/indexed.js";

/**
 * A question that names a small function which the chunker grouped with other small ones (the chunk's
 * symbol names none of them): the chunk is lifted by the name of the function it defines, as a chunk of
 * one function is by its symbol.
 */

/** A Go function of about three hundred tokens or more (a chunk of its own) whose body says `words`. */
function routine(name: string, words: string, lines = 18): string {
  const body = Array.from({ length: lines }, (_, i) => `\tstep${i} := ${JSON.stringify(`${words} ${i}`)}`);
  return `func ${name}(w http.ResponseWriter, r *http.Request) string {\n${body.join("\n")}\n\treturn step0\n}\n`;
}

const SMALL = `func cookieDomain(r *http.Request) string {
\treturn r.Host
}

func (s *Store) saveSession(w http.ResponseWriter, value string) {
\thttp.SetCookie(w, &http.Cookie{Name: s.name, Value: s.sign(value)})
}

func (s *Store) openSession(r *http.Request) string {
\treturn s.unsign(r.Header.Get("Cookie"))
}
`;

const SESSIONS = [
  "package web\n",
  // repeats the question's words more than any other chunk: lexically the best
  routine("describePolicy", "the session cookie and the session cookie policy: session cookie settings"),
  SMALL,
  routine("rotateKeys", "rotate the keys that sign a session cookie", 24),
].join("\n");

const FILES: Record<string, string> = {
  "web/sessions.go": SESSIONS,
  // calls the small functions by name: found by their names too, but defines neither
  "web/handlers.go": `package web\n\nfunc login(s *Store, w http.ResponseWriter, r *http.Request) {\n\tvalue := s.openSession(r)\n\ts.saveSession(w, value)\n\ts.saveSession(w, value + "!")\n}\n`,
  "web/helpers.go": `package web\n\n${routine("formatHeader", "format a header line of a response, such as a cookie")}`,
  "web/json.go": `package web\n\n${routine("dumps", "serialise any value to text, the value of a session too")}`,
  "web/routing.go": `package web\n\n${routine("matchRoute", "match the path of a request against the routes")}`,
};

const index = indexedFiles(FILES);

const lineOf = (needle: string) => SESSIONS.split("\n").findIndex((line) => line.includes(needle)) + 1;
const holds = (hit: SearchHit | undefined, line: number) =>
  hit !== undefined && hit.path === "web/sessions.go" && hit.startLine <= line && line <= hit.endLine;

describe("a chunk grouping small functions", () => {
  it("is one chunk without a symbol, holding the three small functions", async () => {
    const rows = index().lexical.chunksBySymbolName(["saveSession"], 10);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      symbol: "",
      defines: ["cookieDomain", "Store > saveSession", "Store > openSession"],
    });
  });

  it("comes first for a question naming one of its functions, before the file's lexically best chunk", async () => {
    const found = await search(index(), "where is the session saved into the cookie?", { limit: 10 });
    expect(holds(found[0], lineOf("func (s *Store) saveSession")), JSON.stringify(found.slice(0, 3))).toBe(
      true,
    );
    // the lexically best chunk is still among the first hits
    expect(found.slice(0, 5).some((hit) => holds(hit, lineOf("func describePolicy")))).toBe(true);
  });

  it("is where a name or a qualified name jumps", async () => {
    for (const query of ["saveSession", "Store.openSession"]) {
      const found = await search(index(), query, { limit: 10 });
      expect(holds(found[0], lineOf("func (s *Store) saveSession")), query).toBe(true);
    }
  });
});
