import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_EXCLUDED_DIRS, scanWorkspace, WorkspaceError } from "../../src/workspace/index.js";
import { cleanupTemp, fingerprint, isRoot, makeTemp, paths, scan, skipOf, writeTree } from "./helpers.js";

afterEach(cleanupTemp);

describe("scanWorkspace: ignore files", () => {
  it("applies nested .gitignore files relative to their own folder", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "*.tmp\n",
      "a.tmp": "x",
      "a.ts": "x",
      "sub/.gitignore": "local.txt\n/anchored.txt\n",
      "sub/local.txt": "x",
      "sub/deeper/local.txt": "x",
      "sub/anchored.txt": "x",
      "sub/deeper/anchored.txt": "x",
      "local.txt": "x",
      "sub/b.tmp": "x",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual([
      ".gitignore",
      "a.ts",
      "local.txt",
      "sub/.gitignore",
      "sub/deeper/anchored.txt",
    ]);
    expect(skipOf(result, "sub/local.txt")).toEqual({ reason: "ignored", detail: "sub/.gitignore" });
    expect(skipOf(result, "sub/deeper/local.txt")).toEqual({ reason: "ignored", detail: "sub/.gitignore" });
    expect(skipOf(result, "sub/anchored.txt")).toEqual({ reason: "ignored", detail: "sub/.gitignore" });
    expect(skipOf(result, "sub/b.tmp")).toEqual({ reason: "ignored", detail: ".gitignore" });
  });

  it("honours negation: *.log with !keep.log", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "*.log\n!keep.log\n",
      "a.log": "x",
      "keep.log": "x",
      "d/keep.log": "x",
      "d/b.log": "x",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual([".gitignore", "d/keep.log", "keep.log"]);
    expect(skipOf(result, "a.log")?.reason).toBe("ignored");
    expect(skipOf(result, "d/b.log")?.reason).toBe("ignored");
  });

  it("lets a deeper .gitignore override a shallower one", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "*.gen\ngenerated/\n",
      "pkg/.gitignore": "!keep.gen\n!generated/\n",
      "pkg/keep.gen": "x",
      "pkg/other.gen": "x",
      "pkg/generated/a.ts": "x",
      "generated/b.ts": "x",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual([".gitignore", "pkg/.gitignore", "pkg/generated/a.ts", "pkg/keep.gen"]);
    expect(skipOf(result, "generated")?.reason).toBe("ignored");
  });

  it("distinguishes anchored /build from unanchored build", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "/gen\nlib\n",
      "gen/a.ts": "x",
      "src/gen/b.ts": "x",
      "lib/c.ts": "x",
      "src/lib/d.ts": "x",
    });
    // "build" is a default excluded folder, so the same rules are exercised with other names.
    const result = await scan(root);
    expect(paths(result)).toEqual([".gitignore", "src/gen/b.ts"]);
    expect(result.skipped.filter((s) => s.reason === "ignored").map((s) => s.path)).toEqual([
      "gen",
      "lib",
      "src/lib",
    ]);
  });

  it("anchors /build and build the same way when default exclusions are off", async () => {
    const root = makeTemp();
    writeTree(root, { ".gitignore": "/build\n", "build/a.ts": "x", "src/build/b.ts": "x" });
    const result = await scan(root, { excludeDirs: [] });
    expect(paths(result)).toEqual([".gitignore", "src/build/b.ts"]);
    expect(skipOf(result, "build")).toEqual({ reason: "ignored", detail: ".gitignore" });
  });

  it("applies directory-only patterns (logs/) to folders, not files", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "logs/\n",
      "logs/a.txt": "x",
      "src/logs/b.txt": "x",
      "other/logs": "a file",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual([".gitignore", "other/logs"]);
    expect(skipOf(result, "logs")?.reason).toBe("ignored");
    expect(skipOf(result, "src/logs")?.reason).toBe("ignored");
  });

  it("cannot re-include a file inside an excluded folder, and reports the folder once", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "secret/\n!secret/keep.txt\n",
      "secret/keep.txt": "x",
      "secret/other.txt": "x",
      "secret/deep/x.txt": "x",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual([".gitignore"]);
    expect(result.skipped).toEqual([{ path: "secret", reason: "ignored", detail: ".gitignore", dir: true }]);
  });

  it("reads .git/info/exclude", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".git/info/exclude": "*.private\n",
      ".git/HEAD": "ref: refs/heads/main\n",
      "a.private": "x",
      "a.ts": "x",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual(["a.ts"]);
    expect(skipOf(result, "a.private")).toEqual({ reason: "ignored", detail: ".git/info/exclude" });
    expect(skipOf(result, ".git")?.reason).toBe("excluded-dir");
  });

  it("reads the info/exclude of a worktree's git directory through a .git file", async () => {
    const root = makeTemp();
    const gitDir = makeTemp();
    writeTree(gitDir, { "info/exclude": "*.wt\n" });
    writeTree(root, { ".git": `gitdir: ${gitDir}\n`, "a.wt": "x", "a.ts": "x" });
    const result = await scan(root);
    expect(paths(result)).toEqual(["a.ts"]);
    expect(skipOf(result, "a.wt")?.detail).toBe(".git/info/exclude");
  });

  it("applies the global excludes file it is given", async () => {
    const root = makeTemp();
    const home = makeTemp();
    writeTree(home, { ignore: ".DS_Store\n*.swp\n" });
    writeTree(root, { ".DS_Store": "x", "a.swp": "x", "a.ts": "x" });
    const result = await scan(root, { globalExcludesFile: join(home, "ignore") });
    expect(paths(result)).toEqual(["a.ts"]);
    expect(skipOf(result, "a.swp")).toEqual({ reason: "ignored", detail: join(home, "ignore") });
  });

  it("still returns a result when .umbraignore excludes everything, and says why", async () => {
    const root = makeTemp();
    writeTree(root, { ".umbraignore": "*\n", "a.ts": "x", "src/b.ts": "x", "src/c/d.ts": "x" });
    const result = await scan(root);
    expect(result.files).toEqual([]);
    expect(result.skipped).toEqual([
      { path: ".umbraignore", reason: "ignored", detail: ".umbraignore" },
      { path: "a.ts", reason: "ignored", detail: ".umbraignore" },
      { path: "src", reason: "ignored", detail: ".umbraignore", dir: true },
    ]);
  });

  it("honours nested .umbraignore and .cursorignore files", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".cursorignore": "*.env\n",
      "app/.umbraignore": "secrets/\n",
      "app/secrets/key.pem": "x",
      "app/main.ts": "x",
      "prod.env": "x",
      "app/dev.env": "x",
      "secrets/public.txt": "x",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual([".cursorignore", "app/.umbraignore", "app/main.ts", "secrets/public.txt"]);
    expect(skipOf(result, "prod.env")).toEqual({ reason: "ignored", detail: ".cursorignore" });
    expect(skipOf(result, "app/dev.env")).toEqual({ reason: "ignored", detail: ".cursorignore" });
    expect(skipOf(result, "app/secrets")).toEqual({ reason: "ignored", detail: "app/.umbraignore" });
  });

  it("does not let a .gitignore negation re-include what .umbraignore hides", async () => {
    const root = makeTemp();
    writeTree(root, { ".umbraignore": "*.key\n", "sub/.gitignore": "!*.key\n", "sub/a.key": "x" });
    const result = await scan(root);
    expect(paths(result)).toEqual([".umbraignore", "sub/.gitignore"]);
    expect(skipOf(result, "sub/a.key")).toEqual({ reason: "ignored", detail: ".umbraignore" });
  });
});

