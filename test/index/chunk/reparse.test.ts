import { describe, expect, it } from "vitest";
import { chunkFile } from "../../../src/index/chunk/index.js";
import { separateSignatures } from "../../../src/index/chunk/reparse.js";

// A file whose first parse has errors is parsed again from a rewrite that keeps every line where it is.

describe("separateSignatures", () => {
  it("puts a separator before a signature on a line of its own, keeping length and lines", () => {
    const text =
      "interface Get {\n  <K>(key: K): V[K]\n  <K>(key: K): W[K]\n  (data: T,\n    x: U\n  ): R\n}\n";
    const out = separateSignatures(text) ?? "";
    expect(out.length).toBe(text.length);
    expect(out.split("\n").length).toBe(text.split("\n").length);
    // the first signature follows `{`, the one after `x: U` follows an open parenthesis' line
    expect(out).toBe(
      "interface Get {\n  <K>(key: K): V[K]\n; <K>(key: K): W[K]\n; (data: T,\n    x: U\n  ): R\n}\n",
    );
  });

  it("leaves text alone where no line starts a signature after a complete one", () => {
    expect(separateSignatures("const a = [\n  (x) => x,\n]\nfoo(\n  (y) => y)\n")).toBeUndefined();
    expect(separateSignatures("// a comment ending in x\n  (y)\n")).toBeUndefined();
  });
});

describe("chunking a TypeScript file the grammar misreads", () => {
  it("still names the definitions after interfaces of unseparated call signatures (hono's context.ts)", async () => {
    const body = Array.from({ length: 30 }, (_, i) => `    const v${i} = this.#status + ${i}`).join("\n");
    const text = [
      "interface Get<E extends Env> {",
      "  <Key extends keyof E['Variables']>(key: Key): E['Variables'][Key]",
      "  <Key extends keyof ContextVariableMap>(key: Key): ContextVariableMap[Key]",
      "}",
      "",
      // three signatures over lines of their own: the error swallows the class below
      "interface Reply {",
      "  <T extends Body>(",
      "    body: T,",
      "  ): Answer & Typed<T, 'body'>",
      "  <T extends Body>(",
      "    body: T,",
      "  ): Answer & Typed<T, 'body'>",
      "  <T extends null>(",
      "    body: T,",
      "  ): Answer & Typed<null, 'body'>",
      "}",
      "",
      "export class Context {",
      "  #status = 200",
      "  header(name: string, value: string): void {",
      body,
      "  }",
      "  redirect(location: string): Response {",
      body,
      "  }",
      "}",
      "",
    ].join("\n");
    const chunks = await chunkFile("src/context.ts", text, { maxTokens: 200 });
    const symbols = chunks.map((chunk) => chunk.symbol);
    expect(symbols).toContain("Context > header");
    expect(symbols).toContain("Context > redirect");
    // the chunks hold the file's own text, not the rewrite's
    expect(chunks.map((chunk) => chunk.text).join("\n")).not.toContain(";");
  });
});
