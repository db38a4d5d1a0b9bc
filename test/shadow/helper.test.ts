import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../../src/shadow/index.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { ensureHelper, type Fixture, setup } from "./helpers.js";

let fixture: Fixture | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await fixture?.done();
  fixture = undefined;
  await cleanup(...dirs.splice(0));
});

function helper(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(ensureHelper(), args, { encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("umbra-helper", () => {
  it("exits 2 with a one-line message on bad usage", () => {
    for (const args of [
      [],
      ["frobnicate"],
      ["mount-exec"],
      ["mount-exec", "--target", "/tmp", "--mode", "overlay", "--lower", "/tmp", "--", "true"],
      ["mount-exec", "--target", "/tmp", "--mode", "sideways", "--lower", "/tmp", "--", "true"],
      ["mount-exec", "--target", "/tmp", "--mode", "bind", "--lower", "/tmp"],
      ["mount-exec", "--target", "relative", "--join", "1", "--", "true"],
      ["mount-exec", "--target", "/tmp", "--join", "x", "--", "true"],
      ["hold", "--target", "/tmp", "--mode", "bind", "--lower", "/tmp"],
      ["opaque"],
      ["probe", "--bogus"],
    ]) {
      const result = helper(...args);
      expect(result.status, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/^umbra-helper: [^\n]+\n$/);
    }
  });

  it("exits 125 with the reason when a branch cannot be mounted", async () => {
    const dir = await tempDir("helper");
    dirs.push(dir);
    const result = helper(
      "mount-exec",
      ...[
        "--lower",
        dir,
        "--upper",
        join(dir, "missing"),
        "--work",
        dir,
        "--target",
        dir,
        "--mode",
        "overlay",
      ],
      "--",
      "true",
    );
    expect(result.status).toBe(125);
    expect(result.stderr).toMatch(/^umbra-helper: upper .*missing: No such file or directory\n$/);
  });

  it("probes the mount modes", async () => {
    const dir = await tempDir("probe");
    dirs.push(dir);
    const result = helper("probe", "--dir", dir);
    expect(result.status).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(" ")[0])).toEqual(["overlay", "fuse-overlayfs", "bind", "reflink"]);
    expect(lines[0]).toBe("overlay ok");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("mounts a bind copy at the target for one command", async () => {
    const dir = await tempDir("bind");
    dirs.push(dir);
    mkdirSync(join(dir, "copy"));
    mkdirSync(join(dir, "target"));
    writeFileSync(join(dir, "copy", "file"), "from the copy\n");
    const result = helper(
      "mount-exec",
      ...["--mode", "bind", "--lower", join(dir, "copy"), "--target", join(dir, "target")],
      "--",
      "sh",
      "-c",
      "pwd; cat file; echo w > written",
    );
    expect(result).toMatchObject({ status: 0, stderr: "" });
    expect(result.stdout).toBe(`${join(dir, "target")}\nfrom the copy\n`);
    expect(readdirSync(join(dir, "target"))).toEqual([]);
    expect(readdirSync(join(dir, "copy")).sort()).toEqual(["file", "written"]);
  });

  it("reports opaque folders of an upper layer", async () => {
    const f = await setup();
    fixture = f;
    const branch = await f.fork();
    await run(branch, "sh", [
      "-c",
      "rm -rf billing && mkdir billing && echo x >> docs/operations.md && mkdir fresh",
    ]);
    const upper = join(branch.dir, "upper");
    const result = helper(
      "opaque",
      join(upper, "billing"),
      join(upper, "docs"),
      join(upper, "fresh"),
      join(upper, "nope"),
    );
    expect(result).toMatchObject({ status: 0, stdout: `${join(upper, "billing")}\n` });
  });
});
