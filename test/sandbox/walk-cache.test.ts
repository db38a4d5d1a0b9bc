/**
 * The cache of the workspace walk never leaves a secret readable: after each change made once a walk
 * was cached (a matching file added, a rename into a folder, a new subfolder, a changed or new ignore
 * file, a folder replaced by a symlink), the cached walk finds what a walk without the cache finds, and
 * an unchanged workspace lists no folder again. Each change is left to settle (its stamp older than the
 * window within which a stamp is not trusted), so that only the stamps can tell the walk what changed.
 */
import { lstatSync, statSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { checkGitAfterRun } from "../../src/sandbox/git-guard.js";
import { hiddenRootOf } from "../../src/sandbox/hidden-masks.js";
import { findWorkspacePaths, resolvePolicy } from "../../src/sandbox/policy.js";
import type { SandboxPolicy } from "../../src/sandbox/types.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

const SETTLE_MS = 2_100; // the walk's window (2 s) and some

let base: string;
let ws: string;
let cacheFile: string;

/** Waits until every folder and file of the workspace (`root`) changed more than SETTLE_MS ago. */
async function settle(root = ws): Promise<void> {
  let newest = 0;
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const stats = lstatSync(path);
      newest = Math.max(newest, stats.ctimeMs, stats.mtimeMs);
      if (entry.isDirectory()) await visit(path);
    }
  };
  const top = statSync(root);
  newest = Math.max(top.ctimeMs, top.mtimeMs);
  await visit(root);
  while (Date.now() < newest + SETTLE_MS) await new Promise((done) => setTimeout(done, 100));
}

/** The cached walk, checked against a walk without the cache. */
function walk() {
  const cached = findWorkspacePaths(ws, { cacheFile, writableRoots: [ws] });
  const fresh = findWorkspacePaths(ws, { writableRoots: [ws] });
  expect({ ...cached, listed: 0 }).toEqual({ ...fresh, listed: 0 });
  return cached;
}

/** Whether the walk's result hides `rel`. */
function hides(found: ReturnType<typeof walk>, rel: string): boolean {
  const policy = { hiddenPaths: found.hidden, hiddenMasks: found.masks } as SandboxPolicy;
  return hiddenRootOf(policy, join(ws, rel)) !== undefined;
}

beforeAll(async () => {
  base = await realpath(await tempDir("walk-cache"));
  ws = join(base, "ws");
  cacheFile = join(base, "data", "sandbox", "walk", "ws.json");
  await mkdir(join(ws, "data"), { recursive: true });
  await mkdir(join(ws, "src", "lib"), { recursive: true });
  await mkdir(join(base, "outside", "sub"), { recursive: true });
  await writeFile(join(ws, ".umbraignore"), "data/*.csv\nsecret.env\n");
  await writeFile(join(ws, "data", "README.md"), "about\n");
  for (let i = 0; i < 50; i++) await writeFile(join(ws, "data", `r${i}.csv`), "secret\n");
  await writeFile(join(ws, "src", "a.ts"), "a\n");
  await writeFile(join(ws, "src", "lib", "b.ts"), "b\n");
  await writeFile(join(base, "outside", "secret.env"), "secret\n");
  await writeFile(join(base, "outside", "sub", "secret.env"), "secret\n");
  await settle();
}, 60_000);
afterAll(async () => {
  await cleanup(base);
});

