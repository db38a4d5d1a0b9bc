import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { indexWorkspace } from "../../../src/index/indexer.js";
import { openIndex } from "../../../src/index/open.js";
import { type SearchOptions, search } from "../../../src/index/search/searcher.js";
import { warmSearch } from "../../../src/index/search/snapshot.js";
import { cleanup, tempDir } from "../../helpers/workspace.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
const config = loadConfig({ env: {} });

beforeEach(async () => {
  home = await tempDir("home");
  root = await tempDir("ws");
  env = { ...process.env, UMBRA_HOME: home };
});
afterEach(async () => {
  await cleanup(home, root);
});

async function put(files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

async function rankedFiles(text: string, options: SearchOptions = {}): Promise<string[]> {
  await indexWorkspace(root, { config, env });
  const index = await openIndex(root, config, env);
  try {
    const files: string[] = [];
    for (const hit of await search(index, text, { limit: 50, ...options }))
      if (!files.includes(hit.path)) files.push(hit.path);
    return files;
  } finally {
    index.close();
  }
}

/** Filler modules that share the report's words, so that content alone does not decide. */
function fillers(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++)
    files[`pkg/render/part${i}.py`] =
      `def part${i}(value, width):\n    """Render the value padded to the width."""\n    return str(value).rjust(width)\n`;
  return files;
}

describe("search legs", () => {
  it("ranks the file named after what the report names (path leg)", async () => {
    await put({
      ...fillers(12),
      "pkg/render/escaping.py": "def fix(text):\n    return text.replace('_', '\\\\_')\n",
    });
    const report =
      "Escaping is wrong: an underscore gets a backslash when the value is rendered with padding width";
    const withPath = await rankedFiles(report);
    const withoutPath = await rankedFiles(report, { weights: { path: 0 } });
    expect(withPath[0]).toBe("pkg/render/escaping.py");
    expect(withoutPath[0]).not.toBe("pkg/render/escaping.py");
  });

  it("lifts a file that the best-ranked file imports (import boost)", async () => {
    await put({
      ...fillers(12),
      "pkg/render/table.py":
        'from .cells import cell_text\n\ndef render_table(rows, width):\n    """Render rows of values padded to the width."""\n    return [cell_text(value, width) for value in rows]\n',
      "pkg/render/cells.py": "def cell_text(value, width):\n    return str(value).rjust(width)\n",
    });
    const report = "render_table(rows, width) pads each value to the wrong width when rendered";
    const boosted = await rankedFiles(report, { importBoost: 0.5 });
    const plain = await rankedFiles(report, { importBoost: 0 });
    expect(boosted[0]).toBe("pkg/render/table.py");
    expect(boosted.indexOf("pkg/render/cells.py")).toBeLessThan(plain.indexOf("pkg/render/cells.py"));
  });

  it("puts a file several of whose functions match a report before one with a single stronger match (file support)", async () => {
    await put({
      ...fillers(12),
      // one function that holds two of the report's words
      "pkg/render/single.py": pythonFunction("ledger_currency", "ledger_currency", 6),
      // three functions, each holding one of them
      "pkg/render/several.py": ["ledger", "currency", "rounding"]
        .map((word) => pythonFunction(`${word}_of`, word, 24))
        .join("\n\n"),
    });
    const report =
      "Wrong ledger total in the table\n\nThe ledger total is rendered with the wrong currency and rounding.\nExpected 10.00 EUR, got 9.999 USD instead.";
    // chunk BM25 alone, so that only how a file's chunks add up decides
    const legs = { weights: { file: 0, path: 0, vector: 0, exact: 0 }, importBoost: 0 };
    const supported = await rankedFiles(report, legs);
    const alone = await rankedFiles(report, { ...legs, fileSupport: 0 });
    expect(alone.indexOf("pkg/render/single.py")).toBeLessThan(alone.indexOf("pkg/render/several.py"));
    expect(supported.indexOf("pkg/render/several.py")).toBeLessThan(
      supported.indexOf("pkg/render/single.py"),
    );
  });
});

/** A Python function of `lines` statements that each use `word`. */
function pythonFunction(name: string, word: string, lines: number): string {
  const statements = Array.from(
    { length: lines },
    (_, i) => `    total += ${word}_step(${i}, "${name} ${i}")`,
  );
  return `def ${name}(value):\n    total = 0\n${statements.join("\n")}\n    return total\n`;
}

async function hitsFor(text: string, options: SearchOptions = {}) {
  await indexWorkspace(root, { config, env });
  const index = await openIndex(root, config, env);
  try {
    return await search(index, text, { limit: 10, ...options });
  } finally {
    index.close();
  }
}

