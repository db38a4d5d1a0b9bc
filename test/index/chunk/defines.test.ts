/**
 * A chunk lists every definition that starts in it: small definitions grouped into one chunk (whose
 * symbol can name at most one of them) are each named, with their full symbol paths, nested ones too;
 * declarations of shapes only (interfaces, type aliases, structs) are listed apart.
 */
import { describe, expect, it } from "vitest";
import { type Chunk, chunkFile } from "../../../src/index/chunk/index.js";
import { chunkHolding, expectValidChunks, lineOf } from "./helpers.js";

/** The one chunk holding both lines named by their text. */
function holding(content: string, chunks: Chunk[], first: string, last: string): Chunk {
  return chunkHolding(chunks, lineOf(content, first), lineOf(content, last));
}

const GO = `package router

type Options struct {
\tStrict bool
}

func cleanPath(p string) string {
\treturn p
}

func (e *Engine) redirectTrailingSlash(c *Context) {
\tc.Redirect(301, cleanPath(c.Path))
}

var notFound = func(c *Context) {
\tc.Status(404)
}

func (e *Engine) Use(middleware ...HandlerFunc) {
\thandler := func(c *Context) { c.Next() }
\te.handlers = append(e.handlers, handler)
}
`;

const PYTHON = `import os


def _render(app, template, context):
    return template.render(context)


def render_template(name, **context):
    return _render(None, name, context)


class Response:
    def raise_for_status(self):
        if self.status >= 400:
            raise HTTPError(self.status)

    def close(self):
        self.raw.close()


def outer():
    def inner():
        return 1
    return inner
`;

const TYPESCRIPT = `import { getPath } from "./url";

export interface MergeOptions {
  strict: boolean;
}

export type Path = string;

const notFoundHandler = (c: Context) => c.text("404 Not Found", 404);

export function mergePath(base: string, sub: string): string {
  return base + sub;
}

export const router = {
  match(path: Path) {
    return getPath(path);
  },
};

export class Hono {
  route = (path: string) => mergePath("/", path);
  fetch(request: Request) {
    return notFoundHandler(request);
  }
}
`;

