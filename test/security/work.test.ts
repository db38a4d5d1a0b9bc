import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliOutcome, requireBuiltCli, umbraAsync } from "../helpers/cli.js";

// Ordinary work of real projects, through `umbra run` (the product path), on a machine whose home
// folder has never seen these tools: no ~/.npm, no go build cache, no git identity. The home folder lies
// outside /tmp (the sandbox gives commands a private /tmp, which would hide what is missing).

const has = (command: string, ...args: string[]) =>
  spawnSync(command, args, { stdio: "ignore" }).status === 0;
const hasGo = has("go", "version");
const hasPytest = has("python3", "-m", "pytest", "--version");

let base: string;
let env: NodeJS.ProcessEnv;

function project(name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const run = (dir: string, ...command: string[]): Promise<CliOutcome> =>
  umbraAsync(env, ["run", "--root", dir, "--", ...command]);

beforeAll(() => {
  requireBuiltCli();
  base = realpathSync(mkdtempSync("/var/tmp/umbra-work-"));
  const home = join(base, "home");
  mkdirSync(home);
  env = {
    ...process.env,
    HOME: home,
    UMBRA_HOME: join(base, "data"),
    UMBRA_ADMIN_POLICY: join(base, "none"),
  };
  for (const name of [
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "GOCACHE",
    "GOPATH",
    "GOMODCACHE",
    "npm_config_cache",
  ])
    delete env[name];
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

describe("ordinary work inside the sandbox", () => {
  it("work: git add and commit in a shadow branch; the folder's own history is unchanged", async () => {
    const dir = project("git-project", { "a.txt": "one\n" });
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", dir, "-c", "user.name=u", "-c", "user.email=u@u", ...args], {
        encoding: "utf8",
      });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "first");
    const result = await umbraAsync(env, [
      "run",
      "--root",
      dir,
      "--shadow",
      "--",
      "sh",
      "-c",
      "echo two >> a.txt && git add -A && git -c user.name=a -c user.email=a@a commit -qm agent && git rev-list --count HEAD",
    ]);
    expect(result.stdout, result.stderr).toBe("2\n");
    expect(result.code).toBe(0);
    expect(git("rev-list", "--count", "HEAD")).toBe("1\n");
    expect(git("status", "--porcelain")).toBe("");
  });

  it("work: npm test of a node project", async () => {
    const dir = project("node-project", {
      "package.json": JSON.stringify({ name: "calc", version: "1.0.0", scripts: { test: "node --test" } }),
      "calc.js": "exports.add = (a, b) => a + b;\n",
      "test/calc.test.js":
        'const test = require("node:test");\nconst assert = require("node:assert");\nconst { add } = require("../calc.js");\ntest("adds", () => assert.strictEqual(add(2, 3), 5));\n',
    });
    const result = await run(dir, "npm", "test");
    expect(result.stdout, result.stderr).toMatch(/# pass 1/);
    expect(result.code).toBe(0);
  });

  it.skipIf(!hasPytest)("work: pytest of a python package with a src layout", async () => {
    const dir = project("python-project", {
      "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
      "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
      "tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    });
    const result = await run(dir, "python3", "-m", "pytest", "-q");
    expect(result.stdout, result.stderr).toMatch(/1 passed/);
    expect(result.code).toBe(0);
  });

  it.skipIf(!hasGo)("work: go test of a go module where go never ran (no build cache yet)", async () => {
    const dir = project("go-project", {
      "go.mod": "module example.com/calc\n\ngo 1.19\n",
      "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
      "calc_test.go":
        'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("Add")\n\t}\n}\n',
    });
    const result = await run(dir, "go", "test", "./...");
    expect(result.stdout, result.stderr).toMatch(/^ok\s+example\.com\/calc/m);
    expect(result.code).toBe(0);
  });
});
