/**
 * Hidden-file probes in excluded folders: what the .umbraignore / .cursorignore rules match inside
 * node_modules, build output, .vercel or a folder a workspace's config excludes (`index.excludeDirs`)
 * is as hidden from `umbra run` as anywhere else, also when the rule lives in an ignore file there, and
 * also once the policy walk is cached. Each `attack ...` probe is one way to read such a file; `work: ...`
 * probes are ordinary work that must keep working.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let home: string;
let ws: string;
let env: NodeJS.ProcessEnv;

async function put(rel: string, text: string): Promise<void> {
  await mkdir(dirname(join(ws, rel)), { recursive: true });
  await writeFile(join(ws, rel), text);
}

/** `umbra run -- sh -c COMMAND` in the workspace; its output, both streams. */
function run(command: string): string {
  const outcome = umbraSync(env, ["run", "--root", ws, "--", "sh", "-c", command]);
  return outcome.stdout + outcome.stderr;
}

beforeAll(() => requireBuiltCli());
beforeEach(async () => {
  home = await tempDir("hidden-excluded");
  ws = join(home, "ws");
  env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
  await put(".umbraignore", ".env\n*.pem\n");
  await put("src/app.js", "console.log('app');\n");
});
afterEach(async () => {
  await cleanup(home);
});

describe("umbra run: the rules apply inside excluded folders", () => {
  it("attack excluded-dirs: a root rule's match inside node_modules, dist, .vercel", async () => {
    await put("node_modules/pkg/test/key.pem", "SECRET_pem\n");
    await put("dist/.env", "SECRET_dist\n");
    await put(".vercel/.env", "SECRET_vercel\n");
    const files = "node_modules/pkg/test/key.pem dist/.env .vercel/.env";
    for (let round = 0; round < 2; round++) {
      // the second round runs on the cached walk
      const out = run(`cat ${files} 2>&1; true`);
      expect(out).not.toMatch(/SECRET_/);
    }
  });

  it("attack excluded-dirs: an ignore file inside node_modules, also one added after a cached run", async () => {
    await put("node_modules/pkg/.cursorignore", "token.txt\n");
    await put("node_modules/pkg/token.txt", "SECRET_token\n");
    expect(run("cat node_modules/pkg/token.txt 2>&1; true")).not.toMatch(/SECRET_/);
    await put("node_modules/other/deep/.umbraignore", "*.json\n");
    await put("node_modules/other/deep/creds.json", "SECRET_late\n");
    expect(run("cat node_modules/other/deep/creds.json 2>&1; true")).not.toMatch(/SECRET_/);
  });

  it("attack excluded-dirs: a workspace config that excludes the folder holding the rule", async () => {
    await put(".umbra/config.json", JSON.stringify({ index: { excludeDirs: ["config"] } }));
    await put("config/.umbraignore", "prod.json\n");
    await put("config/prod.json", "SECRET_prod\n");
    expect(run("cat config/prod.json 2>&1; true")).not.toMatch(/SECRET_/);
  });

  it("work: the visible files of node_modules stay readable and writable", async () => {
    await put("node_modules/pkg/index.js", "module.exports = 'visible';\n");
    await put("node_modules/pkg/test/key.pem", "SECRET_pem\n");
    const out = run(
      "cat node_modules/pkg/index.js && echo new > node_modules/pkg/new.js && cat node_modules/pkg/new.js",
    );
    expect(out).toContain("module.exports = 'visible';");
    expect(out).toContain("new");
  });
});
