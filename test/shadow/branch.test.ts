import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openBranch, run, ShadowError } from "../../src/shadow/index.js";
import { scaled, waitUntil } from "../helpers/wait.js";
import { cleanup, copyExamples } from "../helpers/workspace.js";
import { type Fixture, setup } from "./helpers.js";

let fixture: Fixture | undefined;

afterEach(async () => {
  await fixture?.done();
  fixture = undefined;
});

async function start(prepare?: (root: string) => void): Promise<Fixture> {
  fixture = await setup(prepare);
  return fixture;
}

/** Whether a process is alive (a zombie, killed but not yet reaped by its new parent, is not). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** A small binary file (NUL bytes), a script and a symlink, added to the workspace before it is fingerprinted. */
function withExtras(root: string): void {
  mkdirSync(join(root, "assets"));
  writeFileSync(join(root, "assets", "logo.bin"), Buffer.from([0, 1, 2, 3, 255, 0, 10, 42, 0, 7]));
  writeFileSync(join(root, "tool.sh"), "#!/bin/sh\necho tool\n");
  symlinkSync("billing/money.ts", join(root, "money-link.ts"));
}

describe("fork", () => {
  it("makes an overlay branch that reads like the user's folder", async () => {
    const f = await start();
    const branch = await f.fork();
    expect(branch.mode).toBe("overlay");
    expect(branch.warning).toBeUndefined();
    expect(branch.workspaceRoot).toBe(f.root);
    expect(existsSync(join(branch.dir, "branch.json"))).toBe(true);
    const record = JSON.parse(readFileSync(join(branch.dir, "branch.json"), "utf8"));
    expect(record).toMatchObject({
      id: branch.id,
      workspaceRoot: f.root,
      mode: "overlay",
      ownerPid: process.pid,
    });
    expect(await branch.readText("billing/money.ts")).toBe(
      readFileSync(join(f.root, "billing/money.ts"), "utf8"),
    );
    expect(await branch.read("missing.ts")).toBeUndefined();
    expect(await branch.read("billing")).toBeUndefined();
    expect((await branch.readdir(""))?.map((e) => e.name)).toEqual(readdirSync(f.root).sort());
    expect(await branch.changes()).toEqual([]);
    expect(await branch.diff()).toBe("");
  });

  it("gives overrides precedence over the layers, and keeps them out of the user's folder", async () => {
    const f = await start();
    const branch = await f.fork();
    branch.write("billing/money.ts", "export const x = 1;\n");
    branch.write("new/deep/file.ts", "new\n");
    branch.remove("billing/tax.ts");
    expect(await branch.readText("billing/money.ts")).toBe("export const x = 1;\n");
    expect(await branch.readText("new/deep/file.ts")).toBe("new\n");
    expect(await branch.read("billing/tax.ts")).toBeUndefined();
    expect((await branch.readdir("billing"))?.map((e) => e.name)).toEqual(["invoice.ts", "money.ts"]);
    expect(await branch.readdir("new")).toEqual([{ name: "deep", kind: "dir" }]);
    expect([...branch.overrides().keys()].sort()).toEqual([
      "billing/money.ts",
      "billing/tax.ts",
      "new/deep/file.ts",
    ]);
    expect(await branch.changes()).toEqual([
      { path: "billing/money.ts", kind: "modified" },
      { path: "billing/tax.ts", kind: "deleted" },
      { path: "new/deep/file.ts", kind: "added" },
    ]);
    // a removed folder re-created by an override shows only the override
    branch.remove("billing");
    branch.write("billing/only.ts", "only\n");
    expect((await branch.readdir("billing"))?.map((e) => e.name)).toEqual(["only.ts"]);
    expect(await branch.read("billing/invoice.ts")).toBeUndefined();
    expect((await branch.changes()).filter((c) => c.path.startsWith("billing/"))).toEqual([
      { path: "billing/invoice.ts", kind: "deleted" },
      { path: "billing/money.ts", kind: "deleted" },
      { path: "billing/only.ts", kind: "added" },
      { path: "billing/tax.ts", kind: "deleted" },
    ]);
    // processes do not see overrides until materialize()
    const before = await run(branch, "cat", ["billing/money.ts"]);
    expect(before.stdout).toBe(readFileSync(join(f.root, "billing/money.ts"), "utf8"));
  });

  it("rejects paths that leave the workspace", async () => {
    const f = await start();
    const branch = await f.fork();
    for (const bad of ["../x", "/etc/passwd", "a/../../x", "..", "a\u0000b"]) {
      await expect(branch.read(bad)).rejects.toMatchObject({ name: "ShadowError", code: "PATH_ESCAPE" });
      expect(() => branch.write(bad, "x")).toThrow(ShadowError);
    }
    expect(() => branch.remove("")).toThrow(/not the workspace root/);
    expect(await branch.readText("./billing//money.ts")).toContain("minor units");
  });
});

