import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fork, gc, listBranches, openBranch, removeBranch, run } from "../../src/shadow/index.js";
import { type Fixture, setup } from "./helpers.js";

let fixture: Fixture | undefined;

afterEach(async () => {
  await fixture?.done();
  fixture = undefined;
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync("true");
  return child.pid ?? 999_999;
}

function editRecord(dir: string, change: Record<string, unknown>): void {
  const file = join(dir, "branch.json");
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), ...change }));
}

describe("branch store", () => {
  it("lists branches with their owner, and gc removes those of dead owners once old enough", async () => {
    const f = await setup();
    fixture = f;
    const live = await f.fork();
    const orphan = await f.fork();
    const young = await f.fork();
    await run(orphan, "sh", ["-c", "echo x > built.txt"]);
    await orphan.close();
    await young.close();
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    editRecord(orphan.dir, { ownerPid: deadPid(), createdAt: hourAgo });
    editRecord(young.dir, { ownerPid: deadPid() });
    const listed = await listBranches(f.root, { env: f.env });
    expect(listed.map((b) => [b.id, b.stale]).sort()).toEqual(
      [
        [live.id, false],
        [orphan.id, true],
        [young.id, true],
      ].sort(),
    );
    const result = await gc(f.root, { env: f.env, maxAgeHours: 0.5 });
    expect(result.removed).toEqual([orphan.id]);
    expect(result.kept.sort()).toEqual([live.id, young.id].sort());
    expect(existsSync(orphan.dir)).toBe(false);
    expect(existsSync(live.dir)).toBe(true);
    // the configured age applies by default (24 h): nothing else goes
    expect((await gc(f.root, { env: f.env })).removed).toEqual([]);
  });

  it("treats a corrupt branch.json as a stale branch: reported, not openable, removable", async () => {
    const f = await setup();
    fixture = f;
    const branch = await f.fork();
    await branch.close();
    writeFileSync(join(branch.dir, "branch.json"), "{ not json");
    const [info] = await listBranches(f.root, { env: f.env });
    expect(info).toMatchObject({ id: branch.id, stale: true, ownerAlive: false });
    expect(info?.problem).toMatch(/not valid JSON/);
    await expect(openBranch(f.root, branch.id, { env: f.env })).rejects.toMatchObject({
      code: "CORRUPT_BRANCH",
    });
    const kept = await gc(f.root, { env: f.env, maxAgeHours: 1 });
    expect(kept.removed).toEqual([]);
    expect(kept.problems[0]).toMatch(new RegExp(`^${branch.id}: .*not valid JSON`));
    await removeBranch(f.root, branch.id, { env: f.env });
    expect(existsSync(branch.dir)).toBe(false);
    const other = await f.fork();
    writeFileSync(join(other.dir, "branch.json"), JSON.stringify({ version: 1, id: other.id }));
    expect((await gc(f.root, { env: f.env, maxAgeHours: 0 })).removed).toEqual([other.id]);
  });
});

describe("errors", () => {
  it("are one-line ShadowErrors with a code", async () => {
    const f = await setup();
    fixture = f;
    await expect(fork(join(f.root, "no-such-dir"), { env: f.env })).rejects.toMatchObject({
      name: "ShadowError",
      code: "WORKSPACE_MISSING",
    });
    await expect(
      fork(f.root, { env: { ...f.env, UMBRA_HOME: join(f.root, ".data") } }),
    ).rejects.toMatchObject({
      code: "DATA_DIR_INSIDE_WORKSPACE",
    });
    expect(existsSync(join(f.root, ".data"))).toBe(false);
    await expect(openBranch(f.root, "nope", { env: f.env })).rejects.toMatchObject({
      code: "BRANCH_NOT_FOUND",
    });
    await expect(openBranch(f.root, "../../etc", { env: f.env })).rejects.toMatchObject({
      code: "BRANCH_NOT_FOUND",
    });
    const saved = process.env.UMBRA_HELPER;
    process.env.UMBRA_HELPER = join(f.home, "missing-helper");
    try {
      const error = await fork(f.root, { env: { ...f.env, UMBRA_HOME: join(f.home, "other") } }).catch(
        (e) => e,
      );
      expect(error).toMatchObject({ code: "HELPER_NOT_BUILT" });
      expect(error.message).toMatch(/run npm run build/);
      expect(error.message).not.toContain("\n");
    } finally {
      if (saved === undefined) delete process.env.UMBRA_HELPER;
      else process.env.UMBRA_HELPER = saved;
    }
  });

  it.skipIf(process.getuid?.() !== 0)(
    "explain EOVERFLOW when a file's owner is not mapped (rootless copy-up)",
    async () => {
      const f = await setup((root) => {
        mkdirSync(join(root, "foreign"));
        // world-writable, so that the write passes the permission check and fails at copy-up
        writeFileSync(join(root, "foreign", "owned.txt"), "someone else's\n", { mode: 0o666 });
        chmodSync(join(root, "foreign", "owned.txt"), 0o666);
        chownSync(join(root, "foreign", "owned.txt"), 12345, 12345);
      });
      fixture = f;
      const branch = await f.fork();
      const result = await run(branch, "sh", ["-c", "echo more >> foreign/owned.txt"]);
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain("Value too large for defined data type");
      expect(result.notes.join(" ")).toMatch(/EOVERFLOW.*not mapped/);
      // an override replaces the file (a new file of the branch, not a copy-up), so it is written
      branch.write("foreign/owned.txt", "mine\n");
      expect(await branch.materialize()).toEqual([]);
      expect((await run(branch, "cat", ["foreign/owned.txt"])).stdout).toBe("mine\n");
      expect((await run(branch, "sh", ["-c", "echo ok > other.txt && cat other.txt"])).stdout).toBe("ok\n");
    },
  );
});
