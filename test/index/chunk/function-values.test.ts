import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunkFile } from "../../../src/index/chunk/index.js";
import { requireBuiltCli, umbraSync } from "../../helpers/cli.js";
import { cleanup, tempDir } from "../../helpers/workspace.js";

/** A function body of `lines` statements, so that each definition is big enough to own a chunk. */
function body(name: string, lines = 30): string {
  return Array.from({ length: lines }, (_, i) => `  const ${name}Step${i} = compute("${name}", ${i});`).join(
    "\n",
  );
}

const TYPESCRIPT = `import { compute } from "./compute";

export const parseAmount = (text: string): number => {
${body("parse")}
  return Number(text);
};

export const formatAmount = function (value: number): string {
${body("format")}
  return value.toFixed(2);
};

const wrappedHandler = ((event: string) => {
${body("wrapped")}
  return event;
}) as unknown as Handler;

export const guardedRoute = withAuth(async (request: Request) => {
${body("guarded")}
  return request;
});

export class PaymentForm {
  submitPayment = async (amount: number) => {
${body("submit")}
    return amount;
  };
  private readonly resetForm: () => void = () => {
${body("reset")}
  };
}

export function outer() {
  const doubled = [1, 2].map((x) => {
${body("doubled")}
    return x * 2;
  });
  return doubled;
}
`;

const JAVASCRIPT = `const { compute } = require("./compute");

exports.parseQuery = function (text) {
${body("query")}
  return text;
};

module.exports.renderPage = (page) => {
${body("render")}
  return page;
};

function Router() {}
Router.prototype.dispatchRequest = function (request) {
${body("dispatch")}
  return request;
};

class Queue {
  drainQueue = () => {
${body("drain")}
  };
}
`;

const TSX = `import { forwardRef } from "react";

export const FancyButton = forwardRef<HTMLButtonElement, Props>((props, ref) => {
${body("fancy")}
  return <button ref={ref}>{props.label}</button>;
});

export const PriceTag = ({ amount }: { amount: number }) => {
${body("price")}
  return <span>{amount}</span>;
};

export class Panel extends Component {
  toggleOpen = () => {
${body("toggle")}
  };
}
`;

async function symbols(path: string, text: string): Promise<string[]> {
  return (await chunkFile(path, text, { maxTokens: 400 })).map((chunk) => chunk.symbol);
}

describe("functions held in variables and class properties are symbols", () => {
  it("in TypeScript", async () => {
    const found = await symbols("pay.ts", TYPESCRIPT);
    for (const name of [
      "parseAmount",
      "formatAmount",
      "wrappedHandler",
      "guardedRoute",
      "PaymentForm > submitPayment",
      "PaymentForm > resetForm",
    ]) {
      expect(found).toContain(name);
    }
    // a call given a function inside a function body is a statement, not a definition
    expect(found.some((symbol) => symbol.includes("doubled"))).toBe(false);
  });

  it("in JavaScript, with CommonJS exports and prototype methods", async () => {
    const found = await symbols("router.js", JAVASCRIPT);
    for (const name of ["parseQuery", "renderPage", "Router > dispatchRequest", "Queue > drainQueue"]) {
      expect(found).toContain(name);
    }
  });

  it("in TSX", async () => {
    const found = await symbols("button.tsx", TSX);
    for (const name of ["FancyButton", "PriceTag", "Panel > toggleOpen"]) expect(found).toContain(name);
  });
});

describe("umbra search finds them by name", () => {
  let home: string;
  let root: string;
  beforeAll(async () => {
    requireBuiltCli();
    home = await tempDir("symbols-home");
    root = join(await tempDir("symbols-ws"), "app");
    await mkdir(join(root, "src"), { recursive: true });
    await writeFile(join(root, "src", "pay.ts"), TYPESCRIPT);
    await writeFile(join(root, "src", "router.js"), JAVASCRIPT);
    await writeFile(join(root, "src", "button.tsx"), TSX);
  });
  afterAll(async () => {
    await cleanup(home, join(root, ".."));
  });

  it("with the chunk's symbol", () => {
    const env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    const cases: [string, string, string][] = [
      ["parseAmount", "src/pay.ts", "parseAmount"],
      ["guardedRoute", "src/pay.ts", "guardedRoute"],
      ["submitPayment", "src/pay.ts", "PaymentForm > submitPayment"],
      ["resetForm", "src/pay.ts", "PaymentForm > resetForm"],
      ["dispatchRequest", "src/router.js", "Router > dispatchRequest"],
      ["renderPage", "src/router.js", "renderPage"],
      ["FancyButton", "src/button.tsx", "FancyButton"],
      ["toggleOpen", "src/button.tsx", "Panel > toggleOpen"],
    ];
    for (const [query, path, symbol] of cases) {
      const search = umbraSync(env, ["search", query, "--root", root, "--json", "--limit", "3"]);
      expect(search.code).toBe(0);
      const top = (JSON.parse(search.stdout) as { path: string; symbol: string }[])[0];
      expect({ query, path: top?.path, symbol: top?.symbol }).toEqual({ query, path, symbol });
    }
  });
});