describe("processes in a branch", () => {
  it("see the branch at the workspace's absolute path, and their writes land in the branch's layer", async () => {
    const f = await start();
    const branch = await f.fork();
    const result = await run(branch, "sh", [
      "-c",
      "pwd; cat billing/money.ts | head -1; echo built > out.txt; mkdir -p .cache/x && echo c > .cache/x/y; echo more >> docs/operations.md",
    ]);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, stderr: "" });
    const [pwd, first] = result.stdout.split("\n");
    expect(pwd).toBe(f.root);
    expect(first).toContain("minor units");
    expect(existsSync(join(f.root, "out.txt"))).toBe(false);
    expect(readFileSync(join(branch.dir, "upper", "out.txt"), "utf8")).toBe("built\n");
    expect(await branch.readText("out.txt")).toBe("built\n");
    expect(await branch.readText(".cache/x/y")).toBe("c\n");
    expect(await branch.readText("docs/operations.md")).toMatch(/more\n$/);
    expect(await branch.changes()).toEqual([
      { path: ".cache/x/y", kind: "added" },
      { path: "docs/operations.md", kind: "modified" },
      { path: "out.txt", kind: "added" },
    ]);
    const inSub = await run(branch, "pwd", [], { cwd: "billing" });
    expect(inSub.stdout.trim()).toBe(join(f.root, "billing"));
  });

  it("share one mount: a running process sees materialized files and other processes' writes at once", async () => {
    const f = await start();
    const branch = await f.fork();
    const waiter = run(
      branch,
      "sh",
      [
        "-c",
        "touch waiting; while [ ! -f later.py ]; do sleep 0.01; done; cat later.py; while [ ! -f other.txt ]; do sleep 0.01; done; cat other.txt",
      ],
      { timeoutMs: scaled(30_000) },
    );
    await waitUntil(async () => (await branch.readText("waiting")) !== undefined, "the waiter to run");
    branch.write("later.py", "print('hi')\n");
    await branch.materialize();
    expect(branch.overrides().size).toBe(0);
    expect(existsSync(join(f.root, "later.py"))).toBe(false);
    // made whole, then named: the waiter, polling for the name, never reads it half written
    await run(branch, "sh", ["-c", "echo other > other.tmp && mv other.tmp other.txt"]);
    const result = await waiter;
    expect(result.timedOut).toBe(false);
    expect(result.stdout).toBe("print('hi')\nother\n");
  });

  it("materialize writes overrides (edits, new files, deletions) into the branch's own layer", async () => {
    const f = await start();
    const branch = await f.fork();
    branch.write("billing/money.ts", "changed\n");
    branch.write("fresh/new.ts", "new\n");
    branch.remove("inventory");
    await branch.materialize();
    const seen = await run(branch, "sh", [
      "-c",
      "cat billing/money.ts fresh/new.ts; ls inventory 2>&1 || true",
    ]);
    expect(seen.stdout).toMatch(/^changed\nnew\nls: .*inventory.*No such file/);
    expect(await branch.read("inventory/stock.py")).toBeUndefined();
    expect(await branch.changes()).toEqual([
      { path: "billing/money.ts", kind: "modified" },
      { path: "fresh/new.ts", kind: "added" },
      { path: "inventory/__init__.py", kind: "deleted" },
      { path: "inventory/stock.py", kind: "deleted" },
    ]);
  });

  it("kills the whole process tree on timeout", async () => {
    const f = await start();
    const branch = await f.fork();
    // The limit leaves sh time to start its background job even on a busy machine (it was 300 ms, and
    // a loaded machine could kill sh before it wrote bg.pid).
    const result = await run(branch, "sh", ["-c", "sleep 30 & echo $! > bg.pid; sleep 30"], {
      timeoutMs: scaled(2000),
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGKILL");
    const pid = Number(await branch.readText("bg.pid"));
    expect(pid).toBeGreaterThan(0);
    // SIGKILL is sent; the process is gone once the kernel has scheduled its exit.
    await waitUntil(() => !isRunning(pid), "the background job to be killed");
  });

  it("passes stdin, env and exit status through", async () => {
    const f = await start();
    const branch = await f.fork();
    const result = await run(branch, "sh", ["-c", "cat; echo $FOO >&2; exit 3"], {
      input: "in\n",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FOO: "bar" },
    });
    expect(result).toMatchObject({ exitCode: 3, stdout: "in\n", stderr: "bar\n", signal: null });
    const missing = await run(branch, "no-such-command-umbra", []);
    expect(missing.exitCode).toBe(127);
  });
});

