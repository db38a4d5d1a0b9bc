import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CorruptStateError,
  computeDirHashes,
  diffFiles,
  fileHashes,
  indexableFiles,
  loadSnapshot,
  type Snapshot,
  saveSnapshot,
  sha256Hex,
  skippedForIndex,
  takeSnapshot,
} from "../../src/workspace/index.js";
import { cleanupTemp, fingerprint, isRoot, makeTemp, scan, writeTree } from "./helpers.js";

afterEach(cleanupTemp);

async function snap(root: string, previous?: Snapshot): Promise<{ snapshot: Snapshot; hashedFiles: number }> {
  return takeSnapshot(root, await scan(root), previous);
}

/** Moves a file's mtime to a fixed point so that a later edit is sure to change it. */
function setTime(path: string, seconds: number): void {
  utimesSync(path, seconds, seconds);
}

describe("takeSnapshot", () => {
  it("hashes every file the first time and none when nothing changed", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "src/b.ts": "b", "src/deep/c.ts": "c" });
    const first = await snap(root);
    expect(first.hashedFiles).toBe(3);
    expect(Object.keys(first.snapshot.files).sort()).toEqual(["a.ts", "src/b.ts", "src/deep/c.ts"]);
    expect(first.snapshot.files["a.ts"]).toMatchObject({ size: 1, hash: sha256Hex("a"), content: "text" });
    const second = await snap(root, first.snapshot);
    expect(second.hashedFiles).toBe(0);
    expect(second.snapshot.rootHash).toBe(first.snapshot.rootHash);
    expect(second.snapshot.files).toEqual(first.snapshot.files);
  });

  it("re-hashes only the edited file, and the root hash follows its content", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "src/b.ts": "b", "other/c.ts": "c" });
    setTime(join(root, "src/b.ts"), 1_000_000);
    const first = await snap(root);
    writeFileSync(join(root, "src/b.ts"), "changed");
    setTime(join(root, "src/b.ts"), 2_000_000);
    const second = await snap(root, first.snapshot);
    expect(second.hashedFiles).toBe(1);
    expect(second.snapshot.files["src/b.ts"]?.hash).toBe(sha256Hex("changed"));
    expect(second.snapshot.rootHash).not.toBe(first.snapshot.rootHash);
    expect(second.snapshot.dirs.src).not.toBe(first.snapshot.dirs.src);
    expect(second.snapshot.dirs.other).toBe(first.snapshot.dirs.other);
  });

  it("keeps the root hash when only mtimes change, and re-hashes those files", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "b.ts": "b" });
    const first = await snap(root);
    setTime(join(root, "a.ts"), 3_000_000);
    const second = await snap(root, first.snapshot);
    expect(second.hashedFiles).toBe(1);
    expect(second.snapshot.rootHash).toBe(first.snapshot.rootHash);
  });

  it("changes the root hash when a file is added, removed or renamed", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "b.ts": "b" });
    const base = (await snap(root)).snapshot;
    writeTree(root, { "c.ts": "c" });
    const added = (await snap(root, base)).snapshot;
    expect(added.rootHash).not.toBe(base.rootHash);
    rmSync(join(root, "c.ts"));
    expect((await snap(root, added)).snapshot.rootHash).toBe(base.rootHash);
    rmSync(join(root, "b.ts"));
    writeTree(root, { "renamed.ts": "b" });
    const renamed = (await snap(root, base)).snapshot;
    expect(renamed.rootHash).not.toBe(base.rootHash);
    expect(diffFiles(fileHashes(base), fileHashes(renamed)).renamed).toEqual([
      { from: "b.ts", to: "renamed.ts" },
    ]);
  });

  it("computes folder hashes from sorted children, independent of other folders", async () => {
    const one = makeTemp();
    const two = makeTemp();
    writeTree(one, { "x/a.ts": "1", "x/b.ts": "2", "y/c.ts": "3" });
    writeTree(two, { "x/b.ts": "2", "x/a.ts": "1", "y/c.ts": "other" });
    const s1 = (await snap(one)).snapshot;
    const s2 = (await snap(two)).snapshot;
    expect(Object.keys(s1.dirs)).toEqual(["", "x", "y"]);
    expect(s1.dirs.x).toBe(s2.dirs.x);
    expect(s1.dirs.y).not.toBe(s2.dirs.y);
    expect(s1.rootHash).toBe(s1.dirs[""]);
    expect(s1.rootHash).not.toBe(s2.rootHash);
    const expectedX = sha256Hex(`f a.ts\0${sha256Hex("1")}\nf b.ts\0${sha256Hex("2")}\n`);
    expect(s1.dirs.x).toBe(expectedX);
  });

  it("does not confuse a file with a folder of the same name and content", () => {
    const asFile = computeDirHashes(new Map([["a", sha256Hex("x")]]));
    const asDir = computeDirHashes(new Map([["a/b", sha256Hex("x")]]));
    expect(asFile[""]).not.toBe(asDir[""]);
    expect(computeDirHashes(new Map())[""]).toBe(sha256Hex(""));
  });

  it("classifies binary and invalid UTF-8 files and keeps them out of the indexable list", async () => {
    const root = makeTemp();
    writeTree(root, {
      "text.ts": "export const x = 1;\n",
      "nul.dat": Buffer.from([1, 2, 0, 3]),
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      "logo.png": "not really a png",
    });
    const { snapshot } = await snap(root);
    expect(snapshot.files["nul.dat"]?.content).toBe("binary");
    expect(snapshot.files["logo.png"]?.content).toBe("binary");
    expect(snapshot.files["latin1.txt"]?.content).toBe("invalid-utf8");
    expect(snapshot.files["text.ts"]?.content).toBe("text");
    expect(indexableFiles(snapshot)).toEqual(["text.ts"]);
    expect(skippedForIndex(snapshot)).toEqual([
      { path: "latin1.txt", reason: "invalid-utf8" },
      { path: "logo.png", reason: "binary" },
      { path: "nul.dat", reason: "binary" },
    ]);
  });

  it("includes the scan's skips in skippedForIndex", async () => {
    const root = makeTemp();
    writeTree(root, { ".gitignore": "*.log\n", "a.log": "x", "b.bin": Buffer.from([0]) });
    const { snapshot } = await snap(root);
    expect(skippedForIndex(snapshot).map((s) => [s.path, s.reason])).toEqual([
      ["a.log", "ignored"],
      ["b.bin", "binary"],
    ]);
  });

  it("moves a file that vanished after the scan to skipped, without failing", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "gone.ts": "b" });
    const result = await scan(root);
    rmSync(join(root, "gone.ts"));
    const { snapshot, hashedFiles } = await takeSnapshot(root, result, undefined);
    expect(hashedFiles).toBe(1);
    expect(Object.keys(snapshot.files)).toEqual(["a.ts"]);
    expect(snapshot.skipped).toEqual([
      { path: "gone.ts", reason: "unreadable", detail: "vanished before hashing" },
    ]);
  });

  it.skipIf(isRoot)("moves a file that became unreadable after the scan to skipped", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "locked.ts": "b" });
    const result = await scan(root);
    chmodSync(join(root, "locked.ts"), 0o000);
    try {
      const { snapshot } = await takeSnapshot(root, result, undefined);
      expect(snapshot.skipped[0]).toMatchObject({ path: "locked.ts", reason: "unreadable" });
    } finally {
      chmodSync(join(root, "locked.ts"), 0o644);
    }
  });

  it("reports progress for every file", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a", "b.ts": "b", "c.ts": "c" });
    const calls: [number, number][] = [];
    await takeSnapshot(root, await scan(root), undefined, {
      onProgress: (done, total) => calls.push([done, total]),
    });
    expect(calls).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it("stops when its signal is aborted", async () => {
    const root = makeTemp();
    writeTree(root, { "a.ts": "a" });
    const controller = new AbortController();
    const result = await scan(root);
    controller.abort();
    await expect(takeSnapshot(root, result, undefined, { signal: controller.signal })).rejects.toThrow();
  });

  it("writes nothing inside the folder while scanning and snapshotting", async () => {
    const root = makeTemp();
    const state = makeTemp();
    writeTree(root, { ".gitignore": "*.log\n", "a.ts": "a", "x.log": "l", "d/b.bin": Buffer.from([0, 1]) });
    const before = fingerprint(root);
    const first = await snap(root);
    await saveSnapshot(join(state, "merkle.json"), first.snapshot);
    await snap(root, first.snapshot);
    expect(fingerprint(root)).toEqual(before);
  });
});

