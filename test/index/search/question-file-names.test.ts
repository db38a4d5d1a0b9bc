import { describe, expect, it } from "vitest";
import { search } from "../../../src/index/search/searcher.js";
import { indexedFiles } from "../../helpers/indexed.js";

/**
 * A question names what the code does, and the function that does it is often named with its words: that
 * name is evidence for its file as well, not only for which of the file's chunks comes first.
 */

/** A TypeScript function whose body says `words` now and then among other statements. */
function routine(name: string, words: string, mentions: number): string {
  const body = Array.from({ length: 24 }, (_, i) =>
    i < mentions
      ? `  state.note(${JSON.stringify(`${words} ${i}`)});`
      : `  state.count${i} = state.total * ${i} + state.offset;`,
  );
  return `export function ${name}(state: State): void {\n${body.join("\n")}\n}\n`;
}

const index = indexedFiles({
  // says the question's words in its body, under a name that does not say them
  "src/core/response.ts": routine("handleResponse", "retry after a delay computed from the headers", 3),
  // says them in its name only
  "src/core/backoff.ts": `export function computeRetryDelay(attempt: number, limit: number): number {
  const base = Math.min(limit, 2 ** attempt) * 1000;
  const jitter = Math.random() * 100;
  return base + jitter;
}
`,
  ...Object.fromEntries(
    ["parse", "render", "fetch", "store", "cache"].map((name) => [
      `src/core/${name}.ts`,
      routine(name, `${name} the response body and its headers`, 3),
    ]),
  ),
});

describe("a question's words in a definition's name", () => {
  it("rank the file of the function named for the question above a file that says them more", async () => {
    const hits = await search(index(), "how is the delay before a retry computed?", { limit: 10 });
    expect(hits[0]?.path).toBe("src/core/backoff.ts");
    // the file that says the words is still found, right after it
    expect(hits.find((hit) => hit.path !== "src/core/backoff.ts")?.path).toBe("src/core/response.ts");
  });
});