describe("changes and diff", () => {
  it("see deletions (whiteouts), renames, opaque folders, binary files and modes", async () => {
    const f = await start(withExtras);
    const branch = await f.fork();
    const result = await run(branch, "sh", [
      "-c",
      [
        "rm billing/tax.ts",
        "mv billing/money.ts billing/cash.ts",
        "rm -rf inventory && mkdir inventory && echo 'x = 1' > inventory/fresh.py",
        "printf '\\000\\001changed' > assets/logo.bin",
        "printf '\\000new\\377' > assets/new.bin",
        "chmod +x tool.sh",
        "echo '// more' >> server/main.go",
        "ln -s ../README.md docs/readme-link",
        "ln -s billing lib",
      ].join(" && "),
    ]);
    expect(result.stderr).toBe("");
    // symlinks are followed within the view
    expect(await branch.read("lib/tax.ts")).toBeUndefined();
    expect(await branch.readText("lib/invoice.ts")).toBe(
      readFileSync(join(f.root, "billing/invoice.ts"), "utf8"),
    );
    expect(await branch.read("money-link.ts")).toBeUndefined();
    expect(await branch.readText("docs/readme-link")).toBe(readFileSync(join(f.root, "README.md"), "utf8"));
    expect(await branch.kind("docs/readme-link")).toBe("symlink");
    expect((await branch.readdir("lib"))?.map((e) => e.name)).toEqual(["cash.ts", "invoice.ts"]);
    expect(await branch.read("billing/tax.ts")).toBeUndefined();
    expect(await branch.read("inventory/stock.py")).toBeUndefined();
    expect((await branch.readdir("inventory"))?.map((e) => e.name)).toEqual(["fresh.py"]);
    expect(await branch.changes()).toEqual([
      { path: "assets/logo.bin", kind: "modified" },
      { path: "assets/new.bin", kind: "added" },
      { path: "billing/cash.ts", kind: "added" },
      { path: "billing/money.ts", kind: "deleted" },
      { path: "billing/tax.ts", kind: "deleted" },
      { path: "docs/readme-link", kind: "added" },
      { path: "inventory/__init__.py", kind: "deleted" },
      { path: "inventory/fresh.py", kind: "added" },
      { path: "inventory/stock.py", kind: "deleted" },
      { path: "lib", kind: "added" },
      { path: "server/main.go", kind: "modified" },
      { path: "tool.sh", kind: "modified" },
    ]);
    const patch = await branch.diff();
    expect(patch).toContain(
      "diff --git a/billing/money.ts b/billing/cash.ts\nsimilarity index 100%\nrename from billing/money.ts\nrename to billing/cash.ts\n",
    );
    expect(patch).toContain("Binary files a/assets/logo.bin and b/assets/logo.bin differ");
    expect(patch).toContain("Binary files /dev/null and b/assets/new.bin differ");
    expect(patch).toContain("diff --git a/tool.sh b/tool.sh\nold mode 100644\nnew mode 100755\n");
    expect(patch).toContain("deleted file mode 100644");
    expect(patch).toContain("+// more");
    expect(patch).toContain("diff --git a/docs/readme-link b/docs/readme-link\nnew file mode 120000\n");

    // git apply accepts the diff on a fresh copy of the workspace, and the result is the branch
    const copy = await copyExamples();
    try {
      withExtras(copy);
      const binaryPatch = await branch.diff({ binary: true });
      expect(binaryPatch).toContain("GIT binary patch\nliteral ");
      const file = join(copy, "..", "branch.patch");
      await writeFile(file, binaryPatch);
      execFileSync("git", ["apply", "--check", file], { cwd: copy, stdio: "pipe" });
      execFileSync("git", ["apply", file], { cwd: copy, stdio: "pipe" });
      for (const change of await branch.changes()) {
        if ((await branch.kind(change.path)) === "symlink") continue;
        const there = existsSync(join(copy, change.path))
          ? await readFile(join(copy, change.path))
          : undefined;
        expect(there, change.path).toEqual(await branch.read(change.path));
      }
      expect(readlinkSync(join(copy, "lib"))).toBe("billing");
      expect(readlinkSync(join(copy, "docs/readme-link"))).toBe("../README.md");
      expect(execFileSync("stat", ["-c", "%a", join(copy, "tool.sh")], { encoding: "utf8" }).trim()).toBe(
        "755",
      );
      // the text-only diff (binary files summarized) is accepted for the text files
      const textOnly = join(copy, "..", "text.patch");
      await writeFile(
        textOnly,
        patch
          .split(/(?=^diff --git )/m)
          .filter((p) => !p.includes("Binary files"))
          .join(""),
      );
      const fresh = await copyExamples();
      try {
        withExtras(fresh);
        execFileSync("git", ["apply", "--check", textOnly], { cwd: fresh, stdio: "pipe" });
      } finally {
        await cleanup(join(fresh, ".."));
      }
    } finally {
      await cleanup(join(copy, ".."));
    }
  });

  it("shows user edits through the branch, and diffs what the branch did against its recorded base", async () => {
    const f = await start();
    const branch = await f.fork();
    await run(branch, "sh", ["-c", "echo branch >> README.md"]);
    // the user edits a file the branch has not touched, and one it has
    writeFileSync(join(f.root, "docs", "operations.md"), "user edit\n");
    writeFileSync(join(f.root, "README.md"), "user readme\n");
    await f.rebase();
    expect(await branch.readText("docs/operations.md")).toBe("user edit\n");
    const seen = await run(branch, "cat", ["docs/operations.md"]);
    expect(seen.stdout).toBe("user edit\n");
    expect(await branch.changes()).toEqual([{ path: "README.md", kind: "modified" }]);
    const diff = await branch.diff();
    // the agent appended a line to the README it copied: the user's later edit is no part of its diff
    expect(diff).toContain("+branch\n");
    expect(diff).not.toContain("user readme");
    expect(diff).toContain(" ## Inventory\n");
  });

  it("leaves out .git and ignored new files from the diff, unless asked", async () => {
    const f = await start((root) => {
      writeFileSync(join(root, ".gitignore"), "dist/\n*.log\n");
      execFileSync("git", ["init", "-q"], { cwd: root });
    });
    const branch = await f.fork();
    await run(branch, "sh", [
      "-c",
      "git -c user.email=a@b -c user.name=a add -A >/dev/null && mkdir -p dist && echo out > dist/app.js && echo log > x.log && echo keep > kept.txt",
    ]);
    const paths = (await branch.changes()).map((c) => c.path);
    expect(paths).toEqual(["dist/app.js", "kept.txt", "x.log"]);
    const patch = await branch.diff();
    expect(patch).toContain("b/kept.txt");
    expect(patch).not.toContain("dist/app.js");
    expect(patch).not.toContain("x.log");
    expect(await branch.diff({ includeIgnored: true })).toContain("b/dist/app.js");
  });
});

