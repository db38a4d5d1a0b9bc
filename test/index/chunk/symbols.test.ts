/**
 * Every function form of every grammar-backed language is a symbol with its full path: each fixture
 * gives each definition a body big enough to own a chunk, so a chunk's symbol names exactly one.
 */
import { describe, expect, it } from "vitest";
import { chunkFile } from "../../../src/index/chunk/index.js";

/** `lines` statements in a language's syntax (`%` is replaced by the step number). */
function body(statement: string, lines = 30): string {
  return Array.from({ length: lines }, (_, i) => statement.replaceAll("%", String(i))).join("\n");
}

const JS_BODY = body("    compute(% + value, 'step %');");

const TYPESCRIPT = `import { compute } from "./compute";

export const loadUser = async function () {
${JS_BODY}
};

let renderRow = function renderNamed(value: number) {
${JS_BODY}
};

export class Socket {
  handle = () => {
${JS_BODY}
  };
  private onData = async (value: number) => {
${JS_BODY}
  };
  send(value: number) {
${JS_BODY}
  }
}

export const router = {
  match(value: string) {
${JS_BODY}
  },
  resolve: function (value: string) {
${JS_BODY}
  },
  reject: (value: string) => {
${JS_BODY}
  },
  name: "router",
};

export function outer(value: number) {
  const inner = (step: number) => {
${JS_BODY}
  };
  function helper() {
${JS_BODY}
  }
${JS_BODY}
}

export const doubled = [1, 2, 3].map((value) => {
${JS_BODY}
  return value * 2;
});

export const settings = { retries: 3, timeout: 10 };
`;

const JAVASCRIPT = `const handlers = {
  async open(value) {
${JS_BODY}
  },
  close: async function (value) {
${JS_BODY}
  },
};

let parse = function parser(value) {
${JS_BODY}
};

const evens = [1, 2, 3].filter((value) => {
${JS_BODY}
  return value % 2 === 0;
});
`;

const PY_BODY = (indent: string) => body(`${indent}total = total + compute(%, "step %")`);

const PYTHON = `import os


def outer(value):
    def inner(step):
${PY_BODY("        ")}
        return total

    async def later(step):
${PY_BODY("        ")}
        return total

${PY_BODY("    ")}
    return inner


class Store:
    key = staticmethod(lambda item: (
${body('        + compute(%, "step %")')}
    ))

    def get(self, key):
${PY_BODY("        ")}
        return total

    @property
    def size(self):
${PY_BODY("        ")}
        return total

    class Meta:
        def order(self):
${PY_BODY("            ")}
            return total
`;

const GO_BODY = body('\ttotal += compute(%, "step %")');

const GO = `package store

type Stack[T any] struct {
\titems []T
}

func (s *Stack[T]) Push(item T) {
${GO_BODY}
}

func (Stack[T]) Len() int {
${GO_BODY}
\treturn total
}

func (m Map[K, V]) Get(key K) V {
${GO_BODY}
\treturn total
}

var handler = func(value int) int {
${GO_BODY}
\treturn total
}

func Run() {
\tworker := func(value int) {
${GO_BODY}
\t}
${GO_BODY}
\tworker(total)
}
`;

const RUST_BODY = body('    total += compute(%, "step %");');

const RUST = `struct Stack<T> { items: Vec<T> }

impl<T> Stack<T> {
    pub fn push(&mut self, item: T) {
${RUST_BODY}
    }
}

trait Shape {
    fn area(&self) -> f64 {
${RUST_BODY}
        total
    }
}

const SCALE: fn(f64) -> f64 = |value| {
${RUST_BODY}
    total
};

mod geometry {
    pub fn distance(a: f64, b: f64) -> f64 {
${RUST_BODY}
        total
    }
}
`;

const JAVA_BODY = body('        total += compute(%, "step %");');

const JAVA = `package shop;

public class Cart {
    public Cart() {
${JAVA_BODY}
    }

    public int total() {
${JAVA_BODY}
        return total;
    }

    private final Comparator<Line> byPrice = (a, b) -> {
${JAVA_BODY}
        return total;
    };

    static class Line {
        int price() {
${JAVA_BODY}
            return total;
        }
    }
}
`;

const C_BODY = body('    total += compute(%, "step %");');

const C = `#include <stdio.h>

static int list_push(struct list *list, int value) {
${C_BODY}
    return total;
}

int *list_find(struct list *list, int value) {
${C_BODY}
    return 0;
}
`;

const CPP = `#include <vector>

namespace geo {
class Shape {
public:
    double area() const {
${C_BODY}
        return total;
    }
};

double Shape::perimeter() const {
${C_BODY}
    return total;
}

auto scale = [](double value) {
${C_BODY}
    return value;
};
}

template <typename T>
T largest(T a, T b) {
${C_BODY}
    return a;
}
`;

const CSHARP = `namespace Shop;

public class Cart
{
    public int Total()
    {
${JAVA_BODY}
        return total;
    }

    Func<int, int> Scale = value =>
    {
${JAVA_BODY}
        return total;
    };

    public int Count
    {
        get
        {
${JAVA_BODY}
            return total;
        }
    }
}
`;

const RUBY_BODY = body("    total += compute(%, 'step %')");

const RUBY = `module Shop
  class Cart
    def total
${RUBY_BODY}
    end

    def self.build
${RUBY_BODY}
    end

    class << self
      def create
${RUBY_BODY}
      end
    end

    DISCOUNT = lambda do |value|
${RUBY_BODY}
    end

    define_method(:checkout) do |value|
${RUBY_BODY}
    end
  end
end
`;