describe("scanWorkspace: folders, sizes and file kinds", () => {
  it("skips default excluded folders at any depth, once each", async () => {
    const root = makeTemp();
    writeTree(root, {
      "node_modules/x/index.js": "x",
      "pkg/node_modules/y.js": "x",
      "dist/out.js": "x",
      "__pycache__/a.pyc": "x",
      ".venv/bin/python": "x",
      ".idea/workspace.xml": "x",
      "src/index.ts": "x",
      "dist.ts": "a file named like a folder",
    });
    const result = await scan(root);
    expect(paths(result)).toEqual(["dist.ts", "src/index.ts"]);
    expect(result.skipped).toEqual(
      [".idea", ".venv", "__pycache__", "dist", "node_modules", "pkg/node_modules"].map((path) => ({
        path,
        reason: "excluded-dir",
        dir: true,
      })),
    );
    expect(DEFAULT_EXCLUDED_DIRS).toContain("node_modules");
    expect(DEFAULT_EXCLUDED_DIRS).toContain(".git");
  });

  it("replaces the default exclusions with excludeDirs, by name or by path, but always skips .git", async () => {
    const root = makeTemp();
    writeTree(root, {
      "dist/a.js": "x",
      "gen/b.ts": "x",
      "a/gen/c.ts": "x",
      "x/y/z.ts": "x",
      ".git/HEAD": "x",
    });
    const result = await scan(root, { excludeDirs: ["gen", "x/y"] });
    expect(paths(result)).toEqual(["dist/a.js"]);
    expect(result.skipped.map((s) => s.path)).toEqual([".git", "a/gen", "gen", "x/y"]);
  });

  it("skips files larger than maxFileBytes", async () => {
    const root = makeTemp();
    writeTree(root, {
      "small.txt": "a".repeat(100),
      "exact.txt": "a".repeat(200),
      "big.txt": "a".repeat(201),
    });
    const result = await scan(root, { maxFileBytes: 200 });
    expect(paths(result)).toEqual(["exact.txt", "small.txt"]);
    expect(skipOf(result, "big.txt")?.reason).toBe("too-large");
  });

  it("uses 1 MiB as the default size limit", async () => {
    const root = makeTemp();
    writeTree(root, { "one-mib.bin": Buffer.alloc(1024 * 1024), "over.bin": Buffer.alloc(1024 * 1024 + 1) });
    const result = await scan(root);
    expect(paths(result)).toEqual(["one-mib.bin"]);
    expect(skipOf(result, "over.bin")?.reason).toBe("too-large");
  });

  it("reports sizes and mtimes, sorted by path", async () => {
    const root = makeTemp();
    writeTree(root, { "b.txt": "hello", "a/z.txt": "", "a.txt": "hi" });
    const result = await scan(root);
    expect(result.files.map((f) => [f.path, f.size])).toEqual([
      ["a.txt", 2],
      ["a/z.txt", 0],
      ["b.txt", 5],
    ]);
    for (const file of result.files) expect(file.mtimeMs).toBeGreaterThan(0);
  });

  it("skips symlinks when not following them", async () => {
    const root = makeTemp();
    writeTree(root, { "real.txt": "x", "dir/a.txt": "x" });
    symlinkSync("real.txt", join(root, "link.txt"));
    symlinkSync("dir", join(root, "dirlink"));
    const result = await scan(root);
    expect(paths(result)).toEqual(["dir/a.txt", "real.txt"]);
    expect(skipOf(result, "link.txt")?.reason).toBe("symlink");
    expect(skipOf(result, "dirlink")?.reason).toBe("symlink");
  });

  it("follows symlinks inside the root but skips those pointing outside", async () => {
    const root = makeTemp();
    const outside = makeTemp();
    writeTree(outside, { "secret.txt": "x", "d/e.txt": "x" });
    writeTree(root, { "real.txt": "x", "dir/a.txt": "x" });
    symlinkSync("real.txt", join(root, "link.txt"));
    symlinkSync("dir", join(root, "dirlink"));
    symlinkSync(join(outside, "secret.txt"), join(root, "out.txt"));
    symlinkSync(join(outside, "d"), join(root, "outdir"));
    symlinkSync("missing.txt", join(root, "broken.txt"));
    const result = await scan(root, { followSymlinks: true });
    expect(paths(result)).toEqual(["dir/a.txt", "dirlink/a.txt", "link.txt", "real.txt"]);
    expect(skipOf(result, "out.txt")).toEqual({ reason: "symlink", detail: "points outside the workspace" });
    expect(skipOf(result, "outdir")).toEqual({ reason: "symlink", detail: "points outside the workspace" });
    expect(skipOf(result, "broken.txt")).toEqual({ reason: "symlink", detail: "broken link" });
  });

  it("is safe against symlink loops when following", async () => {
    const root = makeTemp();
    writeTree(root, { "a/file.txt": "x", "b/other.txt": "x" });
    symlinkSync("..", join(root, "a", "up"));
    symlinkSync(root, join(root, "self"));
    symlinkSync("../a", join(root, "b", "to-a"));
    symlinkSync("../b", join(root, "a", "to-b"));
    symlinkSync("loop2", join(root, "loop1"));
    symlinkSync("loop1", join(root, "loop2"));
    const result = await scan(root, { followSymlinks: true });
    const found = paths(result);
    expect(found).toContain("a/file.txt");
    expect(found).toContain("b/other.txt");
    expect(found.length).toBeLessThan(10);
    expect(skipOf(result, "a/up")).toEqual({ reason: "symlink", detail: "link loop" });
    expect(skipOf(result, "self")).toEqual({ reason: "symlink", detail: "link loop" });
    expect(skipOf(result, "loop1")?.reason).toBe("symlink");
  });

  it.skipIf(isRoot)("skips unreadable folders and files instead of failing", async () => {
    const root = makeTemp();
    writeTree(root, { "locked/a.txt": "x", "open/b.txt": "x", "noread.txt": "x" });
    chmodSync(join(root, "locked"), 0o000);
    chmodSync(join(root, "noread.txt"), 0o000);
    try {
      const result = await scan(root);
      expect(paths(result)).toEqual(["open/b.txt"]);
      expect(skipOf(result, "locked")?.reason).toBe("unreadable");
      expect(skipOf(result, "noread.txt")?.reason).toBe("unreadable");
    } finally {
      chmodSync(join(root, "locked"), 0o755);
      chmodSync(join(root, "noread.txt"), 0o644);
    }
  });

  it("does not fail on a folder it cannot read (also when running as root)", async () => {
    const root = makeTemp();
    writeTree(root, { "locked/a.txt": "x", "open/b.txt": "x" });
    chmodSync(join(root, "locked"), 0o000);
    try {
      const result = await scan(root);
      expect(paths(result)).toContain("open/b.txt");
      // root bypasses permissions and reads it; anyone else gets an "unreadable" skip
      if (isRoot) expect(paths(result)).toContain("locked/a.txt");
      else expect(skipOf(result, "locked")?.reason).toBe("unreadable");
    } finally {
      chmodSync(join(root, "locked"), 0o755);
    }
  });

  it("skips fifos and sockets as special files", async () => {
    const root = makeTemp();
    writeTree(root, { "a.txt": "x" });
    execFileSync("mkfifo", [join(root, "pipe")]);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(root, "sock"), resolve));
    try {
      const result = await scan(root);
      expect(paths(result)).toEqual(["a.txt"]);
      expect(skipOf(result, "pipe")?.reason).toBe("special");
      expect(skipOf(result, "sock")?.reason).toBe("special");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reports an ignored fifo as ignored", async () => {
    const root = makeTemp();
    writeTree(root, { ".gitignore": "pipe\n" });
    execFileSync("mkfifo", [join(root, "pipe")]);
    const result = await scan(root);
    expect(skipOf(result, "pipe")).toEqual({ reason: "ignored", detail: ".gitignore" });
  });
});