describe("symlinks in the user's folder", () => {
  it("are followed within the view, to the branch's version of their target", async () => {
    const f = await start();
    // folder symlinks are added after the fingerprint (it cannot hash them) and removed before the end
    symlinkSync("billing", join(f.root, "lib"));
    symlinkSync(join(f.root, "billing"), join(f.root, "abs"));
    symlinkSync("/usr/bin", join(f.root, "outside"));
    try {
      const branch = await f.fork();
      await run(branch, "sh", ["-c", "echo changed > billing/money.ts && rm billing/tax.ts"]);
      expect(await branch.readText("lib/money.ts")).toBe("changed\n");
      expect(await branch.readText("abs/money.ts")).toBe("changed\n");
      expect(await branch.read("lib/tax.ts")).toBeUndefined();
      expect(await branch.readText("lib/invoice.ts")).toBe(
        readFileSync(join(f.root, "billing/invoice.ts"), "utf8"),
      );
      // a link out of the workspace is a link, and nothing behind it is looked at, read or listed
      expect(await branch.kind("outside")).toBe("symlink");
      expect(await branch.kind("outside/env")).toBeUndefined();
      expect(await branch.read("outside/env")).toBeUndefined();
      expect(await branch.readdir("outside")).toBeUndefined();
      expect((await branch.readdir("abs"))?.map((e) => e.name)).toEqual(["invoice.ts", "money.ts"]);
      branch.write("billing/invoice.ts", "override\n");
      expect(await branch.readText("lib/invoice.ts")).toBe("override\n");
    } finally {
      for (const name of ["lib", "abs", "outside"]) rmSync(join(f.root, name));
    }
  });
});

