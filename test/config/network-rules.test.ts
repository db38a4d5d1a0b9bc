import { statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deleteNetworkRule,
  networkAllowlist,
  savedNetworkRules,
  saveNetworkRule,
} from "../../src/config/network-rules.js";
import { workspaceDir } from "../../src/config/paths.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

let home: string;
let env: NodeJS.ProcessEnv;
const root = "/some/workspace";

beforeAll(async () => {
  home = await tempDir("rules");
  env = { UMBRA_HOME: home };
});
afterAll(() => cleanup(home));

describe("network rules saved for a repository", () => {
  it("saves each rule once, in the workspace's data folder (0600), lists and removes them", () => {
    expect(savedNetworkRules(root, env)).toEqual([]);
    const first = saveNetworkRule(root, "sh -c npm ci", env);
    expect(saveNetworkRule(root, "sh -c npm ci", env)).toEqual(first);
    const second = saveNetworkRule(root, "go mod download", env);
    expect(savedNetworkRules(root, env).map((r) => r.rule)).toEqual(["sh -c npm ci", "go mod download"]);
    const file = join(workspaceDir(root, env), "network-rules.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // another workspace has none
    expect(savedNetworkRules("/other", env)).toEqual([]);
    expect(
      networkAllowlist(root, { sandbox: { network: { allowCommands: ["npm"] } } } as never, env),
    ).toEqual(["npm", "sh -c npm ci", "go mod download"]);
    expect(deleteNetworkRule(root, first.id, env)).toBe(true);
    expect(deleteNetworkRule(root, first.id, env)).toBe(false);
    expect(savedNetworkRules(root, env)).toEqual([second]);
  });

  it("reads a damaged file as no rules, and entries of the wrong shape are left out", async () => {
    const dir = workspaceDir("/damaged", env);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "network-rules.json"), "{not json");
    expect(savedNetworkRules("/damaged", env)).toEqual([]);
    await writeFile(
      join(dir, "network-rules.json"),
      JSON.stringify([
        { id: 1, rule: "x" },
        { id: "a", rule: "curl", createdAt: "t" },
      ]),
    );
    expect(savedNetworkRules("/damaged", env).map((r) => r.rule)).toEqual(["curl"]);
    expect(await readFile(join(dir, "network-rules.json"), "utf8")).toContain("curl");
  });
});