describe("the cached workspace walk", () => {
  it("lists no folder again in an unchanged workspace, and keeps its cache private", () => {
    const first = walk();
    expect(first.listed).toBe(4);
    expect(first.masks).toEqual([{ folder: join(ws, "data"), keep: ["README.md"] }]);
    expect(hides(first, "data/r7.csv")).toBe(true);
    expect(hides(first, "data/README.md")).toBe(false);
    const second = walk();
    expect(second.listed).toBe(0);
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(cacheFile, "..")).mode & 0o777).toBe(0o700);
  });

  it("hides a matching file added after a cached walk, and shows a new visible one", async () => {
    walk();
    await writeFile(join(ws, "data", "late.csv"), "secret\n");
    await writeFile(join(ws, "data", "notes.md"), "visible\n");
    await writeFile(join(ws, "src", "lib", "secret.env"), "secret\n");
    await settle();
    const found = walk();
    expect(found.listed).toBe(2); // data and src/lib
    expect(hides(found, "data/late.csv")).toBe(true);
    expect(hides(found, "data/notes.md")).toBe(false);
    expect(hides(found, "src/lib/secret.env")).toBe(true);
  });

  it("lists only the root again when an entry came and went there; hides what stays", async () => {
    walk();
    await writeFile(join(ws, "stand-in"), "");
    await rm(join(ws, "stand-in"));
    await settle();
    expect(walk().listed).toBe(1);
    // the same while the root's stamp is too recent to be kept, then once it is: the cache stays as it is
    await writeFile(join(ws, "stand-in"), "");
    await rm(join(ws, "stand-in"));
    walk();
    const kept = await readFile(cacheFile, "utf8");
    await settle();
    expect(walk().listed).toBe(1);
    expect(await readFile(cacheFile, "utf8")).toBe(kept);
    await writeFile(join(ws, "secret.env"), "secret\n");
    await settle();
    const found = walk();
    expect(hides(found, "secret.env")).toBe(true);
    expect(walk().listed).toBe(0);
    await rm(join(ws, "secret.env"));
  });

  it("hides what is renamed into a folder, a file or a whole folder", async () => {
    walk();
    await writeFile(join(base, "outside", "moved.csv"), "secret\n");
    await rename(join(base, "outside", "moved.csv"), join(ws, "data", "moved.csv"));
    await mkdir(join(base, "outside", "tree", "inner"), { recursive: true });
    await writeFile(join(base, "outside", "tree", "inner", "secret.env"), "secret\n");
    await rename(join(base, "outside", "tree"), join(ws, "src", "tree"));
    await settle();
    const found = walk();
    expect(hides(found, "data/moved.csv")).toBe(true);
    expect(hides(found, "src/tree/inner/secret.env")).toBe(true);
  });

  it("hides what a new subfolder holds", async () => {
    walk();
    await mkdir(join(ws, "src", "lib", "deep", "deeper"), { recursive: true });
    await writeFile(join(ws, "src", "lib", "deep", "deeper", "secret.env"), "secret\n");
    await settle();
    expect(hides(walk(), "src/lib/deep/deeper/secret.env")).toBe(true);
  });

  it("applies a changed ignore file in every folder below it, changed or not", async () => {
    walk();
    expect(hides(walk(), "src/lib/b.ts")).toBe(false);
    await writeFile(join(ws, ".umbraignore"), "data/*.csv\nsecret.env\n*.ts\n");
    await settle();
    const found = walk();
    expect(hides(found, "src/lib/b.ts")).toBe(true);
    expect(hides(found, "src/a.ts")).toBe(true);
    // the same size, rewritten in place: the folder's own stamp does not change
    await writeFile(join(ws, ".umbraignore"), "data/*.csv\nsecret.env\n*.md\n");
    await settle();
    const again = walk();
    expect(hides(again, "src/lib/b.ts")).toBe(false);
    expect(hides(again, "data/notes.md")).toBe(true);
  });

  it("applies a new nested ignore file and a negation", async () => {
    walk();
    await writeFile(join(ws, "src", "lib", ".cursorignore"), "*.ts\n");
    await writeFile(join(ws, "data", ".umbraignore"), "!r3.csv\n");
    await settle();
    const found = walk();
    expect(hides(found, "src/lib/b.ts")).toBe(true);
    expect(hides(found, "src/a.ts")).toBe(false);
    expect(hides(found, "data/r3.csv")).toBe(false);
    expect(hides(found, "data/r4.csv")).toBe(true);
  });

  it("does not follow a folder replaced by a symlink, nor keep what the folder held", async () => {
    walk();
    await rm(join(ws, "src", "lib", "deep"), { recursive: true });
    await symlink(join(base, "outside"), join(ws, "src", "lib", "deep"));
    await settle();
    const found = walk();
    expect(found.hidden.some((path) => path.startsWith(join(ws, "src", "lib", "deep", "")))).toBe(false);
    expect(found.listed).toBeGreaterThan(0);
  });

  it("hides what an excluded folder gets after a cached walk: a deep match, a new ignore file there", async () => {
    await mkdir(join(ws, "node_modules", "pkg", "lib", "deep"), { recursive: true });
    await writeFile(join(ws, "node_modules", "pkg", "lib", "index.js"), "visible\n");
    await settle();
    expect(hides(walk(), "node_modules/pkg/lib/index.js")).toBe(false);
    await writeFile(join(ws, "node_modules", "pkg", "lib", "deep", "secret.env"), "secret\n");
    await writeFile(join(ws, "node_modules", "pkg", ".cursorignore"), "lib/*.js\n");
    await settle();
    const found = walk();
    expect(hides(found, "node_modules/pkg/lib/deep/secret.env")).toBe(true);
    expect(hides(found, "node_modules/pkg/lib/index.js")).toBe(true);
    expect(found.ignoreFiles).toContain(join(ws, "node_modules", "pkg", ".cursorignore"));
    expect(walk().listed).toBe(0);
  });

  it("starts over from a cache that is not its own or not readable", async () => {
    await writeFile(cacheFile, "{not json");
    expect(walk().listed).toBeGreaterThan(0);
    expect(walk().listed).toBe(0);
    // a check or a record of another shape (the stamps as a string, the root's subfolders as a string)
    // is not used: the first leaves the records, the second the whole file
    const [header, records] = (await readFile(cacheFile, "utf8")).split("\n").map((line) => JSON.parse(line));
    await writeFile(
      cacheFile,
      `${JSON.stringify({ ...header, check: { ...header.check, stamps: "src" } })}\n${JSON.stringify(records)}`,
    );
    expect(walk().listed).toBe(0);
    records[""].dirs = "src";
    await writeFile(cacheFile, `${JSON.stringify(header)}\n${JSON.stringify(records)}`);
    expect(walk().listed).toBe(0); // the check alone shows nothing changed
    await writeFile(
      cacheFile,
      `${JSON.stringify({ ...header, check: undefined })}\n${JSON.stringify(records)}`,
    );
    expect(walk().listed).toBeGreaterThan(1);
    expect(walk().listed).toBe(0);
    const other = findWorkspacePaths(ws, { cacheFile, writableRoots: [ws], excludeDirs: ["src"] });
    expect(other.listed).toBeGreaterThan(0);
    await chmod(cacheFile, 0o000);
    expect(findWorkspacePaths(ws, { cacheFile, writableRoots: [ws] }).hidden).toEqual(walk().hidden);
    await chmod(cacheFile, 0o600);
  });

  it("is used by resolvePolicy, whose policy then hides the same", async () => {
    const env = { HOME: join(base, "home"), UMBRA_HOME: join(base, "policy-data"), PATH: "/usr/bin" };
    const config = loadConfig({ env: { XDG_CONFIG_HOME: join(base, "no-config") }, flags: {} }).sandbox;
    const one = await resolvePolicy({ workspace: ws, config, env });
    await writeFile(join(ws, "data", "policy.csv"), "secret\n");
    await settle();
    const two = await resolvePolicy({ workspace: ws, config, env });
    expect(one.policy.hiddenMasks?.length).toBe(1);
    expect(hiddenRootOf(one.policy, join(ws, "data", "r9.csv"))).toBe(join(ws, "data", "r9.csv"));
    expect(hiddenRootOf(two.policy, join(ws, "data", "policy.csv"))).toBe(join(ws, "data", "policy.csv"));
    expect(hiddenRootOf(two.policy, join(ws, "data", ".umbraignore"))).toBeUndefined();
  });

  it("gives the git guard's check after a run every new nested repository, in folders cached before", async () => {
    const env = { HOME: join(base, "home"), UMBRA_HOME: join(base, "guard-data"), PATH: "/usr/bin" };
    const config = loadConfig({ env: { XDG_CONFIG_HOME: join(base, "no-config") }, flags: {} }).sandbox;
    await resolvePolicy({ workspace: ws, config, env }); // caches the walk
    await settle();
    const { git } = await resolvePolicy({ workspace: ws, config, env }); // stamps trusted now
    if (!git) throw new Error("no git guard in workspace-write mode");
    // what a command would make in the settled folders: a repository one level down, and a gitlink
    await mkdir(join(ws, "src", "lib", "planted", ".git"), { recursive: true });
    await writeFile(join(ws, "src", "lib", "planted", ".git", "config"), "[core]\n\tfsmonitor = evil\n");
    await writeFile(join(ws, "data", ".git"), "gitdir: ../src\n");
    const check = await checkGitAfterRun(git, env);
    expect(check.refused.map((r) => r.path).sort()).toEqual(["data/.git", "src/lib/planted/.git"]);
    expect(lstatSync(join(ws, "data", ".git"), { throwIfNoEntry: false })).toBeUndefined();
  });
});