describe("lifetime", () => {
  it("discards a branch: processes, mount and directory go", async () => {
    const f = await start();
    const branch = await f.fork();
    const child = branch.spawn("sleep", ["30"]);
    const exited = new Promise((done) => child.once("exit", done));
    await branch.discard();
    await exited;
    expect(existsSync(branch.dir)).toBe(false);
    expect(branch.isDiscarded).toBe(true);
    expect(() => branch.spawn("true", [])).toThrow(/discarded/);
    await expect(run(branch, "true")).rejects.toMatchObject({ code: "BRANCH_NOT_FOUND" });
  });

  it("reopens a branch from disk after a crash, with its layer intact", async () => {
    const f = await start();
    const branch = await f.fork();
    await run(branch, "sh", ["-c", "echo kept > kept.txt && rm README.md"]);
    await branch.close();
    // "crash": the Branch object is gone, a new one is made from disk
    const again = await openBranch(f.root, branch.id, { env: f.env });
    f.branches.push(again);
    expect(again.mode).toBe("overlay");
    expect(again.dir).toBe(branch.dir);
    expect(await again.readText("kept.txt")).toBe("kept\n");
    expect(await again.changes()).toEqual([
      { path: "README.md", kind: "deleted" },
      { path: "kept.txt", kind: "added" },
    ]);
    expect((await run(again, "cat", ["kept.txt"])).stdout).toBe("kept\n");
    await expect(openBranch(f.root, "no-such-branch", { env: f.env })).rejects.toMatchObject({
      code: "BRANCH_NOT_FOUND",
    });
    chmodSync(join(branch.dir, "branch.json"), 0o644);
  });
});
