/**
 * Hidden paths at any count and with any name: more than the helper's old limit of 4,096 are all
 * unreadable, in a folder replaced by a tmpfs of its other entries and in folders hidden entry by
 * entry; a name with a newline, or a folder named `__proto__`, hides like any other and does not stop
 * later runs; a command cannot unhide what is hidden.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxPolicy } from "../../src/sandbox/types.js";
import { type Branch, fork } from "../../src/shadow/index.js";
import { requireBuiltCli, umbraAsync } from "../helpers/cli.js";
import { ensureHelper, makeFixture, type SandboxFixture, settled, sh, snapshot } from "./helpers.js";

const MASKED = 5000; // one folder, far more hidden entries than others: one tmpfs
const SPREAD = 41; // folders of 100 hidden and 100 other entries each: one mount per hidden entry
const ODD = "odd\nname.pem";
const SECRET = "SECRET-CONTENT";

let f: SandboxFixture;
let hidden: string[];

/** The policy of the fixture with `paths` hidden as well, and time for a loaded machine. */
function policyHiding(paths: string[]): SandboxPolicy {
  return {
    ...f.policy,
    hiddenPaths: [...f.policy.hiddenPaths, ...paths].sort(),
    limits: { ...f.policy.limits, timeoutMs: 120_000 },
  };
}

