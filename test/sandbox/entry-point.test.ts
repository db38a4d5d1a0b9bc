import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { backendFor, runSandboxed, SandboxError } from "../../src/sandbox/run.js";
import { openSandbox } from "../../src/sandbox/sandbox.js";
import type { Branch } from "../../src/shadow/branch.js";
import { defaultPolicy } from "./helpers.js";

const SRC = join(import.meta.dirname, "..", "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

/** A branch shown the way the caller says (the sandbox only asks it for its view). */
function branchShown(view: Awaited<ReturnType<Branch["sandboxView"]>>): Branch {
  return { sandboxView: async () => view } as unknown as Branch;
}

describe("the backend", () => {
  it("is Seatbelt on macOS and the Linux helper elsewhere, for every caller; none only when asked", () => {
    expect(backendFor({}, "darwin")).toBe("seatbelt");
    expect(backendFor({}, "linux")).toBe("linux");
    expect(backendFor({}, "freebsd")).toBe("linux");
    expect(backendFor({ unsandboxed: true }, "darwin")).toBe("none");
    expect(backendFor({ unsandboxed: true }, "linux")).toBe("none");
  });

  it("every caller reaches the sandbox through openSandbox: no second copy of the policy and run plumbing", () => {
    const callers: Record<string, string[]> = {};
    for (const file of sources(SRC)) {
      const code = readFileSync(file, "utf8").replace(/^\s*(\/\/|\/?\*).*$/gm, "");
      for (const name of ["resolvePolicy", "runSandboxed", "prepareSandbox", "seatbeltProfile"])
        if (code.includes(`${name}(`)) callers[name] = [...(callers[name] ?? []), relative(SRC, file)];
    }
    for (const list of Object.values(callers)) list.sort();
    expect(callers.resolvePolicy).toEqual(["sandbox/policy.ts", "sandbox/sandbox.ts"]);
    expect(callers.runSandboxed).toEqual(["sandbox/run.ts", "sandbox/sandbox.ts"]);
    expect(callers.prepareSandbox).toEqual(["sandbox/run.ts", "sandbox/sandbox.ts"]);
    expect(callers.seatbeltProfile).toEqual(["sandbox/run.ts", "sandbox/seatbelt.ts"]);
  });
});

describe("the Seatbelt backend (a stand-in sandbox-exec that records its profile, then runs the command)", () => {
  let base: string;
  let ws: string;
  let fake: string;
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-seatbelt-")));
    ws = join(base, "ws");
    mkdirSync(ws);
    fake = join(base, "sandbox-exec");
    writeFileSync(
      fake,
      `#!/bin/sh\n[ "$1" = -p ] && [ "$3" = -- ] || exit 99\nprintf %s "$2" > ${base}/profile\nshift 3\nexec "$@"\n`,
    );
    chmodSync(fake, 0o755);
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const options = () => ({ backend: "seatbelt" as const, sandboxExec: fake });

  it("runs the command under the policy's profile, with the environment filtered, and returns the typed notes", async () => {
    const policy = defaultPolicy(ws);
    const result = await runSandboxed(
      policy,
      "sh",
      [
        "-c",
        'pwd; echo "token=$UMBRA_TEST_TOKEN"; echo "sh: 1: cannot create /etc/umbra-x: Operation not permitted" >&2; exit 2',
      ],
      { ...options(), env: { PATH: process.env.PATH ?? "/usr/bin:/bin", UMBRA_TEST_TOKEN: "s3cret" } },
    );
    expect(result.stdout).toBe(`${ws}\ntoken=\n`);
    expect(result.exitCode).toBe(2);
    const profile = readFileSync(join(base, "profile"), "utf8");
    expect(profile).toContain("(deny default)");
    expect(profile).toContain(`(subpath "${ws}")`);
    expect(result.notes.map((note) => note.rule)).toContain("outside-writable-roots");
  });

  it("shows a branch kept at its own path there, the policy's paths moved along", async () => {
    const copy = join(base, "copy");
    mkdirSync(copy, { recursive: true });
    const result = await runSandboxed(defaultPolicy(ws), "pwd", [], {
      ...options(),
      branch: branchShown({ kind: "path", path: copy, root: ws }),
    });
    expect(result.stdout).toBe(`${copy}\n`);
    const profile = readFileSync(join(base, "profile"), "utf8");
    expect(profile).toContain(`(subpath "${copy}")`);
    expect(profile).not.toContain(`(subpath "${ws}")`);
  });

  it("refuses a branch that only mounts can show, rather than running in the user's folder", async () => {
    const error = await runSandboxed(defaultPolicy(ws), "true", [], {
      ...options(),
      branch: branchShown({ kind: "join", pid: process.pid, root: ws }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).code).toBe("UNSUPPORTED");
  });
});

describe("without a sandbox", () => {
  it("never runs in a branch: the branch is shown by the sandbox, the user's folder would be changed", async () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), "umbra-plain-")));
    try {
      const error = await runSandboxed(defaultPolicy(ws), "touch", [join(ws, "x")], {
        unsandboxed: true,
        branch: branchShown({ kind: "path", path: ws, root: ws }),
      }).catch((e: unknown) => e);
      expect((error as SandboxError).code).toBe("UNSUPPORTED");
      expect(readdirSync(ws)).toEqual([]);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});

describe("the go build cache", () => {
  it("is the user's when it exists and is allowed; otherwise (go fails without one) a private one", async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-gocache-")));
    try {
      const ws = join(base, "ws");
      mkdirSync(ws);
      const env = { PATH: process.env.PATH ?? "", HOME: join(base, "home"), UMBRA_HOME: join(base, "data") };
      const config = (caches: string[]) =>
        loadConfig({ env: { XDG_CONFIG_HOME: join(base, "no-config") }, flags: { sandbox: { caches } } });
      const absent = await openSandbox({ workspace: ws, config: config(["go"]), env, admin: {} });
      expect(absent.env.GOCACHE).toBe("/tmp/umbra-go-build");
      expect(existsSync(join(base, "home"))).toBe(false);
      mkdirSync(join(base, "home", ".cache", "go-build"), { recursive: true });
      const allowed = await openSandbox({ workspace: ws, config: config(["go"]), env, admin: {} });
      expect(allowed.policy.writableRoots).toContain(join(base, "home", ".cache", "go-build"));
      expect(allowed.env.GOCACHE).toBeUndefined();
      const refused = await openSandbox({ workspace: ws, config: config([]), env, admin: {} });
      expect(refused.env.GOCACHE).toBe("/tmp/umbra-go-build");
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
