/**
 * Masked folders mean the same to every reader of a policy: the helper's list (what stays visible, never
 * the hidden entries), explain's verdicts, the Seatbelt profile and the agent's file tools.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessRulesFor } from "../../src/agent/tools/files.js";
import { deniedBy } from "../../src/sandbox/explain.js";
import { compactHidden, hiddenRootOf } from "../../src/sandbox/hidden-masks.js";
import { hiddenPathList } from "../../src/sandbox/linux.js";
import { DEFAULT_LIMITS } from "../../src/sandbox/policy.js";
import { checkPolicy } from "../../src/sandbox/run.js";
import { seatbeltProfile } from "../../src/sandbox/seatbelt.js";
import type { SandboxPolicy } from "../../src/sandbox/types.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let base: string;
let ws: string;

function policy(overrides: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    mode: "workspace-write",
    workspace: ws,
    writableRoots: [ws],
    hiddenPaths: [],
    hiddenMasks: [{ folder: join(ws, "data"), keep: ["README.md", "sub"] }],
    protectedPaths: [],
    network: false,
    envAllowlist: ["PATH"],
    limits: { ...DEFAULT_LIMITS },
    ...overrides,
  };
}

beforeAll(async () => {
  base = await realpath(await tempDir("masks"));
  ws = join(base, "ws");
  mkdirSync(join(ws, "data", "sub"), { recursive: true });
  mkdirSync(join(ws, "many"));
  writeFileSync(join(ws, "data", "README.md"), "about\n");
  writeFileSync(join(ws, "data", "a.csv"), "secret\n");
  writeFileSync(join(ws, "data", "b.csv"), "secret\n");
  writeFileSync(join(ws, "many", "kept.txt"), "visible\n");
  symlinkSync("kept.txt", join(ws, "many", "link"));
  for (let i = 0; i < 20; i++) writeFileSync(join(ws, "many", `h${i}.pem`), "secret\n");
});
afterAll(async () => {
  await cleanup(base);
});

describe("hiddenRootOf", () => {
  it("hides every entry of a masked folder and what lies below it, but the kept ones", () => {
    const p = policy({ hiddenPaths: [join(ws, "data", "sub", "key.pem")] });
    expect(hiddenRootOf(p, join(ws, "data", "a.csv"))).toBe(join(ws, "data", "a.csv"));
    expect(hiddenRootOf(p, join(ws, "data", "new", "deep.txt"))).toBe(join(ws, "data", "new"));
    expect(hiddenRootOf(p, join(ws, "data", "README.md"))).toBeUndefined();
    expect(hiddenRootOf(p, join(ws, "data", "sub", "x.txt"))).toBeUndefined();
    expect(hiddenRootOf(p, join(ws, "data", "sub", "key.pem"))).toBe(join(ws, "data", "sub", "key.pem"));
    expect(hiddenRootOf(p, join(ws, "data"))).toBeUndefined();
    expect(hiddenRootOf(p, join(ws, "database"))).toBeUndefined();
  });

  it("is what explain reports", () => {
    expect(deniedBy(policy(), join(ws, "data", "b.csv"), "any")).toEqual({
      rule: "hidden-path",
      root: join(ws, "data", "b.csv"),
    });
    expect(deniedBy(policy(), join(ws, "data", "README.md"), "any")).toBeUndefined();
  });
});

describe("the helper's list", () => {
  it("carries a mask as its kept names and a folder of many listed paths as a mask", () => {
    const many = Array.from({ length: 20 }, (_, i) => join(ws, "many", `h${i}.pem`));
    const p = policy({ hiddenPaths: [join(ws, "alone.env"), ...many].sort() });
    expect(compactHidden(p)).toEqual({
      paths: [join(ws, "alone.env")],
      masks: [
        { folder: join(ws, "data"), keep: ["README.md", "sub"] },
        { folder: join(ws, "many"), keep: ["kept.txt", "link"] },
      ],
    });
    const records = hiddenPathList(p).toString().split("\0");
    expect(records).toEqual([
      `m${join(ws, "data")}`,
      "kREADME.md",
      "ksub",
      `m${join(ws, "many")}`,
      "kkept.txt",
      "klink",
      `h${join(ws, "alone.env")}`,
      "",
    ]);
  });

  it("leaves a folder with few listed paths, or with more other entries, entry by entry", () => {
    const few = [join(ws, "many", "h1.pem"), join(ws, "many", "h2.pem")];
    expect(compactHidden(policy({ hiddenPaths: few, hiddenMasks: [] })).paths).toEqual(few);
    // a writable root is masked only past thousands of entries
    const atRoot = Array.from({ length: 20 }, (_, i) => join(ws, `r${i}.pem`));
    expect(compactHidden(policy({ hiddenPaths: atRoot, hiddenMasks: [] })).masks).toEqual([]);
  });

  it("refuses a mask that is not a normal folder or keeps what is not a name", () => {
    for (const mask of [
      { folder: "/", keep: [] },
      { folder: "relative/data", keep: [] },
      { folder: join(ws, "data"), keep: ["a/b"] },
      { folder: join(ws, "data"), keep: [".."] },
      { folder: join(ws, "data"), keep: ["a\0b"] },
    ]) {
      expect(() => checkPolicy(policy({ hiddenMasks: [mask] }))).toThrow(/bad sandbox policy/);
    }
    expect(() =>
      checkPolicy(policy({ hiddenMasks: [{ folder: join(ws, "data"), keep: ["odd\nname"] }] })),
    ).not.toThrow();
  });
});

describe("the Seatbelt profile", () => {
  it("denies everything below a masked folder but its kept entries, and writes to its list", () => {
    const profile = seatbeltProfile(policy());
    const data = join(ws, "data");
    expect(profile).toContain(
      `(require-all (subpath "${data}") (require-not (literal "${data}")) (require-not (subpath "${data}/README.md")) (require-not (subpath "${data}/sub")))`,
    );
    const writes = profile.slice(profile.lastIndexOf("(deny file-write*"));
    expect(writes).toContain(`(literal "${data}")`);
  });
});

describe("the agent's file tools", () => {
  it("refuse what a masked folder hides now", () => {
    const rules = accessRulesFor(policy(), ws);
    expect([...rules.hidden].sort()).toEqual(["data/a.csv", "data/b.csv"]);
  });
});
