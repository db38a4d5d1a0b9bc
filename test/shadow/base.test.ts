import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type BranchMode, openBranch, run } from "../../src/shadow/index.js";
import type { RecordedChange } from "../../src/shadow/recorded.js";
import { type Fixture, setup } from "./helpers.js";

const NUMBERS = `${Array.from({ length: 20 }, (_, i) => String(i + 1)).join("\n")}\n`;

let f: Fixture | undefined;
afterEach(async () => {
  await f?.done();
  f = undefined;
});

async function text(
  change: RecordedChange | undefined,
  side: "base" | "branch",
): Promise<string | undefined> {
  const state = change?.[side];
  if (state?.kind !== "file") return undefined;
  return (await state.load()).toString("utf8");
}

const rules = { hidden: [], hiddenOutside: [], protected: [], umbraWritable: [] };

describe.each<BranchMode>(["overlay", "fuse-overlayfs", "reflink", "copy"])("recorded base (%s)", (mode) => {
  it("diffs what a command did against its base: the user's later edit of the same file is kept out", async () => {
    f = await setup((root) => writeFileSync(join(root, "f.txt"), NUMBERS));
    const branch = await f.fork({ mode });
    await run(branch, "sh", ["-c", 'sed -i "s/^2$/two-by-agent/" f.txt']);
    writeFileSync(join(f.root, "f.txt"), NUMBERS.replace("\n19\n", "\nnineteen-by-user\n"));
    await f.rebase();
    const [change] = await branch.recordedChanges();
    expect(change?.path).toBe("f.txt");
    expect(await text(change, "base")).toBe(NUMBERS);
    expect(await text(change, "branch")).toBe(NUMBERS.replace("\n2\n", "\ntwo-by-agent\n"));
    const diff = await branch.diff();
    expect(diff).toContain("-2\n+two-by-agent\n");
    expect(diff).not.toContain("19");
    // what git apply does with it: the user's line 19 survives
    const copy = join(f.home, "apply");
    execFileSync("mkdir", ["-p", copy]);
    writeFileSync(join(copy, "f.txt"), readFileSync(join(f.root, "f.txt")));
    execFileSync("git", ["apply", "-"], { cwd: copy, input: diff });
    expect(readFileSync(join(copy, "f.txt"), "utf8")).toBe(
      NUMBERS.replace("\n2\n", "\ntwo-by-agent\n").replace("\n19\n", "\nnineteen-by-user\n"),
    );
  });

  it("shows files it has not touched as the user has them now (by the next command at the latest)", async () => {
    f = await setup((root) => writeFileSync(join(root, "g.txt"), "old\n"));
    const branch = await f.fork({ mode });
    await run(branch, "true");
    writeFileSync(join(f.root, "g.txt"), "the user's new text\n");
    await f.rebase();
    expect((await run(branch, "cat", ["g.txt"])).stdout).toBe("the user's new text\n");
    expect(await branch.readText("g.txt")).toBe("the user's new text\n");
    // following the user is no change of the branch
    expect(await branch.changes()).toEqual([]);
  });

  it("records an unknown base when the user changes a file while a command is changing it", async () => {
    f = await setup((root) => writeFileSync(join(root, "f.txt"), NUMBERS));
    const branch = await f.fork({ mode });
    const fifo = join(f.home, "go");
    execFileSync("mkfifo", [fifo]);
    const started = join(f.home, "started");
    // the command starts, says so, waits for the test, then edits the file
    const running = run(branch, "sh", [
      "-c",
      `touch ${started}; read line < ${fifo}; sed -i "s/^2$/two-by-agent/" f.txt`,
    ]);
    while (!existsSync(started)) await new Promise((done) => setTimeout(done, 20));
    writeFileSync(join(f.root, "f.txt"), NUMBERS.replace("\n19\n", "\nnineteen-by-user\n"));
    await f.rebase();
    const writer = spawn("sh", ["-c", `echo go > ${fifo}`]);
    await new Promise((done) => writer.once("close", done));
    await running;
    const [change] = await branch.recordedChanges();
    expect(change?.path).toBe("f.txt");
    expect(change?.base.kind).toBe("unknown");
    // a diff cannot say what the agent did there: the file is left out of it
    expect(await branch.diff()).toBe("");
  });

  it("takes the version the agent read through the door as its base, across a command in between", async () => {
    f = await setup((root) => writeFileSync(join(root, "f.txt"), NUMBERS));
    const branch = await f.fork({ mode });
    const files = branch.files(rules);
    const seen = (await files.readText("f.txt")) ?? "";
    writeFileSync(join(f.root, "f.txt"), NUMBERS.replace("\n19\n", "\nnineteen-by-user\n"));
    await f.rebase();
    // a sync point: copy modes refresh the untouched file from the user's folder here
    await run(branch, "true");
    await files.write("f.txt", seen.replace("\n2\n", "\ntwo-by-agent\n"));
    const [change] = await branch.recordedChanges();
    expect(await text(change, "base")).toBe(NUMBERS);
    expect(await branch.diff()).not.toContain("19");
  });
});

describe("recorded base through the file door", () => {
  it("takes the version the agent read as the base of a later write", async () => {
    f = await setup((root) => writeFileSync(join(root, "f.txt"), NUMBERS));
    const branch = await f.fork();
    const files = branch.files(rules);
    const seen = (await files.readText("f.txt")) ?? "";
    // the user edits line 19 after the agent read the file; the agent then writes the whole file
    writeFileSync(join(f.root, "f.txt"), NUMBERS.replace("\n19\n", "\nnineteen-by-user\n"));
    await f.rebase();
    await files.write("f.txt", seen.replace("\n2\n", "\ntwo-by-agent\n"));
    const [change] = await branch.recordedChanges();
    expect(await text(change, "base")).toBe(NUMBERS);
    expect(await branch.diff()).not.toContain("19");
    // the same once written into the branch's layer
    await branch.materialize();
    const [after] = await branch.recordedChanges();
    expect(await text(after, "base")).toBe(NUMBERS);
  });

  it("records every file below a folder the agent deletes, and keeps its base files private", async () => {
    f = await setup();
    const branch = await f.fork();
    await branch.files(rules).remove("billing");
    const changes = await branch.recordedChanges();
    expect(changes.length).toBeGreaterThan(1);
    for (const change of changes) {
      expect(change.path.startsWith("billing/")).toBe(true);
      expect(change.branch.kind).toBe("absent");
      expect(change.base.kind).toBe("file");
    }
    const index = join(branch.dir, "base", "index.json");
    expect(statSync(index).mode & 0o777).toBe(0o600);
    expect(statSync(join(branch.dir, "base", "objects")).mode & 0o777).toBe(0o700);
  });

  it("records odd names like any other: a file named __proto__ or constructor", async () => {
    f = await setup((root) => {
      writeFileSync(join(root, "__proto__"), "one\n");
      writeFileSync(join(root, "constructor"), "two\n");
    });
    const branch = await f.fork();
    await run(branch, "sh", ["-c", "echo agent >> __proto__; echo agent >> constructor"]);
    const changes = await branch.recordedChanges();
    expect(changes.map((change) => change.path)).toEqual(["__proto__", "constructor"]);
    expect(await text(changes[0], "base")).toBe("one\n");
    // and again once the record is read back from disk
    const again = await openBranch(f.root, branch.id, { env: f.env });
    expect(await text((await again.recordedChanges())[1], "base")).toBe("two\n");
    await again.close();
  });
});
