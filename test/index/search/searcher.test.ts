import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { indexWorkspace } from "../../../src/index/indexer.js";
import { openIndex } from "../../../src/index/open.js";
import { type SearchOptions, search } from "../../../src/index/search/searcher.js";
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
});
