import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

const SHADOW = join(import.meta.dirname, "..", "..", "dist", "shadow", "index.js");

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  home = await tempDir("busy-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

describe("umbra shadow apply of a branch another process still works in", () => {
  it("is refused with exit status 2, and the branch and the folder are left as they are", async () => {
    // a process that owns a branch with a change and keeps running (as an agent session does)
    const script = `const { fork } = await import(${JSON.stringify(SHADOW)});
const branch = await fork(process.argv[1], { env: process.env });
branch.write("billing/NOTES.md", "half done\\n");
await branch.materialize();
console.log(branch.id);
setInterval(() => {}, 1000);`;
    const owner = spawn(process.execPath, ["--input-type=module", "-e", script, root], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const id = await new Promise<string>((resolve) => {
        owner.stdout.setEncoding("utf8");
        let out = "";
        owner.stdout.on("data", (chunk: string) => {
          out += chunk;
          if (out.includes("\n")) resolve(out.trim());
        });
      });
      const before = await fingerprint(root);
      for (const command of [["apply"], ["rebase"]]) {
        const run = umbraSync(env, ["shadow", ...command, id, "--root", root]);
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(`is in use by process ${owner.pid}`);
      }
      expect(await fingerprint(root)).toBe(before);
      // reading it is fine, and does not take it from its owner
      const diff = umbraSync(env, ["shadow", "diff", id, "--root", root]);
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toContain("+half done");
      const list = umbraSync(env, ["shadow", "list", "--root", root, "--json"]);
      expect(JSON.parse(list.stdout)).toMatchObject([{ id, ownerPid: owner.pid, ownerAlive: true }]);
    } finally {
      owner.kill("SIGKILL");
    }
  });
});
