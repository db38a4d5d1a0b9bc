import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CACHE_FILE_NAME,
  decodeVector,
  EmbeddingCache,
  encodeVector,
} from "../../../src/index/embed/cache.js";

const sqlitePath = createRequire(import.meta.url).resolve("better-sqlite3");

let dir: string;
const open: EmbeddingCache[] = [];

function cache(options: ConstructorParameters<typeof EmbeddingCache>[0] = {}): EmbeddingCache {
  const instance = new EmbeddingCache({ dir, ...options });
  open.push(instance);
  return instance;
}

function vector(seed: number, dims = 8): Float32Array {
  return Float32Array.from({ length: dims }, (_, i) => Math.sin(seed * 31 + i) * 10);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "umbra-cache-"));
});

afterEach(() => {
  for (const instance of open.splice(0)) instance.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a child node process with a script; resolves when it prints `marker`. */
function startChild(script: string, marker: string): Promise<ChildProcess> {
  const file = join(dir, `child-${Math.random().toString(36).slice(2)}.cjs`);
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], { stdio: ["pipe", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(marker)) resolve(child);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on("exit", (code) => reject(new Error(`child exited (${code}) before "${marker}": ${out} ${err}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on("exit", () => resolve());
  });
}

describe("vector encoding", () => {
  it("stores Float32 little-endian bytes and reads them back exactly", () => {
    const v = Float32Array.from([1.5, -2.25, 3.4028234663852886e38, 1e-45, 0]);
    const bytes = encodeVector(v);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect(bytes.byteLength).toBe(20);
    expect(view.getFloat32(4, true)).toBe(-2.25);
    expect(decodeVector(bytes, 5)).toEqual(v);
    expect(decodeVector(bytes, 4)).toBeUndefined();
    // An unaligned slice of a larger buffer still decodes.
    const padded = Buffer.concat([Buffer.from([7]), bytes]).subarray(1);
    expect(decodeVector(padded, 5)).toEqual(v);
  });
});

describe("EmbeddingCache", () => {
  it("round-trips vectors per embedder and counts them", () => {
    const c = cache();
    const entries = Array.from({ length: 1200 }, (_, i) => ({ hash: `h${i}`, vector: vector(i) }));
    c.putMany("model-a", entries);
    c.putMany("model-b", new Map([["h0", vector(99, 3)]]));

    const wanted = [...entries.map((e) => e.hash), "missing-1", "missing-2"];
    const got = c.getMany("model-a", wanted);
    expect(got.size).toBe(1200);
    for (const entry of entries) expect(got.get(entry.hash)).toEqual(entry.vector);
    expect(got.has("missing-1")).toBe(false);

    expect(c.getMany("model-b", ["h0", "h1"])).toEqual(new Map([["h0", vector(99, 3)]]));
    expect(c.getMany("model-c", ["h0"]).size).toBe(0);
    expect(c.count("model-a")).toBe(1200);
    expect(c.count("model-b")).toBe(1);
    expect(c.count("unknown")).toBe(0);
    expect(c.count()).toBe(1201);
    expect(c.path).toBe(join(dir, CACHE_FILE_NAME));
  });

  it("replaces an entry written again and survives reopening", () => {
    const c = cache();
    c.putMany("m", [{ hash: "x", vector: vector(1) }]);
    c.putMany("m", [{ hash: "x", vector: vector(2) }]);
    c.close();
    const again = cache();
    expect(again.getMany("m", ["x"]).get("x")).toEqual(vector(2));
    expect(again.count()).toBe(1);
  });

  it("uses WAL mode", () => {
    cache().putMany("m", [{ hash: "x", vector: vector(1) }]);
    const Database = createRequire(import.meta.url)("better-sqlite3") as new (
      path: string,
    ) => { pragma(s: string, o?: { simple: boolean }): unknown; close(): void };
    const raw = new Database(join(dir, CACHE_FILE_NAME));
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("finds its directory through the environment when no dir is given", () => {
    const c = new EmbeddingCache({ env: { UMBRA_HOME: dir } });
    open.push(c);
    expect(c.path).toBe(join(dir, "cache", "embeddings", CACHE_FILE_NAME));
  });

  it("is shared by two instances on the same directory", () => {
    const a = cache();
    const b = cache();
    a.putMany("m", [{ hash: "from-a", vector: vector(1) }]);
    expect(b.getMany("m", ["from-a"]).get("from-a")).toEqual(vector(1));
    b.putMany("m", [{ hash: "from-b", vector: vector(2) }]);
    for (let i = 0; i < 20; i++) {
      (i % 2 ? a : b).putMany("m", [{ hash: `n${i}`, vector: vector(i) }]);
    }
    expect(a.count("m")).toBe(22);
    expect(b.count("m")).toBe(22);
    expect(a.getMany("m", ["from-b"]).get("from-b")).toEqual(vector(2));
  });

  it("waits for another process's write transaction instead of failing", async () => {
    cache().close(); // create the schema
    const child = await startChild(
      `const Database = require(${JSON.stringify(sqlitePath)});
       const db = new Database(${JSON.stringify(join(dir, CACHE_FILE_NAME))});
       db.exec("BEGIN IMMEDIATE");
       db.prepare("INSERT OR IGNORE INTO embedders (name) VALUES ('m')").run();
       const id = db.prepare("SELECT id FROM embedders WHERE name = 'm'").get().id;
       db.prepare("INSERT INTO vectors (embedder, hash, dims, vector) VALUES (?, 'child', 2, ?)").run(id, Buffer.alloc(8));
       console.log("locked");
       require("node:fs").readSync(0, Buffer.alloc(1)); // until the parent is about to write
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
       db.exec("COMMIT");
       db.close();`,
      "locked",
    );
    const c = cache({ busyTimeoutMs: 30_000 });
    // The child holds the write lock until told to go on: a writer that does not wait fails here.
    const probe = new Database(join(dir, CACHE_FILE_NAME), { timeout: 0 });
    expect(() => probe.exec("BEGIN IMMEDIATE")).toThrow(/locked/);
    probe.close();
    child.stdin?.write("g");
    c.putMany("m", [{ hash: "parent", vector: vector(1) }]);
    await exited(child);
    expect(c.count("m")).toBe(2);
  });

  it("opens cleanly after a writer is killed with SIGKILL in the middle of a transaction", async () => {
    cache().close();
    const child = await startChild(
      `const Database = require(${JSON.stringify(sqlitePath)});
       const db = new Database(${JSON.stringify(join(dir, CACHE_FILE_NAME))});
       db.pragma("journal_mode = WAL");
       db.prepare("INSERT OR IGNORE INTO embedders (name) VALUES ('m')").run();
       const id = db.prepare("SELECT id FROM embedders WHERE name = 'm'").get().id;
       const insert = db.prepare("INSERT INTO vectors (embedder, hash, dims, vector) VALUES (?, ?, 2, ?)");
       const blob = Buffer.alloc(8); blob.writeFloatLE(1.5, 0); blob.writeFloatLE(-2, 4);
       db.transaction(() => { for (let i = 0; i < 10; i++) insert.run(id, "committed" + i, blob); })();
       db.exec("BEGIN IMMEDIATE");
       for (let i = 0; i < 5000; i++) insert.run(id, "uncommitted" + i, blob);
       console.log("inside");
       setInterval(() => {}, 1000);`,
      "inside",
    );
    child.kill("SIGKILL");
    await exited(child);
    expect(child.signalCode).toBe("SIGKILL");

    const warnings: string[] = [];
    const c = cache({ onWarning: (m) => warnings.push(m), integrityCheck: true });
    expect(warnings).toEqual([]);
    expect(c.count("m")).toBe(10);
    expect(c.getMany("m", ["committed3"]).get("committed3")).toEqual(Float32Array.from([1.5, -2]));
    expect(c.getMany("m", ["uncommitted0"]).size).toBe(0);
    c.putMany("m", [{ hash: "after", vector: vector(5) }]);
    expect(c.count("m")).toBe(11);
  });

  it("moves a file that is not a database aside and starts a new cache", () => {
    writeFileSync(join(dir, CACHE_FILE_NAME), "this is certainly not an SQLite database ".repeat(200));
    const warnings: string[] = [];
    const c = cache({ onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/corrupt-/);
    const aside = readdirSync(dir).filter((name) => name.startsWith(`${CACHE_FILE_NAME}.corrupt-`));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(dir, aside[0] as string), "utf8")).toMatch(/^this is certainly not/);
    c.putMany("m", [{ hash: "x", vector: vector(1) }]);
    expect(c.getMany("m", ["x"]).get("x")).toEqual(vector(1));
  });

  function damageAllButFirstPage(): number {
    const c = cache();
    c.putMany(
      "m",
      Array.from({ length: 400 }, (_, i) => ({ hash: `h${i}`, vector: vector(i, 64) })),
    );
    c.close();
    open.length = 0;
    const file = join(dir, CACHE_FILE_NAME);
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    const bytes = readFileSync(file);
    const pageSize = bytes.readUInt16BE(16) || 65536;
    expect(bytes.length).toBeGreaterThan(pageSize * 4);
    for (let i = pageSize; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff;
    writeFileSync(file, bytes);
    return bytes.length;
  }

  it("skips a cache found damaged while in use, and rebuilds it on the next open", () => {
    damageAllButFirstPage();
    const warnings: string[] = [];
    const unchecked = cache({ onWarning: (m) => warnings.push(m), integrityCheck: false });
    expect(unchecked.getMany("m", ["h1", "h2"]).size).toBe(0);
    expect(warnings.join("\n")).toMatch(/damaged/);
    expect(existsSync(join(dir, `${CACHE_FILE_NAME}.needs-check`))).toBe(true);
    // Writes are skipped rather than thrown while the file is known to be damaged.
    unchecked.putMany("m", [{ hash: "x", vector: vector(1) }]);
    unchecked.close();

    const warningsAfter: string[] = [];
    const reopened = cache({ onWarning: (m) => warningsAfter.push(m) });
    expect(warningsAfter.join("\n")).toMatch(/corrupt-/);
    expect(existsSync(join(dir, `${CACHE_FILE_NAME}.needs-check`))).toBe(false);
    reopened.putMany("m", [{ hash: "x", vector: vector(1) }]);
    expect(reopened.count()).toBe(1);
  });

  it("detects damaged pages inside a valid database file on open", () => {
    const size = damageAllButFirstPage();
    const warnings: string[] = [];
    const recovered = cache({ onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/corrupt-/);
    expect(recovered.count()).toBe(0);
    expect(readdirSync(dir).some((name) => name.startsWith(`${CACHE_FILE_NAME}.corrupt-`))).toBe(true);
    expect(statSync(join(dir, CACHE_FILE_NAME)).size).toBeLessThan(size);
  });
});
