import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type BranchMode, listBranches, openBranch, run } from "../../src/shadow/index.js";
import { type Fixture, setup } from "./helpers.js";

let fixture: Fixture | undefined;

afterEach(async () => {
  await fixture?.done();
  fixture = undefined;
});

/** Forces `shadow.mode` through the user's configuration file (XDG_CONFIG_HOME/umbra/config.json). */
function configure(f: Fixture, mode: string): void {
  const dir = join(f.home, "config", "umbra");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ shadow: { mode } }));
}

describe("modes", () => {
  it("auto picks kernel overlayfs here", async () => {
    fixture = await setup();
    const branch = await fixture.fork();
    expect(branch.mode).toBe("overlay");
    expect(branch.warning).toBeUndefined();
  });

  const forced: { mode: BranchMode; warning: RegExp | undefined; layer: string }[] = [
    { mode: "fuse-overlayfs", warning: undefined, layer: "upper" },
    // ext4 cannot clone: a forced reflink mode says it falls back to a full copy
    { mode: "reflink", warning: /reflink copies are not possible.*full copy|^$/, layer: "tree" },
    { mode: "copy", warning: /full copy of the workspace/, layer: "tree" },
  ];

  for (const { mode, warning, layer } of forced) {
    it(`works when forced to ${mode} through the configuration`, async () => {
      const f = await setup();
      fixture = f;
      configure(f, mode);
      const branch = await f.fork();
      expect(branch.mode).toBe(mode);
      if (warning) expect(branch.warning ?? "").toMatch(warning);
      else expect(branch.warning).toBeUndefined();
      expect(existsSync(join(branch.dir, layer))).toBe(true);
      const view = await branch.sandboxView();
      if (view.kind === "join") {
        expect(layer).toBe("upper");
        expect(readFileSync(`/proc/${view.pid}/mountinfo`, "utf8")).toContain(` ${f.root} `);
      } else {
        expect(view).toEqual({ kind: "bind", source: join(branch.dir, "tree"), root: f.root });
      }
      const result = await run(branch, "sh", [
        "-c",
        "pwd; rm billing/tax.ts; rm -rf inventory && mkdir inventory && echo 'y = 2' > inventory/new.py; echo out > out.txt; cat README.md | head -1",
      ]);
      expect(result.stderr).toBe("");
      const lines = result.stdout.split("\n");
      expect(lines[0]).toBe(f.root);
      expect(lines[1]).toBe(readFileSync(join(f.root, "README.md"), "utf8").split("\n")[0]);
      expect(existsSync(join(f.root, "out.txt"))).toBe(false);
      expect(await branch.readText("out.txt")).toBe("out\n");
      expect(await branch.read("billing/tax.ts")).toBeUndefined();
      expect(await branch.read("inventory/stock.py")).toBeUndefined();
      expect((await branch.readdir("inventory"))?.map((e) => e.name)).toEqual(["new.py"]);
      branch.write("README.md", "override\n");
      expect(await branch.changes()).toEqual([
        { path: "README.md", kind: "modified" },
        { path: "billing/tax.ts", kind: "deleted" },
        { path: "inventory/__init__.py", kind: "deleted" },
        { path: "inventory/new.py", kind: "added" },
        { path: "inventory/stock.py", kind: "deleted" },
        { path: "out.txt", kind: "added" },
      ]);
      const patch = await branch.diff();
      expect(patch).toContain("deleted file mode 100644");
      expect(patch).toContain("+override");
      await branch.materialize();
      expect((await run(branch, "cat", ["README.md"])).stdout).toBe("override\n");
      expect(readFileSync(join(f.root, "README.md"), "utf8")).not.toBe("override\n");
      // reopened from disk, the branch keeps its mode and content
      const again = await openBranch(f.root, branch.id, { env: f.env });
      expect(again.mode).toBe(mode);
      expect(await again.readText("out.txt")).toBe("out\n");
      expect((await listBranches(f.root, { env: f.env })).map((b) => b.mode)).toEqual([mode]);
      await branch.discard();
      expect(existsSync(branch.dir)).toBe(false);
    });
  }
});
