import { writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { type IndexReport, indexWorkspace } from "../../src/index/indexer.js";
import { watchWorkspace } from "../../src/index/watcher.js";
import { CountingEmbedder } from "../helpers/embedder.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

let home: string;
let root: string;
beforeEach(async () => {
  home = await tempDir("watch-home");
  root = await copyExamples();
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

describe("watchWorkspace", () => {
  it("syncs once at start, then batches a burst of edits into one incremental sync", async () => {
    const config = loadConfig({ env: {} });
    const env = { ...process.env, UMBRA_HOME: home };
    const embedder = new CountingEmbedder();
    const controller = new AbortController();
    const syncs: { reason: string; report: IndexReport }[] = [];
    const watching = watchWorkspace(root, {
      debounceMs: 200,
      intervalMs: 60_000,
      signal: controller.signal,
      sync: () => indexWorkspace(root, { config, env, embedder }),
      onSync: (report, reason) => {
        syncs.push({ reason, report });
        // The burst, written in one go: its events all wait for the watcher, however slow the machine.
        if (syncs.length === 1) {
          for (let i = 0; i < 5; i++) {
            writeFileSync(join(root, "billing", `note${i}.ts`), `export const note${i} = ${i};\n`);
          }
        }
      },
      onError: (error) => {
        throw error;
      },
    });
    try {
      await waitUntil(() => syncs.length > 1, "a sync after the burst");
    } finally {
      controller.abort();
      await watching;
    }
    expect(syncs[0]?.reason).toBe("start");
    expect(syncs[0]?.report.files).toBe(9);
    const later = syncs.slice(1);
    expect(later.map((s) => s.reason)).toEqual(["5 path(s) changed"]);
    expect(later[0]?.report.changes.added).toBe(5);
    expect(later[0]?.report.files).toBe(14);
  });

  it("finds changes no event reported through its periodic check", async () => {
    const config = loadConfig({ env: {} });
    const env = { ...process.env, UMBRA_HOME: home };
    const controller = new AbortController();
    const reasons: string[] = [];
    let changedBehindItsBack = false;
    let found: IndexReport | undefined;
    const watching = watchWorkspace(root, {
      debounceMs: 60_000,
      intervalMs: 300,
      signal: controller.signal,
      sync: async (reason) => {
        if (reason === "periodic check" && !changedBehindItsBack) {
          changedBehindItsBack = true;
          await writeFile(join(root, "docs", "extra.md"), "# Extra\n");
        }
        return indexWorkspace(root, { config, env, embedder: new CountingEmbedder() });
      },
      onSync: (report, reason) => {
        reasons.push(reason);
        if (report.changes.added === 1) found = report;
      },
    });
    try {
      await waitUntil(() => found !== undefined, "a periodic check that finds the new file");
    } finally {
      // A sync may be running: the folders are removed after the watcher has stopped, not under it.
      controller.abort();
      await watching;
    }
    expect(found?.files).toBe(10);
    expect(reasons).toContain("periodic check");
  });

  it("says when its events are live and reports each change as it comes, before the debounce", async () => {
    const controller = new AbortController();
    const live: boolean[] = [];
    const changes: string[] = [];
    const empty: IndexReport = await indexWorkspace(root, {
      config: loadConfig({ env: {} }),
      env: { ...process.env, UMBRA_HOME: home },
      embedder: new CountingEmbedder(),
    });
    const watching = watchWorkspace(root, {
      debounceMs: 60_000,
      intervalMs: 60_000,
      signal: controller.signal,
      sync: async () => empty,
      onChange: (path) => changes.push(path),
      onWatching: (state) => live.push(state),
    });
    try {
      await waitUntil(() => live.includes(true), "the watch set up");
      // a file of the workspace changed: reported long before the debounce ends
      writeFileSync(join(root, "billing", "late.ts"), "export const late = 1;\n");
      await waitUntil(() => changes.some((path) => path.endsWith("late.ts")), "the change reported");
    } finally {
      controller.abort();
      await watching;
    }
    expect(live).toEqual([true, false]);
  });
});