describe("scanWorkspace: root errors, abort, independence", () => {
  it("throws WorkspaceError ENOENT_ROOT for a missing root", async () => {
    const root = join(makeTemp(), "missing");
    const error = await scanWorkspace(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as WorkspaceError).code).toBe("ENOENT_ROOT");
    expect((error as WorkspaceError).message).toContain(root);
    expect((error as WorkspaceError).message).not.toContain("\n");
  });

  it("throws WorkspaceError NOT_A_DIRECTORY when the root is a file", async () => {
    const dir = makeTemp();
    writeFileSync(join(dir, "f.txt"), "x");
    const error = await scanWorkspace(join(dir, "f.txt")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceError);
    expect((error as WorkspaceError).code).toBe("NOT_A_DIRECTORY");
  });

  it.skipIf(isRoot)("throws WorkspaceError EACCES_ROOT when the root cannot be read", async () => {
    const dir = makeTemp();
    mkdirSync(join(dir, "r"));
    chmodSync(join(dir, "r"), 0o000);
    try {
      const error = await scanWorkspace(join(dir, "r")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkspaceError);
      expect((error as WorkspaceError).code).toBe("EACCES_ROOT");
    } finally {
      chmodSync(join(dir, "r"), 0o755);
    }
  });

  it("stops when its signal is aborted", async () => {
    const root = makeTemp();
    writeTree(root, { "a.txt": "x" });
    const controller = new AbortController();
    controller.abort();
    await expect(scan(root, { signal: controller.signal })).rejects.toThrow();
  });

  it("stops cleanly when aborted half-way through a walk", async () => {
    const root = makeTemp();
    const tree: Record<string, string> = {};
    // Folders with both many files and a subfolder: the walk pauses between runs of file stats while
    // subfolder walks are in flight, which is where an abort must not leave stray rejections.
    for (let d = 0; d < 16; d++) {
      for (let f = 0; f < 140; f++) tree[`d${d}/f${f}.ts`] = "x";
      tree[`d${d}/sub/inner/x.ts`] = "x";
    }
    writeTree(root, tree);
    const controller = new AbortController();
    const { signal } = controller;
    // Abort at the 40th cancellation check, deterministically in the middle of the walk.
    let checks = 0;
    const check = signal.throwIfAborted.bind(signal);
    signal.throwIfAborted = () => {
      checks++;
      if (checks === 40) controller.abort(new Error("stop here"));
      check();
    };
    await expect(scan(root, { signal })).rejects.toThrow("stop here");
    expect(checks).toBeGreaterThanOrEqual(40);
    // give stray walks a chance to surface as unhandled rejections (vitest fails the run if they do)
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it("writes nothing inside the scanned folder", async () => {
    const root = makeTemp();
    writeTree(root, {
      ".gitignore": "*.log\n",
      ".umbraignore": "secret/\n",
      "a.log": "x",
      "src/a.ts": "x",
      "secret/k": "x",
      ".git/info/exclude": "x\n",
    });
    symlinkSync("src", join(root, "link"));
    const before = fingerprint(root);
    await scan(root);
    await scan(root, { followSymlinks: true });
    expect(fingerprint(root)).toEqual(before);
  });
});