describe("what a chunk defines", () => {
  it("Go: the functions, methods and function variables grouped in a chunk, the struct as a declaration", async () => {
    const chunks = await chunkFile("router.go", GO);
    expectValidChunks(GO, chunks);
    const chunk = holding(GO, chunks, "type Options struct", "e.handlers = append");
    expect(chunk.symbol).toBe("");
    expect(chunk.defines).toEqual([
      "cleanPath",
      "Engine > redirectTrailingSlash",
      "notFound",
      "Engine > Use",
      "Engine > Use > handler",
    ]);
    expect(chunk.declares).toEqual(["Options"]);
  });

  it("Python: functions, methods under their class, nested functions under theirs", async () => {
    const chunks = await chunkFile("templating.py", PYTHON);
    expectValidChunks(PYTHON, chunks);
    const chunk = holding(PYTHON, chunks, "def _render", "return inner");
    expect(chunk.defines).toEqual([
      "_render",
      "render_template",
      "Response",
      "Response > raise_for_status",
      "Response > close",
      "outer",
      "outer > inner",
    ]);
    expect(chunk.declares).toEqual([]);
  });

  it("TypeScript: arrow functions, object methods, class properties and methods; interfaces and aliases apart", async () => {
    const chunks = await chunkFile("url.ts", TYPESCRIPT);
    expectValidChunks(TYPESCRIPT, chunks);
    const chunk = holding(TYPESCRIPT, chunks, "export interface MergeOptions", "return notFoundHandler");
    expect(chunk.defines).toEqual([
      "notFoundHandler",
      "mergePath",
      "router",
      "router > match",
      "Hono",
      "Hono > route",
      "Hono > fetch",
    ]);
    expect(chunk.declares).toEqual(["MergeOptions", "Path"]);
  });

  // A name given a lambda or a closure is a function under that name, in every language; a name given
  // any other value is not. Each file is small enough to be one chunk, so its `defines` lists them all.
  it.each([
    [
      "handlers.py",
      `import os

parse_amount = lambda text: float(text)
retries = 3


class Form:
    key: Callable = staticmethod(lambda item: item.name)
    label = "form"

    def __init__(self):
        self.on_error = lambda error: print(error)
        size = len(self.label)
`,
      ["parse_amount", "Form", "Form > key", "Form > __init__", "Form > __init__ > on_error"],
    ],
    [
      "handlers.rb",
      `SQUARE = ->(x) { x * x }
LIMIT = 3
validate = lambda do |x|
  x > 0
end

class Form
  HANDLER = proc { |event| event }
  BUILDER = Proc.new { |value| value }
  NAME = "form"
end
`,
      ["SQUARE", "validate", "Form", "Form > HANDLER", "Form > BUILDER"],
    ],
    [
      "handlers.php",
      `<?php
$handler = function ($request) {
    return $request;
};
$double = fn($x) => $x * 2;
$limit = 3;
`,
      ["handler", "double"],
    ],
    [
      "Form.java",
      `class Form {
    private final Comparator<String> byName = (a, b) -> a.compareTo(b);
    private final int limit = 3;

    void submit() {
        Runnable task = () -> run();
        int size = 2;
    }
}
`,
      ["Form", "Form > byName", "Form > submit", "Form > submit > task"],
    ],
    [
      "Form.cs",
      `class Form
{
    Func<int, int> Square = x => x * x;
    Action<string> Log = delegate (string message) { Console.WriteLine(message); };
    int limit = 3;

    void Submit()
    {
        Func<int> next = () => 1;
        int size = 2;
    }
}
`,
      ["Form", "Form > Square", "Form > Log", "Form > Submit", "Form > Submit > next"],
    ],
    [
      "lib.rs",
      `const SQUARE: fn(i32) -> i32 = |x| x * x;
const LIMIT: i32 = 3;

fn main() {
    let add = |a: i32, b: i32| a + b;
    let size = 2;
}
`,
      ["SQUARE", "main", "main > add"],
    ],
    [
      "Cart.kt",
      `class Cart(val id: Int) {
    val double = { x: Int -> x * 2 }
    val square = fun(x: Int): Int = x * x
    val limit = 3
}

fun String.words(): List<String> = split(" ")
`,
      ["Cart", "Cart > double", "Cart > square", "String > words"],
    ],
    [
      "Cart.swift",
      `class Cart {
    let double = { (x: Int) -> Int in x * 2 }
    var count: Int { return 3 }
    let limit = 3
    var items: [Int] = []
}
`,
      ["Cart", "Cart > double", "Cart > count"],
    ],
  ])("%s: names given a lambda or a closure, not names given other values", async (path, text, expected) => {
    const chunks = await chunkFile(path, text);
    expectValidChunks(text, chunks);
    expect(chunks.flatMap((chunk) => chunk.defines)).toEqual(expected);
  });

  it("Kotlin and Swift: type aliases and protocols are declarations, their code definitions", async () => {
    const kotlin = "typealias Prices = Map<String, Int>\n\nfun total(prices: Prices) = prices.size\n";
    const [kt] = await chunkFile("prices.kt", kotlin);
    expect([kt?.defines, kt?.declares]).toEqual([["total"], ["Prices"]]);
    const swift =
      "protocol Priced {\n    func price() -> Int\n}\n\ntypealias Prices = [String: Int]\n\nfunc total() -> Int { 1 }\n";
    const [sw] = await chunkFile("prices.swift", swift);
    expect([sw?.defines, sw?.declares]).toEqual([["total"], ["Priced", "Priced > price", "Prices"]]);
  });

  it("gives each definition to the one chunk its first line is in", async () => {
    // big enough bodies that every function owns a chunk
    const body = Array.from({ length: 60 }, (_, i) => `    total += compute(${i}, "step ${i}")`).join("\n");
    const content = ["a", "b", "c"].map(
      (name) => `def ${name}():\n    total = 0\n${body}\n    return total\n`,
    );
    const text = content.join("\n\n");
    const chunks = await chunkFile("steps.py", text);
    const listed = chunks.flatMap((chunk) => chunk.defines);
    expect(listed).toEqual(["a", "b", "c"]);
    for (const name of ["a", "b", "c"]) {
      const first = chunkHolding(chunks, lineOf(text, `def ${name}()`), lineOf(text, `def ${name}()`));
      expect(first.defines).toEqual([name]);
    }
    // the later pieces of a split function carry its symbol but define nothing new
    expect(chunks.filter((chunk) => chunk.defines.length === 0).every((chunk) => chunk.symbol !== "")).toBe(
      true,
    );
  });

  it("lists nothing for files chunked without a syntax tree", async () => {
    const chunks = await chunkFile("notes.txt", "def not_code():\n    pass\n");
    expect(chunks.map((chunk) => [chunk.defines, chunk.declares])).toEqual([[[], []]]);
  });
});