describe("folders named like members of Object.prototype", () => {
  it("hides what the rules match in `__proto__` and `constructor` folders, walked afresh and from the cache", async () => {
    const root = join(base, "proto-ws");
    const file = join(base, "data", "sandbox", "walk", "proto-ws.json");
    const folders = ["__proto__", "constructor", "normal", "toString/hasOwnProperty", "__proto__/__proto__"];
    for (const folder of folders) {
      await mkdir(join(root, folder), { recursive: true });
      await writeFile(join(root, folder, "a.secret"), "secret\n");
      await writeFile(join(root, folder, "a.txt"), "visible\n");
    }
    await writeFile(join(root, ".umbraignore"), "*.secret\n");
    const secrets = folders.map((folder) => join(root, folder, "a.secret")).sort();
    expect(findWorkspacePaths(root).hidden).toEqual(secrets);
    await settle(root);
    const first = findWorkspacePaths(root, { cacheFile: file });
    expect(first.hidden).toEqual(secrets);
    // nothing changed: the walk's check, read from the cache
    const second = findWorkspacePaths(root, { cacheFile: file });
    expect(second.listed).toBe(0);
    expect(second.hidden).toEqual(secrets);
    // the root changed: the root is listed again, every folder below comes from its cached record
    await writeFile(join(root, "new.txt"), "");
    await settle(root);
    const third = findWorkspacePaths(root, { cacheFile: file });
    expect(third.listed).toBe(1);
    expect(third.hidden).toEqual(secrets);
    expect(findWorkspacePaths(root, { cacheFile: file }).listed).toBe(0);
  });
});
