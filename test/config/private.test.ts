import { statSync } from "node:fs";
import { lstat, mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { privateFileSync, privateTree } from "../../src/config/private.js";
import { LexicalStore } from "../../src/index/store/lexical.js";
import { VectorStore } from "../../src/index/store/vectors.js";
import { keptBranch, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

// the CLI case indexes a workspace and mounts a branch: slow on a loaded machine
vi.setConfig({ testTimeout: 300_000 });

let home: string;

beforeEach(async () => {
  home = await tempDir("private-home");
});
afterEach(async () => {
  await cleanup(home);
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

/** Every folder and file below `dir` whose mode is not 0700 / 0600, as `MODE path`; `skip` is not entered. */
async function notPrivate(dir: string, skip: (path: string) => boolean = () => false): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (skip(path) || entry.isSymbolicLink()) continue;
    const mode = (await lstat(path)).mode & 0o777;
    const wanted = entry.isDirectory() ? 0o700 : 0o600;
    if (mode !== wanted) found.push(`${mode.toString(8)} ${relative(home, path)}`);
    if (entry.isDirectory()) found.push(...(await notPrivate(path, skip)));
  }
  return found;
}

describe("umbra's own state is private: folders 0700, files 0600", () => {
  it("privateFileSync creates a missing file 0600 in new 0700 folders and makes an older 0644 one 0600", async () => {
    const file = join(home, "a", "b", "store.db");
    privateFileSync(file);
    expect(await modeOf(file)).toBe(0o600);
    expect(await modeOf(join(home, "a"))).toBe(0o700);
    expect(await modeOf(join(home, "a", "b"))).toBe(0o700);
    const older = join(home, "older.db");
    await writeFile(older, "kept", { mode: 0o644 });
    privateFileSync(older);
    expect(await modeOf(older)).toBe(0o600);
    privateFileSync(older); // twice: nothing changes, nothing is truncated
    expect(await modeOf(older)).toBe(0o600);
    expect((await stat(older)).size).toBe(4);
  });

  it("privateTree makes a library's files below a folder private", async () => {
    const dir = join(home, "lib");
    await writeFile(join(home, "outside"), "", { mode: 0o644 });
    await mkdir(join(dir, "sub"), { recursive: true, mode: 0o755 });
    await writeFile(join(dir, "sub", "manifest"), "", { mode: 0o644 });
    await privateTree(dir);
    expect(await modeOf(join(dir, "sub"))).toBe(0o700);
    expect(await modeOf(join(dir, "sub", "manifest"))).toBe(0o600);
    expect(await modeOf(join(home, "outside"))).toBe(0o644);
    await expect(privateTree(join(home, "missing"))).resolves.toBeUndefined();
  });

  it("the lexical store's database, WAL and shared-memory files are 0600", () => {
    const file = join(home, "index", "lexical.sqlite");
    const store = LexicalStore.open(file);
    try {
      store.setMeta("k", "v");
      for (const name of ["lexical.sqlite", "lexical.sqlite-wal", "lexical.sqlite-shm"])
        expect(statSync(join(home, "index", name)).mode & 0o777, name).toBe(0o600);
    } finally {
      store.close();
    }
  });

  it("the vector store's LanceDB files and folders are private after a write", async () => {
    const dir = join(home, "vectors");
    const store = await VectorStore.open(dir, 4);
    try {
      const row = { id: 1, mpath: "m", startLine: 1, endLine: 2, language: "ts", symbol: "f", hash: "h" };
      await store.replace([], [{ ...row, vector: new Float32Array([1, 0, 0, 0]) }]);
      expect(await notPrivate(dir)).toEqual([]);
      await store.optimize();
      expect(await notPrivate(dir)).toEqual([]);
    } finally {
      store.close();
    }
  });

  it("index, search and a kept branch leave only private state; the branch's files keep the workspace's modes", async () => {
    requireBuiltCli();
    const root = await copyExamples();
    try {
      const env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
      const indexed = umbraSync(env, ["index", root]);
      expect(indexed.code, indexed.stderr).toBe(0);
      const searched = umbraSync(env, ["search", "invoice total", "--root", root]);
      expect(searched.code, searched.stderr).toBe(0);
      const made = keptBranch(env, root, "printf 'x\\n' > made.txt && chmod 644 made.txt");
      expect(made.code, made.stderr).toBe(0);
      // a branch's layers mirror the workspace: commands there see the user's modes
      const layer = (path: string) => /\/branches\/[^/]+\/(upper|work|tree)$/.test(path);
      expect(await notPrivate(join(home, "data"), layer)).toEqual([]);
      const [workspace] = await readdir(join(home, "data", "workspaces"));
      const branch = join(home, "data", "workspaces", workspace as string, "branches", made.id as string);
      const layers = await readdir(branch);
      const mirror = layers.includes("upper") ? "upper" : "tree";
      expect(await modeOf(join(branch, mirror, "made.txt"))).toBe(0o644);
    } finally {
      await cleanup(join(root, ".."));
    }
  });
});
