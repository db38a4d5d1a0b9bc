import { cp, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { workspaceDir } from "../../src/config/paths.js";
import { CHUNKER_VERSION } from "../../src/index/chunk/index.js";
import { indexWorkspace } from "../../src/index/indexer.js";
import { indexLayout } from "../../src/index/layout.js";
import { acquireLock, LockBusyError } from "../../src/index/lock.js";
import { openIndex } from "../../src/index/open.js";
import { search } from "../../src/index/search/searcher.js";
import { WorkspaceError } from "../../src/workspace/index.js";
import { CountingEmbedder } from "../helpers/embedder.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
const config = loadConfig({ env: {} });

beforeEach(async () => {
  home = await tempDir("home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: home };
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

async function searchPaths(text: string, options: { embedder?: CountingEmbedder } = {}) {
  const index = await openIndex(root, config, env);
  try {
    if (options.embedder) index.embedder = options.embedder;
    return await search(index, text, { limit: 5 });
  } finally {
    index.close();
  }
}

describe("indexWorkspace", () => {
  it("indexes the examples with the default code model and never writes into the folder", async () => {
    const before = await fingerprint(root);
    const report = await indexWorkspace(root, { config, env });
    expect(report.files).toBe(9);
    expect(report.chunks).toBeGreaterThanOrEqual(report.files);
    expect(report.embedderId).toMatch(/^umbra-code-ppmi-svd-/);
    expect(report.embedded).toBeGreaterThan(0);
    expect(report.changes.added).toBe(9);
    expect(report.skippedByReason.ignored ?? 0).toBe(0);
    expect(await fingerprint(root)).toBe(before);

    const hits = await searchPaths("invoice total with tax and discount");
    expect(hits[0]?.path).toBe("billing/invoice.ts");
    expect(hits[0]?.stale).toBe(false);
  });

  it("indexes files named like members of Object.prototype (__proto__, constructor) like any other", async () => {
    await writeFile(join(root, "__proto__"), "the quokka ledger balances itself\n");
    await writeFile(join(root, "constructor"), "the wombat ledger balances itself\n");
    const report = await indexWorkspace(root, { config, env });
    expect(report.files).toBe(11);
    expect(report.changes.added).toBe(11);
    expect((await searchPaths("quokka")).map((hit) => hit.path)).toContain("__proto__");
    expect((await searchPaths("wombat")).map((hit) => hit.path)).toContain("constructor");
    // the next run finds nothing changed
    expect((await indexWorkspace(root, { config, env })).embedded).toBe(0);
  });

  it("only stats files on a no-change run and embeds nothing", async () => {
    const embedder = new CountingEmbedder();
    await indexWorkspace(root, { config, env, embedder });
    const first = embedder.texts;
    const again = await indexWorkspace(root, { config, env, embedder });
    expect(again.hashedFiles).toBe(0);
    expect(again.embedded).toBe(0);
    expect(embedder.texts).toBe(first);
    expect(again.changes).toEqual({ added: 0, modified: 0, removed: 0, renamed: 0 });
  });

  it("re-embeds only the chunks an edit changed, and finds the new content", async () => {
    const embedder = new CountingEmbedder();
    await indexWorkspace(root, { config, env, embedder });
    const before = embedder.texts;
    const file = join(root, "billing", "tax.ts");
    await writeFile(
      file,
      `${await readFile(file, "utf8")}\nexport function zanzibarSurcharge(cents: number): number {\n  return cents * 2;\n}\n`,
    );
    const report = await indexWorkspace(root, { config, env, embedder });
    expect(report.changes.modified).toBe(1);
    expect(report.hashedFiles).toBe(1);
    expect(embedder.texts - before).toBeGreaterThan(0);
    expect(embedder.texts - before).toBeLessThanOrEqual(2);
    const hits = await searchPaths("zanzibarSurcharge", { embedder });
    expect(hits[0]?.path).toBe("billing/tax.ts");
  });

  it("reuses cached embeddings in a second clone and after a rename", async () => {
    const embedder = new CountingEmbedder();
    await indexWorkspace(root, { config, env, embedder });
    const firstRun = embedder.texts;
    const clone = join(root, "..", "clone");
    await cp(root, clone, { recursive: true });
    const second = await indexWorkspace(clone, { config, env, embedder });
    expect(second.files).toBe(9);
    expect(second.embedded).toBe(0);
    expect(embedder.texts).toBe(firstRun);

    await rename(join(root, "billing", "money.ts"), join(root, "billing", "amounts.ts"));
    const renamed = await indexWorkspace(root, { config, env, embedder });
    expect(renamed.changes.renamed).toBe(1);
    expect(renamed.embedded).toBe(0);
    const hits = await searchPaths("parseMoney", { embedder });
    expect(hits[0]?.path).toBe("billing/amounts.ts");
  });

  it("shares the default code model's cache with an identical clone", async () => {
    const first = await indexWorkspace(root, { config, env });
    const clone = join(root, "..", "clone");
    await cp(root, clone, { recursive: true });
    const second = await indexWorkspace(clone, { config, env });
    expect(second.embedderId).toBe(first.embedderId);
    expect(second.embedded).toBe(0);
    expect(second.cachedEmbeddings).toBe(first.embedded);
  });

  it("removes deleted files and flags hits whose file changed since indexing as stale", async () => {
    await indexWorkspace(root, { config, env });
    await rm(join(root, "server"), { recursive: true });
    const report = await indexWorkspace(root, { config, env });
    expect(report.changes.removed).toBe(1);
    expect((await searchPaths("handleHealth healthResponse")).map((h) => h.path)).not.toContain(
      "server/main.go",
    );

    await writeFile(join(root, "inventory", "stock.py"), "# rewritten\n");
    const hits = await searchPaths("reserve OutOfStock available");
    const stale = hits.find((hit) => hit.path === "inventory/stock.py");
    expect(stale?.stale).toBe(true);
    expect(hits.find((hit) => hit.path === "billing/tax.ts")?.stale ?? false).toBe(false);
  });

  it("stores only masked paths and no code in the vector store", async () => {
    await indexWorkspace(root, { config, env });
    const layout = indexLayout(workspaceDir(root, env));
    const db = await lancedb.connect(layout.vectors);
    const table = await db.openTable("chunks");
    const rows = (await table.query().toArray()) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(0);
    const dump = JSON.stringify(rows.map(({ vector: _vector, ...rest }) => rest));
    for (const secret of [
      "billing",
      "invoice",
      "inventory",
      "stock",
      "README",
      "InvoiceCalculator(",
      "return ",
    ]) {
      expect(dump).not.toContain(secret);
    }
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual([
      "endLine",
      "hash",
      "id",
      "language",
      "mpath",
      "startLine",
      "symbol",
      "vector",
    ]);
    db.close();
  });

  it("reports what an ignore file hid instead of silently indexing nothing", async () => {
    await writeFile(join(root, ".umbraignore"), "*\n");
    const report = await indexWorkspace(root, { config, env });
    expect(report.files).toBe(0);
    expect(report.skippedByReason.ignored).toBeGreaterThan(0);
    expect(report.skipped.some((s) => s.detail?.includes(".umbraignore"))).toBe(true);
  });

  it("rejects a missing root and a root that is a file", async () => {
    await expect(indexWorkspace(join(root, "nope"), { config, env })).rejects.toThrow(WorkspaceError);
    await expect(indexWorkspace(join(root, "README.md"), { config, env })).rejects.toThrow(/not a folder/);
  });

  it("rebuilds a corrupt index with a message", async () => {
    await indexWorkspace(root, { config, env });
    const layout = indexLayout(workspaceDir(root, env));
    await writeFile(layout.lexical, "this is not a database".repeat(100));
    await rm(`${layout.lexical}-wal`, { force: true });
    await rm(`${layout.lexical}-shm`, { force: true });
    await writeFile(layout.merkle, "{ broken");
    const warnings: string[] = [];
    const report = await indexWorkspace(root, { config, env, onWarning: (m) => warnings.push(m) });
    expect(warnings.join("\n")).toMatch(/corrupt/);
    expect(report.rebuilt).toBeDefined();
    expect(report.files).toBe(9);
    expect((await searchPaths("parseMoney"))[0]?.path).toBe("billing/money.ts");
  });

  it("rebuilds an index made by another version of umbra", async () => {
    await indexWorkspace(root, { config, env });
    const db = new Database(indexLayout(workspaceDir(root, env)).lexical);
    db.prepare("UPDATE meta SET value = '0' WHERE key = 'schema'").run();
    db.close();
    const warnings: string[] = [];
    const report = await indexWorkspace(root, { config, env, onWarning: (m) => warnings.push(m) });
    expect(warnings.join("\n")).toMatch(/another version of umbra/);
    expect(report.files).toBe(9);
    expect((await searchPaths("parseMoney"))[0]?.path).toBe("billing/money.ts");
  });

  it("re-chunks every file of an index made by an older chunker, embedding only what came out new", async () => {
    const embedder = new CountingEmbedder();
    const first = await indexWorkspace(root, { config, env, embedder });
    const db = new Database(indexLayout(workspaceDir(root, env)).lexical);
    const identity = db.prepare("SELECT value FROM meta WHERE key = 'identity'").get() as { value: string };
    expect(identity.value).toContain(`chunker ${CHUNKER_VERSION}`);
    // what an index written before the chunker had a version records
    db.prepare("UPDATE meta SET value = ? WHERE key = 'identity'").run(
      identity.value.replace(/\|chunker \d+$/, ""),
    );
    db.close();
    const warnings: string[] = [];
    const report = await indexWorkspace(root, { config, env, embedder, onWarning: (m) => warnings.push(m) });
    expect(warnings.join("\n")).toMatch(/chunker changed; re-indexing every file/);
    expect(report.changes.added).toBe(9);
    expect(report.chunks).toBe(first.chunks);
    // the machine-wide cache by chunk hash still serves every chunk
    expect(report.embedded).toBe(0);
    expect(report.cachedEmbeddings).toBe(first.embedded);
    expect((await searchPaths("parseMoney", { embedder }))[0]?.path).toBe("billing/money.ts");
  });

  it("serialises two runs on one workspace: the second waits, or says why", async () => {
    const lock = indexLayout(workspaceDir(root, env)).lock;
    const held = await acquireLock(lock);
    const warnings: string[] = [];
    const waiting = indexWorkspace(root, { config, env, onWarning: (m) => warnings.push(m) });
    await waitUntil(
      () => warnings.some((w) => w.includes("waiting for another umbra run")),
      "the second run to say it waits",
    );
    held();
    expect((await waiting).files).toBe(9);

    const release = await acquireLock(indexLayout(workspaceDir(root, env)).lock);
    try {
      await expect(indexWorkspace(root, { config, env, lockWaitMs: 0 })).rejects.toThrow(LockBusyError);
      await expect(indexWorkspace(root, { config, env, lockWaitMs: 0 })).rejects.toThrow(/pid \d+/);
    } finally {
      release();
    }
    expect((await indexWorkspace(root, { config, env, lockWaitMs: 0 })).files).toBe(9);
  });

  it("stops at an abort and resumes without redoing finished batches", async () => {
    for (let i = 0; i < 30; i++) {
      await mkdir(join(root, "gen"), { recursive: true });
      await writeFile(join(root, "gen", `module${i}.py`), `def generated_${i}(x):\n    return x * ${i}\n`);
    }
    const embedder = new CountingEmbedder();
    const controller = new AbortController();
    let batches = 0;
    await expect(
      indexWorkspace(root, {
        config: { ...config, index: { ...config.index, filesPerBatch: 5 } },
        env,
        embedder,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === "write" && ++batches === 2) controller.abort();
        },
      }),
    ).rejects.toThrow(/interrupted/);
    const firstRun = embedder.texts;
    expect(firstRun).toBeGreaterThan(0);
    const resumed = await indexWorkspace(root, { config, env, embedder });
    expect(resumed.files).toBe(39);
    expect(resumed.changes.added).toBe(39 - 10);
    const fresh = new CountingEmbedder("fresh");
    const home2 = await tempDir("home2");
    try {
      const full = await indexWorkspace(root, {
        config,
        env: { ...env, UMBRA_HOME: home2 },
        embedder: fresh,
      });
      expect(embedder.texts).toBe(fresh.texts);
      expect(resumed.chunks).toBe(full.chunks);
    } finally {
      await cleanup(home2);
    }
  });
});
