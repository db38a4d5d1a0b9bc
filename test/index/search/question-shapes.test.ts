import { describe, expect, it } from "vitest";
import { search } from "../../../src/index/search/searcher.js";
import { indexedFiles } from "../../helpers/indexed.js";

/**
 * A question asks what code does: an options interface whose doc comments describe the behaviour in prose
 * comes after the code that implements it.
 */

/** An interface of many documented options, long enough to be split into several chunks. */
function optionsInterface(name: string, prose: string): string {
  const members = Array.from(
    { length: 40 },
    (_, i) => `  /**\n   * ${prose} (setting ${i}).\n   */\n  setting${i}?: number;\n`,
  );
  return `export interface ${name} {\n${members.join("\n")}}\n`;
}

/** A TypeScript function whose body says `words`, long enough to be a chunk of its own. */
function routine(name: string, words: string): string {
  const body = Array.from({ length: 14 }, (_, i) => `  const step${i} = ${JSON.stringify(`${words} ${i}`)};`);
  return `export function ${name}(input: string): string {\n${body.join("\n")}\n  return step0;\n}\n`;
}

const index = indexedFiles({
  "src/types/options.ts": optionsInterface(
    "RetryOptions",
    "When the response has a Retry-After header with a date, the delay before retrying waits until that date",
  ),
  // says the question's words once, among much else
  "src/core/wait.ts": `export function nextWait(response: Response): number {
  const value = response.headers.get("retry-after"); // a date: the delay until it
${Array.from({ length: 30 }, (_, i) => `  const part${i} = Math.min(value.length, ${i}) * response.status;`).join("\n")}
  return part0;
}
`,
  ...Object.fromEntries(
    ["parse", "render", "fetch", "store", "cache"].map((name) => [
      `src/core/${name}.ts`,
      routine(name, `${name} the response body and its headers`),
    ]),
  ),
});

describe("a question's answer before the shapes that document it", () => {
  it("ranks the implementing function above an options interface that says more of the question's words", async () => {
    const question = "where is a Retry-After header with a date turned into a delay before retrying?";
    const hits = await search(index(), question, { limit: 10 });
    expect(hits[0]?.path).toBe("src/core/wait.ts");
    // the interface is still found, after the code
    expect(hits.some((hit) => hit.path === "src/types/options.ts")).toBe(true);
  });

  it("leaves a name's lookup of the interface alone", async () => {
    const hits = await search(index(), "RetryOptions", { limit: 5 });
    expect(hits[0]?.path).toBe("src/types/options.ts");
  });
});
