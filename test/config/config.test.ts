import { chmodSync, mkdirSync, mkdtempSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, mergeLayers } from "../../src/config/config.js";
import { dataDir, workspaceDir } from "../../src/config/paths.js";
import { umbraSync } from "../helpers/cli.js";

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("configuration", () => {
  it("layers defaults < user < workspace < environment < flags", async () => {
    dir = await mkdtemp(join(tmpdir(), "umbra-config-"));
    const configHome = join(dir, "config");
    const workspace = join(dir, "ws");
    await mkdir(join(configHome, "umbra"), { recursive: true });
    await mkdir(join(workspace, ".umbra"), { recursive: true });
    await writeFile(
      join(configHome, "umbra", "config.json"),
      JSON.stringify({ index: { maxFileBytes: 10, chunkTokens: 100 } }),
    );
    await writeFile(join(workspace, ".umbra", "config.json"), JSON.stringify({ index: { maxFileBytes: 5 } }));
    const env = { XDG_CONFIG_HOME: configHome };
    const config = loadConfig({ workspaceRoot: workspace, env });
    expect(config.index.maxFileBytes).toBe(5);
    expect(config.index.chunkTokens).toBe(100);
    expect(config.index.embedder.provider).toBe("code-model");
    const fromEnv = loadConfig({ workspaceRoot: workspace, env: { ...env, UMBRA_MAX_FILE_BYTES: "30" } });
    expect(fromEnv.index.maxFileBytes).toBe(30);
    const fromFlags = loadConfig({ workspaceRoot: workspace, env, flags: { index: { maxFileBytes: 40 } } });
    expect(fromFlags.index.maxFileBytes).toBe(40);
  });

  it("rejects invalid files with a clear error", async () => {
    const root = await mkdtemp(join(tmpdir(), "umbra-config-"));
    dir = root;
    await mkdir(join(root, ".umbra"));
    const env = { XDG_CONFIG_HOME: join(root, "none") };
    await writeFile(join(root, ".umbra", "config.json"), "{ not json");
    expect(() => loadConfig({ workspaceRoot: root, env })).toThrow(ConfigError);
    await mkdir(join(root, "none", "umbra"), { recursive: true });
    await writeFile(
      join(root, "none", "umbra", "config.json"),
      JSON.stringify({ index: { maxFileBytes: -1 } }),
    );
    expect(() => loadConfig({ env })).toThrow(/index.maxFileBytes/);
  });

  it("merges keys that name members of Object.prototype as own keys, never as a prototype", () => {
    // JSON gives `__proto__` as an own key; a merge must not turn it into the merged object's prototype
    const user = JSON.parse('{"agent": {"price": {"inputPerMillion": 1, "outputPerMillion": 2}}}');
    const workspace = JSON.parse('{"agent": {"price": {"__proto__": {"extra": 1}, "constructor": 3}}}');
    const price = (mergeLayers(user, workspace).agent as Record<string, Record<string, unknown>>).price ?? {};
    expect(Object.keys(price).sort()).toEqual([
      "__proto__",
      "constructor",
      "inputPerMillion",
      "outputPerMillion",
    ]);
    expect(price.extra).toBeUndefined();
    expect(price.constructor).toBe(3);
  });

  it("puts data under UMBRA_HOME, else XDG_DATA_HOME", () => {
    expect(dataDir({ UMBRA_HOME: "/x" })).toBe("/x");
    expect(dataDir({ XDG_DATA_HOME: "/d" })).toBe("/d/umbra");
    expect(workspaceDir("/a", { UMBRA_HOME: "/x" })).not.toBe(workspaceDir("/b", { UMBRA_HOME: "/x" }));
  });
});

describe("the data directory", () => {
  it("is made private (0700) by any command, also when it existed open to others", () => {
    const base = mkdtempSync(join(tmpdir(), "umbra-datadir-"));
    dir = base;
    const env = { ...process.env, UMBRA_HOME: join(base, "data"), XDG_CONFIG_HOME: join(base, "config") };
    mkdirSync(join(base, "ws"));
    umbraSync(env, ["status", "--root", join(base, "ws")]);
    expect(statSync(join(base, "data")).mode & 0o777).toBe(0o700);
    chmodSync(join(base, "data"), 0o755);
    umbraSync(env, ["status", "--root", join(base, "ws")]);
    expect(statSync(join(base, "data")).mode & 0o777).toBe(0o700);
  });
});