const PHP_BODY = body("        $total += compute(%, 'step %');");

const PHP = `<?php
namespace Shop;

function helper($value) {
${PHP_BODY}
    return $total;
}

$handler = function ($value) {
${PHP_BODY}
    return $total;
};

class Cart {
    public function total() {
${PHP_BODY}
        return $total;
    }
}

trait Counts {
    public function count() {
${PHP_BODY}
        return $total;
    }
}
`;

const KOTLIN_BODY = body('        total += compute(%, "step %")');

const KOTLIN = `package shop

class Cart(val id: Int) {
    fun total(): Int {
${KOTLIN_BODY}
        return total
    }

    val discount = { value: Int ->
${KOTLIN_BODY}
        total
    }

    companion object {
        fun create(): Cart {
${KOTLIN_BODY}
            return Cart(total)
        }
    }
}

object Registry {
    fun register(cart: Cart) {
${KOTLIN_BODY}
    }
}

fun String.words(): List<String> {
${KOTLIN_BODY}
    return listOf(this)
}
`;

const SWIFT_BODY = body('        total += compute(%, "step %")');

const SWIFT = `import Foundation

class Cart {
    init(id: Int) {
${SWIFT_BODY}
    }

    func total() -> Int {
${SWIFT_BODY}
        return total
    }

    var count: Int {
${SWIFT_BODY}
        return total
    }

    let discount = { (value: Int) -> Int in
${SWIFT_BODY}
        return total
    }
}

extension Cart {
    func checkout() {
${SWIFT_BODY}
    }
}

struct Line {
    subscript(index: Int) -> Int {
${SWIFT_BODY}
        return total
    }
}
`;

async function symbols(path: string, text: string): Promise<string[]> {
  return [...new Set((await chunkFile(path, text, { maxTokens: 400 })).map((chunk) => chunk.symbol))];
}

describe("every function form is a symbol with its full path", () => {
  it.each([
    [
      "app.ts",
      TYPESCRIPT,
      [
        "loadUser",
        "renderRow",
        "Socket > handle",
        "Socket > onData",
        "Socket > send",
        "router > match",
        "router > resolve",
        "router > reject",
        "outer > inner",
        "outer > helper",
      ],
    ],
    ["app.tsx", TYPESCRIPT, ["loadUser", "Socket > onData", "router > match", "outer > inner"]],
    ["handlers.js", JAVASCRIPT, ["handlers > open", "handlers > close", "parse"]],
    [
      "store.py",
      PYTHON,
      [
        "outer > inner",
        "outer > later",
        "Store > key",
        "Store > get",
        "Store > size",
        "Store > Meta > order",
      ],
    ],
    ["store.go", GO, ["Stack > Push", "Stack > Len", "Map > Get", "handler", "Run > worker"]],
    ["lib.rs", RUST, ["Stack > push", "Shape > area", "SCALE", "geometry > distance"]],
    ["Cart.java", JAVA, ["Cart > Cart", "Cart > total", "Cart > byPrice", "Cart > Line > price"]],
    ["list.c", C, ["list_push", "list_find"]],
    ["shapes.cpp", CPP, ["geo > Shape > area", "geo > Shape > perimeter", "geo > scale", "largest"]],
    ["Cart.cs", CSHARP, ["Shop > Cart > Total", "Shop > Cart > Scale", "Shop > Cart > Count"]],
    [
      "cart.rb",
      RUBY,
      [
        "Shop > Cart > total",
        "Shop > Cart > build",
        "Shop > Cart > create",
        "Shop > Cart > DISCOUNT",
        "Shop > Cart > checkout",
      ],
    ],
    ["cart.php", PHP, ["helper", "handler", "Cart > total", "Counts > count"]],
    [
      "Cart.kt",
      KOTLIN,
      ["Cart > total", "Cart > discount", "Cart > create", "Registry > register", "String > words"],
    ],
    [
      "Cart.swift",
      SWIFT,
      [
        "Cart > init",
        "Cart > total",
        "Cart > count",
        "Cart > discount",
        "Cart > checkout",
        "Line > subscript",
      ],
    ],
  ])("%s", async (path, text, expected) => {
    const found = await symbols(path, text);
    for (const symbol of expected) expect(found, `${path}: ${found.join(" | ")}`).toContain(symbol);
  });

  it("a receiver or impl type with a long run of blanks in it is named at once", async () => {
    // Trimming the type's trailing blanks went over the run again from each of its blanks: seconds.
    const blanks = " ".repeat(120_000);
    expect(await symbols("a.go", `package p\n\nfunc (s *p${blanks}.Stack) Push() {\n\treturn\n}\n`)).toEqual([
      "Stack > Push",
    ]);
    expect(await symbols("a.rs", `impl a${blanks}::B {\n    fn f(&self) {}\n}\n`)).toEqual(["B"]);
    expect(await symbols("b.go", "package p\n\nfunc (s * Stack ) Push() {\n\treturn\n}\n")).toEqual([
      "Stack > Push",
    ]);
  }, 10_000);

  it("a callback passed to a call is not a symbol, nor an object without functions", async () => {
    const ts = await symbols("app.ts", TYPESCRIPT);
    expect(ts.some((symbol) => symbol.includes("doubled") || symbol.includes("settings"))).toBe(false);
    const js = await symbols("handlers.js", JAVASCRIPT);
    expect(js.some((symbol) => symbol.includes("evens"))).toBe(false);
  });
});