describe("hit assembly", () => {
  it("collapses the pieces of one split function into one hit covering their lines", async () => {
    const big = pythonFunction("reconcile_ledger", "quasar", 120);
    const small = pythonFunction("quasar_summary", "quasar", 3);
    await put({ "ledger.py": `${big}\n\n${small}`, "notes.py": pythonFunction("other", "plain", 3) });
    const hits = await hitsFor("quasar");
    const pieces = hits.filter((hit) => hit.symbol === "reconcile_ledger");
    expect(pieces).toHaveLength(1);
    expect(pieces[0]).toMatchObject({ path: "ledger.py", startLine: 1 });
    // the whole function: the chunker split it into several pieces, the hit covers them all
    expect(pieces[0]?.endLine).toBe(big.trimEnd().split("\n").length);
    expect(hits.some((hit) => hit.symbol === "quasar_summary")).toBe(true);
  });

  it("gives one file at most two of the first five hits while other files match", async () => {
    const crowded = Array.from({ length: 6 }, (_, i) => pythonFunction(`nebula_${i}`, "nebula", 24)).join(
      "\n\n",
    );
    const others: Record<string, string> = {};
    for (const name of ["one", "two", "three", "four"]) {
      others[`${name}.py`] =
        `${pythonFunction(`${name}_other`, "plain", 24)}\n\ndef ${name}_uses():\n    return nebula_step(1)\n`;
    }
    await put({ "crowded.py": crowded, ...others });
    // Chunk BM25 alone ranks crowded.py's six functions above every other file's one use of the word
    // (the whole-file leg would lift the other files by itself).
    const lexical = { weights: { file: 0, path: 0, vector: 0 } };
    const hits = await hitsFor("nebula", lexical);
    expect(hits.slice(0, 2).map((hit) => hit.symbol)).toEqual(["nebula_0", "nebula_1"]);
    const top = hits.slice(0, 5).map((hit) => hit.path);
    expect(top.filter((path) => path === "crowded.py")).toHaveLength(2);
    expect(new Set(top).size).toBe(4);
    // the file's other hits follow, best first
    const rest = hits.slice(5).filter((hit) => hit.path === "crowded.py");
    expect(rest.map((hit) => hit.symbol)).toEqual(["nebula_2", "nebula_3", "nebula_4", "nebula_5"]);
  });

  it("lets one file fill the first five when nothing else matches", async () => {
    const crowded = Array.from({ length: 6 }, (_, i) => pythonFunction(`nebula_${i}`, "nebula", 24)).join(
      "\n\n",
    );
    await put({ "crowded.py": crowded, "other.py": pythonFunction("unrelated", "plain", 24) });
    // without the vector leg, which finds every file somewhat near, only crowded.py holds the word
    const hits = await hitsFor("nebula", { weights: { vector: 0 } });
    expect(hits.slice(0, 5).map((hit) => hit.path)).toEqual(Array(5).fill("crowded.py"));
  });
});

describe("an index warmed from the one it replaces", () => {
  it("answers exactly as a cold one after an edit, a new import and a new file", async () => {
    const table = (imported: string) =>
      `from .${imported} import cell_text\n\ndef render_table(rows, width):\n    """Render rows of values padded to the width."""\n    return [cell_text(value, width) for value in rows]\n`;
    await put({
      ...fillers(12),
      "pkg/render/table.py": table("cells"),
      "pkg/render/cells.py": "def cell_text(value, width):\n    return str(value).rjust(width)\n",
      "pkg/render/boxes.py": "def cell_text(value, width):\n    return str(value).center(width)\n",
    });
    const queries = [
      "render_table(rows, width) pads each value to the wrong width when rendered in the table",
      "escaping of the value",
      "pkg/render/escaping.py",
      "cell_text",
    ];
    const answers = async (index: Awaited<ReturnType<typeof openIndex>>) =>
      Promise.all(queries.map((query) => search(index, query, { limit: 10, importBoost: 0.5 })));
    await indexWorkspace(root, { config, env });
    let earlier = await openIndex(root, config, env);
    await answers(earlier); // what it derives (paths, imports read) is filled in
    const changes: Record<string, string>[] = [
      // contents only: the same paths, the table now imports the other module
      { "pkg/render/table.py": table("boxes") },
      // a new file: the path leg must know it
      { "pkg/render/escaping.py": "def escape(value):\n    return value.replace('_', '\\\\_')\n" },
    ];
    try {
      for (const change of changes) {
        await put(change);
        await indexWorkspace(root, { config, env });
        const warmed = await openIndex(root, config, env);
        warmSearch(warmed, earlier);
        earlier.close();
        earlier = warmed;
        const cold = await openIndex(root, config, env);
        try {
          expect(await answers(warmed)).toEqual(await answers(cold));
        } finally {
          cold.close();
        }
      }
      const [report, , path] = await answers(earlier);
      expect(path?.[0]?.path).toBe("pkg/render/escaping.py");
      expect(report?.some((hit) => hit.path === "pkg/render/boxes.py")).toBe(true);
    } finally {
      earlier.close();
    }
  });
});

describe("questions holding words that name members of Object.prototype", () => {
  it("answers them like any other question instead of throwing", async () => {
    await put({
      ...fillers(4),
      "billing/invoice.ts":
        "export class Invoice {\n  constructor(readonly total: number) {}\n  toString(): string {\n    return 'invoice ' + this.total;\n  }\n  valueOf(): number {\n    return this.total;\n  }\n}\n",
    });
    await indexWorkspace(root, { config, env });
    const index = await openIndex(root, config, env);
    try {
      for (const question of [
        "where is the constructor of the invoice called",
        "how does toString print the invoice",
        "what does valueOf of the invoice return and is hasOwnProperty used",
        "is __proto__ or isPrototypeOf or propertyIsEnumerable set on the invoice",
      ]) {
        const hits = await search(index, question, { limit: 10 });
        expect(hits.map((hit) => hit.path)).toContain("billing/invoice.ts");
      }
    } finally {
      index.close();
    }
  });
});
