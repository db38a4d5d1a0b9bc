/**
 * Ordinary work inside the sandbox: real tools run, the workspace is writable in workspace-write mode,
 * and a branch run writes only to the branch.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/sandbox/run.js";
import { type Branch, fork } from "../../src/shadow/index.js";
import { ensureHelper, makeFixture, type SandboxFixture, sh, snapshot } from "./helpers.js";

let f: SandboxFixture;
const hasPytest = spawnSync("pytest", ["--version"], { stdio: "ignore" }).status === 0;

beforeAll(async () => {
  ensureHelper();
  f = await makeFixture();
  // A tiny real project with a node --test suite and no dependencies.
  writeFileSync(
    join(f.ws, "package.json"),
    JSON.stringify({
      name: "tiny",
      version: "1.0.0",
      type: "module",
      scripts: { test: "node --test test/" },
    }),
  );
  mkdirSync(join(f.ws, "test"));
  writeFileSync(join(f.ws, "sum.js"), "export const sum = (a, b) => a + b;\n");
  writeFileSync(
    join(f.ws, "test", "sum.test.js"),
    'import test from "node:test";\nimport assert from "node:assert";\nimport { sum } from "../sum.js";\ntest("sum", () => assert.equal(sum(2, 3), 5));\n',
  );
});

afterAll(async () => {
  await f?.done();
});

describe("ordinary work", () => {
  it("runs npm test of a small project", async () => {
    const r = await runSandboxed(f.policy, "npm", ["test"]);
    expect(r.stderr + r.stdout).toMatch(/# pass 1/);
    expect(r.exitCode).toBe(0);
  });

  it("runs node and python3", async () => {
    const node = await runSandboxed(f.policy, "node", ["-e", "console.log(process.version, 6 * 7)"]);
    expect(node.stdout).toContain("42");
    const py = await runSandboxed(f.policy, "python3", ["-c", "print(sum(range(10)))"]);
    expect(py.stdout.trim()).toBe("45");
  });

  it("runs a test suite that serves on 127.0.0.1 and ::1 without network access", async () => {
    mkdirSync(join(f.ws, "loopback"));
    writeFileSync(
      join(f.ws, "loopback", "serve.test.js"),
      [
        'import test from "node:test";',
        'import assert from "node:assert";',
        'import { createServer } from "node:http";',
        'test("serves and fetches on the loopback", async () => {',
        '  for (const host of ["127.0.0.1", "::1"]) {',
        '    const server = createServer((_, res) => res.end("pong"));',
        "    await new Promise((ready) => server.listen(0, host, ready));",
        '    const name = host.includes(":") ? "[" + host + "]" : host;',
        '    const url = "http://" + name + ":" + server.address().port + "/";',
        "    assert.equal(await (await fetch(url)).text(), 'pong');",
        "    server.close();",
        "  }",
        "});",
      ].join("\n"),
    );
    const r = await runSandboxed(f.policy, "node", ["--test", "loopback/"]);
    expect(r.stdout, r.stderr).toMatch(/# pass 1\n/);
    expect(r.exitCode).toBe(0);
    expect(r.denials).toEqual([]);
  });

  it.skipIf(!hasPytest)(
    "runs a pytest suite whose tests open a local server, without network access",
    async () => {
      writeFileSync(
        join(f.ws, "test_server.py"),
        [
          "import http.server, threading, urllib.request",
          "",
          "def test_local_server():",
          '    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)',
          "    threading.Thread(target=server.serve_forever, daemon=True).start()",
          "    try:",
          '        with urllib.request.urlopen(f"http://localhost:{server.server_port}/a.txt") as reply:',
          '            assert reply.read() == b"hello\\n"',
          "    finally:",
          "        server.shutdown()",
        ].join("\n"),
      );
      const r = await runSandboxed(f.policy, "pytest", ["-q", "-p", "no:cacheprovider", "test_server.py"]);
      expect(r.stdout, r.stderr).toMatch(/1 passed/);
      expect(r.exitCode).toBe(0);
    },
  );

  it("runs git status and git diff", async () => {
    writeFileSync(join(f.ws, "a.txt"), "hello\nworld\n");
    const r = await sh(f.policy, "git status --short a.txt && git diff --stat");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(" M a.txt");
    expect(r.stdout).toContain("1 insertion");
    writeFileSync(join(f.ws, "a.txt"), "hello\n");
  });

  it("writes /tmp privately", async () => {
    const r = await sh(
      f.policy,
      "echo scratch > /tmp/scratch.txt && cat /tmp/scratch.txt && mkdir -p /tmp/a/b && ls /tmp",
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("scratch");
  });

  it("writes the workspace in workspace-write mode", async () => {
    const r = await sh(
      f.policy,
      "echo made > made.txt && mkdir -p sub/dir && echo x > sub/dir/y && rm made.txt && echo again > made.txt",
    );
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(f.ws, "made.txt"), "utf8")).toBe("again\n");
  });

  it("writes nothing in read-only mode", async () => {
    const before = await snapshot(f.ws);
    const policy = { ...f.policy, mode: "read-only" as const, writableRoots: [] };
    const r = await sh(policy, "cat a.txt; echo x > a.txt");
    expect(r.stdout).toBe("hello\n");
    expect(r.exitCode).not.toBe(0);
    expect(await snapshot(f.ws)).toBe(before);
  });

  it("passes stdin, reports the exit status and truncates long output", async () => {
    const r = await runSandboxed(f.policy, "sh", ["-c", "cat; exit 3"], { input: "from stdin" });
    expect(r.stdout).toBe("from stdin");
    expect(r.exitCode).toBe(3);
    const small = { ...f.policy, limits: { ...f.policy.limits, outputBytes: 1000 } };
    const big = await sh(small, "head -c 100000 /dev/zero | tr '\\0' a");
    expect(big.outputTruncated).toBe(true);
    expect(big.stdout.length).toBe(1000);
  });
});

describe("in a shadow branch", () => {
  let branch: Branch;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = { ...process.env, UMBRA_HOME: join(f.base, "data"), XDG_CONFIG_HOME: join(f.base, "config") };
    branch = await fork(f.ws, { env });
  });

  afterAll(async () => {
    await branch?.discard();
  });

  it("writes only the branch, and git commits there", async () => {
    const before = await snapshot(f.ws);
    const r = await sh(
      f.policy,
      "echo branch > a.txt && echo new > b.txt && git add a.txt b.txt && git -c user.name=t -c user.email=t@t commit -qm 'in branch' && git log --oneline | head -1 && git status --short",
      { branch },
    );
    // git only warns that it cannot look into the hidden folder
    expect(r.stderr.replace(/warning: could not open directory 'secrets\/': Permission denied\n/g, "")).toBe(
      "",
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("in branch");
    expect(await snapshot(f.ws)).toBe(before);
    expect(await branch.readText("a.txt")).toBe("branch\n");
    expect(await branch.readText("b.txt")).toBe("new\n");
    const hidden = await sh(f.policy, "cat secret.env", { branch });
    expect(hidden.stdout).not.toContain("top-secret");
  });
});
