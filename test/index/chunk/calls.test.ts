/**
 * Chunks carry the names they call (the code graph's edges): each grammar's call and construction forms,
 * read as the callee's last name, kept with the chunk whose lines hold the call.
 */
import { describe, expect, it } from "vitest";
import { chunkFile, lineChunks } from "../../../src/index/chunk/index.js";

/** The names called anywhere in the file, sorted. */
async function calledIn(path: string, content: string): Promise<string[]> {
  const chunks = await chunkFile(path, content);
  return [...new Set(chunks.flatMap((chunk) => chunk.calls))].sort();
}

describe("calls of a chunk", () => {
  it.each([
    [
      "app.ts",
      "const app = new Hono<Env>();\nexport function route(c: Context) {\n  return c.json(parseBody(c.req), 200);\n}\n",
      ["Hono", "json", "parseBody"],
    ],
    ["app.js", "module.exports = function () {\n  return this.router.match(path);\n};\n", ["match"]],
    [
      "app.py",
      "def sign(app, value):\n    s = app.session_interface.get_signing_serializer(app)\n    return Serializer(s).dumps(value)\n",
      ["Serializer", "dumps", "get_signing_serializer"],
    ],
    [
      "gin.go",
      'package gin\n\nfunc New() *Engine {\n\tengine := &Engine{}\n\tengine.pool.New = allocate\n\treturn debugPrint(engine.trees.get("GET"))\n}\n',
      ["Engine", "debugPrint", "get"],
    ],
    [
      "lib.rs",
      'fn run() {\n    let p = Point { x: 1 };\n    let n = p.norm();\n    println!("{}", n);\n    helpers::render(p);\n}\n',
      ["Point", "norm", "println", "render"],
    ],
    [
      "App.java",
      "class App {\n  void run() {\n    Router r = new Router();\n    r.match(path);\n  }\n}\n",
      ["Router", "match"],
    ],
    ["main.c", "int main(void) {\n  return parse_args(argc, argv);\n}\n", ["parse_args"]],
    ["main.cpp", "int main() {\n  auto *p = new Parser();\n  return p->run();\n}\n", ["Parser", "run"]],
    [
      "App.cs",
      "class App {\n  void Run() {\n    var r = new Router();\n    r.Match(path);\n  }\n}\n",
      ["Match", "Router"],
    ],
    ["app.rb", "def checkout\n  cart.total(items)\nend\n", ["total"]],
    [
      "app.php",
      "<?php\nfunction run() {\n  $r = new Router();\n  $r->match(parse_url($p));\n  Cache::flush();\n}\n",
      ["Router", "flush", "match", "parse_url"],
    ],
  ])("%s", async (path, content, expected) => {
    expect(await calledIn(path, content)).toEqual(expected);
  });

  it("keeps each call with the chunk whose lines hold it", async () => {
    const statements = (call: string) =>
      Array.from({ length: 40 }, (_, i) => `    value = ${call}(value, ${i})`).join("\n");
    const content = `def first(value):\n${statements("alpha")}\n    return value\n\n\ndef second(value):\n${statements("beta")}\n    return value\n`;
    const chunks = await chunkFile("two.py", content);
    const bySymbol = new Map(chunks.map((chunk) => [chunk.symbol, chunk.calls]));
    expect(bySymbol.get("first")).toEqual(["alpha"]);
    expect(bySymbol.get("second")).toEqual(["beta"]);
  });

  it("is empty for text chunked without a syntax tree", async () => {
    expect(lineChunks("notes.txt", "call(this) and that()\n")[0]?.calls).toEqual([]);
    expect((await chunkFile("README.md", "# Title\n\nrun(x)\n"))[0]?.calls).toEqual([]);
  });
});