describe("loadSnapshot / saveSnapshot", () => {
  it("round-trips a snapshot and treats a missing file as no snapshot", async () => {
    const root = makeTemp();
    const state = makeTemp();
    writeTree(root, { "a.ts": "a", "d/b.ts": "b" });
    writeFileSync(join(root, "__proto__"), "a file name that must not touch prototypes");
    const { snapshot } = await snap(root);
    const file = join(state, "ws", "merkle.json");
    expect(await loadSnapshot(file)).toBeUndefined();
    await saveSnapshot(file, snapshot);
    const loaded = await loadSnapshot(file);
    expect(loaded).toEqual(snapshot);
    expect(Object.keys(snapshot.files).sort()).toEqual(["__proto__", "a.ts", "d/b.ts"]);
    expect(Object.keys(loaded?.files ?? {}).sort()).toEqual(["__proto__", "a.ts", "d/b.ts"]);
    // the loaded snapshot works as `previous`
    expect((await snap(root, loaded)).hashedFiles).toBe(0);
  });

  it("throws CorruptStateError for corrupt JSON, a wrong version or a broken shape", async () => {
    const state = makeTemp();
    const cases: [string, string][] = [
      ["truncated", '{"version":1,"rootHash":"ab'],
      ["empty", ""],
      [
        "wrong version",
        JSON.stringify({ version: 2, rootHash: "", files: {}, dirs: {}, skipped: [], scannedAt: "" }),
      ],
      [
        "bad entry",
        JSON.stringify({
          version: 1,
          rootHash: "x",
          files: { a: { size: "1" } },
          dirs: {},
          skipped: [],
          scannedAt: "",
        }),
      ],
      ["array", "[]"],
    ];
    for (const [name, text] of cases) {
      const file = join(state, `${name}.json`);
      writeFileSync(file, text);
      const error = await loadSnapshot(file).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(CorruptStateError);
      expect((error as CorruptStateError).file).toBe(file);
    }
  });

  it("rejects a snapshot whose root hash does not match its folders", async () => {
    const root = makeTemp();
    const state = makeTemp();
    writeTree(root, { "a.ts": "a" });
    const { snapshot } = await snap(root);
    const file = join(state, "merkle.json");
    writeFileSync(file, JSON.stringify({ ...snapshot, rootHash: "0".repeat(64) }));
    await expect(loadSnapshot(file)).rejects.toBeInstanceOf(CorruptStateError);
  });

  it("saves atomically: no temporary file is left, and a failed save keeps the old file", async () => {
    const root = makeTemp();
    const state = makeTemp();
    writeTree(root, { "a.ts": "a" });
    const { snapshot } = await snap(root);
    const file = join(state, "merkle.json");
    await saveSnapshot(file, snapshot);
    const saved = readFileSync(file, "utf8");
    expect(readdirSync(state)).toEqual(["merkle.json"]);

    // a snapshot that cannot be serialised fails before anything is written
    const broken = { ...snapshot, scannedAt: 1n } as unknown as Snapshot;
    await expect(saveSnapshot(file, broken)).rejects.toThrow();
    expect(readFileSync(file, "utf8")).toBe(saved);
    expect(readdirSync(state)).toEqual(["merkle.json"]);

    // a failure at the rename (the target is a non-empty folder) removes the temporary file
    const blocked = join(state, "blocked.json");
    mkdirSync(blocked);
    writeFileSync(join(blocked, "x"), "x");
    await expect(saveSnapshot(blocked, snapshot)).rejects.toThrow();
    expect(readdirSync(state).sort()).toEqual(["blocked.json", "merkle.json"]);
    expect(existsSync(join(blocked, "x"))).toBe(true);
    expect(await loadSnapshot(file)).toEqual(snapshot);
  });
});
