import { describe, expect, it } from "vitest";
import { search } from "../../../src/index/search/searcher.js";
import { indexedFiles } from "../../helpers/indexed.js";

/**
 * A question's words in the forms the code writes them: an acronym of a phrase, and a word the code never
 * writes (`suggested`) in the forms it does (`suggestions`).
 */

/** A TypeScript function whose body says `words`, long enough to be a chunk of its own. */
function routine(name: string, words: string): string {
  const body = Array.from({ length: 14 }, (_, i) => `  const step${i} = ${JSON.stringify(`${words} ${i}`)};`);
  return `export function ${name}(input: string): string {\n${body.join("\n")}\n  return step0;\n}\n`;
}

const index = indexedFiles({
  "src/auth/jwt.ts": routine("verify", "check the signature, exp and nbf of the jwt"),
  // says the question's words, and means something else
  "src/auth/rotate.ts": routine(
    "rotateToken",
    "a web token for json clients: token rotation of the web token",
  ),
  "src/cli/distance.ts": routine("levenshteinMatches", "suggestions of command names by distance"),
  "src/cli/list.ts": routine("listAliases", "list the command names: command names and aliases"),
  // the question's other words are common here; the acronym and the forms are not
  ...Object.fromEntries(
    ["parse", "render", "fetch", "store", "route"].map((name) => [
      `src/web/${name}.ts`,
      routine(name, `${name} a json body of a web request with a token`),
    ]),
  ),
});

/** The code writes `suggestions` and `names`; the question's own `suggested` and `name` are said elsewhere. */
const formsIndex = indexedFiles({
  "src/cli/nearby.ts": routine("closest", "suggestions: names of similar commands by edit distance"),
  "src/cli/help.ts": routine("printFlags", "flags suggested in the help of a similar command"),
  ...Object.fromEntries(
    ["parse", "render", "run", "alias", "complete", "version"].map((name) => [
      `src/cli/${name}.ts`,
      routine(name, `${name} a command: command flags and a command name`),
    ]),
  ),
});

/** The code writes `dict` for what the question calls a dictionary; the question's own word is said elsewhere. */
const namesIndex = indexedFiles({
  "src/structures.ts": routine("caseless", "a dict of lower keys whatever the case of keys"),
  "src/docs.ts": routine("glossary", "a dictionary of terms and the case of words"),
  ...Object.fromEntries(
    ["parse", "render", "run", "alias", "complete", "version"].map((name) => [
      `src/util/${name}.ts`,
      routine(name, `${name} the keys: header keys and their values`),
    ]),
  ),
});

/** A class whose methods are chunks of their own, one of them `json`. */
const CONTEXT = `export class Context {\n${["header", "status", "json", "text", "html"]
  .map((name) => {
    const steps = Array.from({ length: 30 }, (_, i) => `    const step${i} = this.part(${i}, value);`);
    return `  ${name}(value: string): string {\n${steps.join("\n")}\n    return this.render(step0);\n  }\n`;
  })
  .join("\n")}}\n`;

const member = indexedFiles({
  "src/context.ts": CONTEXT,
  // says the question's words, json among them
  "src/client/decode.ts": routine("decodeBody", "decode a json body: json text to json values"),
  "package.json": '{ "name": "demo", "dependencies": { "left-pad": "1.0.0" } }\n',
  ...Object.fromEntries(
    ["stream", "cache", "proxy", "retry"].map((name) => [
      `src/client/${name}.ts`,
      routine(name, `${name} a json body: its json, its headers`),
    ]),
  ),
});

/**
 * The first hit's file with one chunk-level leg alone: the question's words as written (`lexical`), or
 * with their other forms (`forms`).
 */
async function firstOf(
  of: typeof index,
  question: string,
  leg: "lexical" | "forms",
): Promise<string | undefined> {
  const weights = { lexical: 0, forms: 0, file: 0, path: 0, vector: 0, exact: 0, [leg]: 1 };
  return (await search(of(), question, { limit: 5, weights }))[0]?.path;
}

/** Where `Context > json` comes among a question's first ten hits (-1: not among them). */
async function rank(question: string): Promise<number> {
  return (await search(member(), question, { limit: 10 })).findIndex(
    (hit) => hit.symbol === "Context > json",
  );
}

describe("a question's words in the code's forms", () => {
  it("finds what an acronym names: a JSON web token is a jwt", async () => {
    const found = await search(index(), "how is a JSON web token verified?", { limit: 5 });
    expect(found[0]?.path).toBe("src/auth/jwt.ts");
  });

  it("finds a word the code never writes by its other forms", async () => {
    const found = await search(index(), "how are command names suggested?", { limit: 5 });
    expect(found[0]?.path).toBe("src/cli/distance.ts");
  });

  it("counts a word's other forms as the word when the code writes them, though the word is said elsewhere", async () => {
    const question = "how are similar command names suggested?";
    // the words as the question writes them are in the help's chunk; their forms in the one that suggests
    expect(await firstOf(formsIndex, question, "lexical")).toBe("src/cli/help.ts");
    expect(await firstOf(formsIndex, question, "forms")).toBe("src/cli/nearby.ts");
  });

  it("counts the name code writes for a word as the word: a dictionary is a dict", async () => {
    const question = "which dictionary ignores the case of its keys?";
    expect(await firstOf(namesIndex, question, "lexical")).toBe("src/docs.ts");
    expect(await firstOf(namesIndex, question, "forms")).toBe("src/structures.ts");
  });

  it("reads obj.member in a question as the member the code defines", async () => {
    // the same words, the member written as code names it: its definition moves up
    const plain = await rank("what does json do to the response?");
    const written = await rank("what does c.json do to the response?");
    expect(written).toBeGreaterThanOrEqual(0);
    expect(written).toBeLessThan(plain);
  });

  it("reads obj.member as a file when the index holds a file of that name", async () => {
    // `package.json` is a file here, not a member `json` of something called `package`
    expect(await rank("what does package.json hold?")).toBeGreaterThanOrEqual(
      await rank("what does package json hold?"),
    );
  });

  it("leaves a name's lookup alone", async () => {
    const found = await search(index(), "rotateToken", { limit: 5 });
    expect(found[0]?.path).toBe("src/auth/rotate.ts");
  });
});