beforeAll(async () => {
  ensureHelper();
  f = await makeFixture();
  hidden = [];
  mkdirSync(join(f.ws, "data", "sub"), { recursive: true });
  writeFileSync(join(f.ws, "data", "keep.txt"), "keep\n");
  symlinkSync("keep.txt", join(f.ws, "data", "link"));
  for (let i = 0; i < MASKED; i++) {
    const path = join(f.ws, "data", `h${i}.csv`);
    writeFileSync(path, `${SECRET} ${i}\n`);
    hidden.push(path);
  }
  writeFileSync(join(f.ws, "data", ODD), `${SECRET} odd\n`);
  hidden.push(join(f.ws, "data", ODD));
  for (let d = 0; d < SPREAD; d++) {
    const dir = join(f.ws, "spread", `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 100; i++) {
      writeFileSync(join(dir, `v${i}.txt`), "visible\n");
      writeFileSync(join(dir, `h${i}.pem`), `${SECRET} ${d}/${i}\n`);
      hidden.push(join(dir, `h${i}.pem`));
    }
  }
  writeFileSync(join(f.ws, ODD), `${SECRET} top\n`);
  hidden.push(join(f.ws, ODD));
}, 120_000);

afterAll(async () => {
  await f?.done();
});

/** Python that tries to read every path of the list given on stdin (NUL-separated) and prints how many
 * it could open, and any secret it saw. */
const TRY_ALL = `
import sys
paths = sys.stdin.buffer.read().split(b"\\0")[:-1]
opened = 0
for p in paths:
    try:
        with open(p, "rb") as fh:
            data = fh.read()
        opened += 1
        if b"${SECRET}" in data: print("LEAK", p)
    except OSError:
        pass
print("tried", len(paths), "opened", opened)
`;

describe("more hidden files than the old limit", () => {
  it("hides all of them, and the command runs", async () => {
    expect(hidden.length).toBeGreaterThan(9000);
    const r = await sh(policyHiding(hidden), `python3 -c '${TRY_ALL}' && ls data && cat data/link`, {
      input: hidden.map((path) => `${path}\0`).join(""),
    });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`tried ${hidden.length} opened 0`);
    expect(r.stdout).not.toContain("LEAK");
    expect(r.stdout).toContain("keep\n");
    // the masked folder lists only what is not hidden
    expect(r.stdout).toMatch(/^keep\.txt\nlink\nsub\n/m);
    expect(r.stdout).not.toMatch(/h\d+\.csv/);
  }, 180_000);

  it("masks a folder of 5,000 hidden files with a handful of mounts, not one per file", async () => {
    const masked = hidden.filter((path) => path.startsWith(join(f.ws, "data")));
    const count = "grep -c . /proc/self/mountinfo";
    const none = await sh(f.policy, count);
    const many = await sh(policyHiding(masked), count);
    expect(many.exitCode).toBe(0);
    // the tmpfs and the two entries bound back (the link is copied); twice: the workspace lies in /tmp,
    // and the sandbox's private /tmp carries it over
    expect(Number(many.stdout) - Number(none.stdout)).toBeLessThanOrEqual(6);
  }, 180_000);

  it("keeps the other entries of a masked folder writable in place, and its list read-only", async () => {
    const r = await sh(
      policyHiding(hidden),
      [
        "echo changed > data/keep.txt",
        "echo made > data/sub/new.txt",
        "echo v2 > spread/d0/v0.txt",
        "echo forged > data/h1.csv && echo forged-created",
        "echo forged > data/extra.txt && echo extra-created",
        "true",
      ].join("; "),
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain("created");
    expect(readFileSync(join(f.ws, "data", "keep.txt"), "utf8")).toBe("changed\n");
    expect(readFileSync(join(f.ws, "data", "sub", "new.txt"), "utf8")).toBe("made\n");
    expect(readFileSync(join(f.ws, "spread", "d0", "v0.txt"), "utf8")).toBe("v2\n");
    expect(readFileSync(join(f.ws, "data", "h1.csv"), "utf8")).toBe(`${SECRET} 1\n`);
  }, 180_000);
});

describe("the workspace root", () => {
  it("keeps its own list of entries writable beside a few hundred hidden files", async () => {
    const root = Array.from({ length: 300 }, (_, i) => join(f.ws, `root${i}.pem`));
    for (const path of root) writeFileSync(path, `${SECRET} root\n`);
    const r = await sh(policyHiding(root), "echo made > made.txt && cat root1.pem; cat made.txt");
    expect(r.stdout).toBe("made\n");
    expect(r.stderr).toMatch(/root1\.pem: Permission denied/);
    expect(readFileSync(join(f.ws, "made.txt"), "utf8")).toBe("made\n");
  }, 180_000);
});

describe("a command cannot unhide", () => {
  it("by renaming, unlinking, moving the folder or mounting", async () => {
    const before = await snapshot(join(f.ws, "spread", "d1"));
    const attempts = [
      // the folder replaced by a tmpfs
      "mv data/h2.csv data/h2.txt",
      "rm -f data/h2.csv",
      "mv data data-moved",
      "umount data",
      "umount -l data",
      "mount --bind /tmp data",
      // entry-by-entry folder
      "mv spread/d1/h3.pem spread/d1/h3.txt",
      "rm -f spread/d1/h3.pem",
      "umount spread/d1/h3.pem",
      "umount -l spread/d1/h3.pem",
      "mv spread/d1 spread/moved && cat spread/moved/h3.pem",
      "mv spread/moved spread/d1",
      "cat data/h2.csv data/h2.txt data-moved/h2.csv spread/d1/h3.pem spread/d1/h3.txt",
      `cat "${ODD}"`,
    ];
    const r = await sh(policyHiding(hidden), `${attempts.join("; ")}; true`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(readFileSync(join(f.ws, "data", "h2.csv"), "utf8")).toBe(`${SECRET} 2\n`);
    expect(await snapshot(join(f.ws, "spread", "d1"))).toBe(before);
  }, 180_000);
});

describe("in a shadow branch", () => {
  let branch: Branch;

  beforeAll(async () => {
    const env = {
      ...process.env,
      UMBRA_HOME: join(f.base, "data-home"),
      XDG_CONFIG_HOME: join(f.base, "config"),
    };
    branch = await fork(f.ws, { env });
  });

  afterAll(async () => {
    await branch?.discard();
  });

  it("hides them there too, and a write at a hidden path is not the secret", async () => {
    const r = await sh(
      policyHiding(hidden),
      `python3 -c '${TRY_ALL}'; echo x > data/h3.csv; cat data/h3.csv`,
      {
        branch,
        input: hidden.map((path) => `${path}\0`).join(""),
      },
    );
    expect(r.stdout).toContain(`tried ${hidden.length} opened 0`);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(readFileSync(join(f.ws, "data", "h3.csv"), "utf8")).toBe(`${SECRET} 3\n`);
  }, 180_000);
});

describe("umbra run with odd names in .umbraignore matches", () => {
  it("hides a file whose name holds a newline, or in a folder named `__proto__`, run after run", async () => {
    requireBuiltCli();
    writeFileSync(join(f.ws, ".umbraignore"), "secret.env\nsecrets/\n*.pem\ndata/*.csv\n");
    // a folder named like a member of Object.prototype: the walk once dropped it, and its matches with it
    for (const folder of ["__proto__", "constructor"]) {
      mkdirSync(join(f.ws, folder), { recursive: true });
      writeFileSync(join(f.ws, folder, "key.pem"), `${SECRET} ${folder}\n`);
    }
    const env = {
      ...process.env,
      UMBRA_HOME: join(f.base, "cli-home"),
      XDG_CONFIG_HOME: join(f.base, "config"),
    };
    for (let run = 0; run < 2; run++) {
      const r = await umbraAsync(env, [
        "run",
        "--root",
        f.ws,
        "--",
        "sh",
        "-c",
        `cat "${ODD}" data/h0.csv __proto__/key.pem constructor/key.pem; echo ran`,
      ]);
      expect(r.stdout).toContain("ran");
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(r.stderr).not.toContain("bad sandbox policy");
    }
  }, 240_000);

  it("hides a file that matches after the walk was cached, and shows a new visible one", async () => {
    requireBuiltCli();
    const env = {
      ...process.env,
      UMBRA_HOME: join(f.base, "cache-home"),
      XDG_CONFIG_HOME: join(f.base, "config"),
    };
    const run = (script: string) => umbraAsync(env, ["run", "--root", f.ws, "--", "sh", "-c", script]);
    expect((await run("ls data | grep -c csv; true")).stdout).toBe("0\n");
    writeFileSync(join(f.ws, "data", "late.csv"), `${SECRET} late\n`);
    writeFileSync(join(f.ws, "data", "late.txt"), "visible late\n");
    // once the folder's stamp is old enough to be trusted, only the stamp can tell the walk
    await settled(join(f.ws, "data"));
    const r = await run("cat data/late.csv; cat data/late.txt; ls data | grep -c csv; true");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout).toBe("visible late\n0\n");
  }, 240_000);
});
