import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  lstatIn,
  readdirIn,
  readIfRegular,
  readIn,
  readlinkIn,
  removeIn,
  renameIn,
  replaceIn,
  rmdirIfEmptyIn,
  unlinkIn,
  writeIn,
} from "../../src/workspace/rooted.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await tempDir("rooted");
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(join(root, "dir"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret"), "secret\n");
  writeFileSync(join(root, "dir", "file.txt"), "inside\n", { mode: 0o755 });
  symlinkSync(outside, join(root, "out"));
  symlinkSync("dir", join(root, "in"));
});
afterEach(() => cleanup(base));

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: { code?: string }) => error.code,
  );

describe("rooted file access (no symlink followed, only regular files opened)", () => {
  it("reads, lists and stats below the root", async () => {
    expect((await readIn(root, "dir/file.txt")).data.toString()).toBe("inside\n");
    expect((await readdirIn(root, "")).map((entry) => entry.name).sort()).toEqual(["dir", "in", "out"]);
    expect((await lstatIn(root, "out"))?.isSymbolicLink()).toBe(true);
    expect(await lstatIn(root, "dir/none")).toBeUndefined();
    expect(await readlinkIn(root, "in")).toBe("dir");
    expect((await readIfRegular(root, "./dir//file.txt"))?.toString()).toBe("inside\n");
  });

  it("refuses symlinks on the way and at the end, also ones pointing inside", async () => {
    expect(await code(readIn(root, "out/secret"))).toBe("SYMLINK");
    expect(await code(readIn(root, "in/file.txt"))).toBe("SYMLINK");
    expect(await code(readdirIn(root, "out"))).toBe("SYMLINK");
    expect(await code(writeIn(root, "out/secret", Buffer.from("pwned")))).toBe("SYMLINK");
    expect(await code(writeIn(root, "out/new", Buffer.from("pwned")))).toBe("SYMLINK");
    expect(await code(renameIn(root, "dir/file.txt", "out/moved"))).toBe("SYMLINK");
    expect(await readIfRegular(root, "out/secret")).toBeUndefined();
    expect(await code(readIn(root, "../outside/secret"))).toBe("INVALID_PATH");
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("secret\n");
    expect(existsSync(join(outside, "new"))).toBe(false);
  });

  it("never opens FIFOs or devices", async () => {
    execFileSync("mkfifo", [join(root, "pipe.ts")]);
    expect(await code(readIn(root, "pipe.ts"))).toBe("NOT_REGULAR");
  });

  it("writes by replacing: a final symlink or folder is removed, hard links keep their content, modes stay", async () => {
    await writeIn(root, "out", Buffer.from("now a file\n"));
    expect((await lstatIn(root, "out"))?.isFile()).toBe(true);
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("secret\n");
    linkSync(join(root, "dir", "file.txt"), join(base, "hardlink"));
    await writeIn(root, "dir/file.txt", Buffer.from("edited\n"));
    expect(readFileSync(join(base, "hardlink"), "utf8")).toBe("inside\n");
    expect(statSync(join(root, "dir", "file.txt")).mode & 0o777).toBe(0o755);
    await writeIn(root, "new/deep/file", Buffer.from("x"));
    expect(readFileSync(join(root, "new", "deep", "file"), "utf8")).toBe("x");
    expect((await readdirIn(root, "dir")).map((entry) => entry.name)).toEqual(["file.txt"]);
  });

  it("removes a folder without following the links inside it, and renames inside the root", async () => {
    symlinkSync(outside, join(root, "dir", "link"));
    await renameIn(root, "dir/file.txt", "moved/file.txt");
    expect(readFileSync(join(root, "moved", "file.txt"), "utf8")).toBe("inside\n");
    await removeIn(root, "dir");
    expect(existsSync(join(root, "dir"))).toBe(false);
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("secret\n");
    await removeIn(root, "out");
    expect(existsSync(join(outside, "secret"))).toBe(true);
  });

  it("replaces atomically under a temporary name: a final link is replaced, never followed; folders never", async () => {
    const steps: string[] = [];
    const options = { tmpName: ".tmp-1", sync: true, onStep: (step: string) => steps.push(step) };
    await replaceIn(root, "out", { kind: "file", data: Buffer.from("file\n"), mode: 0o600 }, options);
    expect(readFileSync(join(root, "out"), "utf8")).toBe("file\n");
    expect(statSync(join(root, "out")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("secret\n");
    expect(steps).toEqual(["write", "sync", "rename", "sync"]);
    await replaceIn(root, "new/l", { kind: "link", target: "../dir" }, options);
    expect((await lstatIn(root, "new/l"))?.isSymbolicLink()).toBe(true);
    expect(await code(replaceIn(root, "dir", { kind: "absent" }, options))).toBe("NOT_REGULAR");
    expect(await code(replaceIn(root, "out/x", { kind: "absent" }, options))).toBe("NOT_DIR");
    expect(await code(replaceIn(root, "in/file.txt", { kind: "absent" }, options))).toBe("SYMLINK");
    // the check right before the swap stops it, and the temporary is gone
    const refuse = { ...options, expect: async () => Promise.reject(new Error("changed")) };
    await expect(replaceIn(root, "dir/file.txt", { kind: "absent" }, refuse)).rejects.toThrow("changed");
    expect(readFileSync(join(root, "dir", "file.txt"), "utf8")).toBe("inside\n");
    writeFileSync(join(root, "dir", ".tmp-1"), "leftover");
    await replaceIn(root, "dir/file.txt", { kind: "absent" }, options);
    expect(existsSync(join(root, "dir", "file.txt"))).toBe(false);
    expect(existsSync(join(root, "dir", ".tmp-1"))).toBe(false);
    await unlinkIn(root, "new/l");
    await rmdirIfEmptyIn(root, "new");
    await rmdirIfEmptyIn(root, "dir");
    expect(existsSync(join(root, "new"))).toBe(false);
    expect(existsSync(join(root, "dir"))).toBe(false);
  });
});
