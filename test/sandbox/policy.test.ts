import { existsSync } from "node:fs";
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type SandboxConfig } from "../../src/config/config.js";
import {
  type AdminPolicy,
  adminForbidsNetwork,
  DEFAULT_ENV_ALLOWLIST,
  DEFAULT_LIMITS,
  droppedEnvNames,
  filterEnv,
  findWorkspacePaths,
  isSecretEnvName,
  loadAdminPolicy,
  parseAdminPolicy,
  refusedEnvEntry,
  resolvePolicy,
  SYSTEM_SECRET_PATHS,
} from "../../src/sandbox/policy.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

/** Hidden paths other than the system's secret files (hidden always, when they exist). */
function withoutSystemSecrets(paths: readonly string[]): string[] {
  return paths.filter((path) => !SYSTEM_SECRET_PATHS.includes(path));
}

let base: string;
let ws: string;
let home: string;
let env: NodeJS.ProcessEnv;

async function put(path: string, content = ""): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, content);
}

/** The `sandbox` block of a configuration made of `sandbox` (as a workspace .umbra/config.json would). */
function sandboxConfig(sandbox: Record<string, unknown> = {}): SandboxConfig {
  return loadConfig({ env: { XDG_CONFIG_HOME: join(base, "no-config") }, flags: { sandbox } }).sandbox;
}

beforeEach(async () => {
  base = await realpath(await tempDir("policy"));
  ws = join(base, "ws");
  home = join(base, "home");
  await mkdir(ws);
  await mkdir(home);
  env = { HOME: home, UMBRA_HOME: join(base, "data"), PATH: "/usr/bin" };
});
afterEach(async () => {
  await cleanup(base);
});

describe("resolvePolicy defaults", () => {
  it("is workspace-write with the workspace writable, network off, build-sized limits and a clean env", async () => {
    const { policy, warnings } = await resolvePolicy({ workspace: ws, config: sandboxConfig(), env });
    expect(warnings).toEqual([]);
    expect(policy.mode).toBe("workspace-write");
    expect(policy.workspace).toBe(ws);
    expect(policy.writableRoots).toEqual([ws]);
    expect(policy.network).toBe(false);
    expect(policy.limits).toEqual(DEFAULT_LIMITS);
    expect(policy.limits).toEqual({
      processes: 1024,
      memoryBytes: 8 * 1024 ** 3,
      cpuSeconds: 600,
      outputBytes: 16 * 1024 ** 2,
      timeoutMs: 600_000,
    });
    expect(policy.envAllowlist).toEqual(
      expect.arrayContaining(["PATH", "HOME", "USER", "LANG", "LC_*", "TZ"]),
    );
    expect(policy.envAllowlist.some((name) => isSecretEnvName(name))).toBe(false);
    // protected whether or not they exist; no .git here, so no .git entries
    expect(policy.protectedPaths).toEqual(
      expect.arrayContaining([
        join(ws, ".vscode"),
        join(ws, ".idea"),
        join(ws, ".umbra"),
        join(ws, ".gitignore"),
        join(ws, ".umbraignore"),
        join(ws, ".cursorignore"),
      ]),
    );
    expect(policy.protectedPaths).not.toContain(join(ws, ".git", "hooks"));
    expect(policy.protectedPaths).not.toContain(join(ws, ".umbra", "config.json"));
    expect(withoutSystemSecrets(policy.hiddenPaths)).toEqual([]);
  });

  it("resolves the workspace to its real path", async () => {
    const { symlink } = await import("node:fs/promises");
    await symlink(ws, join(base, "link"));
    const { policy } = await resolvePolicy({ workspace: join(base, "link"), config: sandboxConfig(), env });
    expect(policy.workspace).toBe(ws);
  });
});

describe("hidden and protected paths of the workspace", () => {
  beforeEach(async () => {
    await put(join(ws, ".umbraignore"), "secrets/\n*.pem\n!public.pem\n");
    await put(join(ws, "secrets", "prod.env"), "x");
    await put(join(ws, "secrets", "deep", "more.env"), "x");
    await put(join(ws, "certs", "server.pem"), "x");
    await put(join(ws, "certs", "public.pem"), "x");
    await put(join(ws, "sub", ".cursorignore"), "local.txt\n");
    await put(join(ws, "sub", "local.txt"), "x");
    await put(join(ws, "local.txt"), "not hidden: the rule is in sub/");
    await put(join(ws, "sub", ".gitignore"), "*.log\n");
    await put(join(ws, ".gitignore"), "private/\n");
    await put(join(ws, "private", "key.pem"), "git-ignored folders are entered");
    await put(join(ws, "node_modules", "pkg", "test.pem"), "excluded folders are entered for the rules");
    await put(join(ws, "node_modules", "pkg", ".gitignore"), "git rules of excluded folders are not kept");
    await put(join(ws, "build", "out", ".umbraignore"), "token.txt\n");
    await put(join(ws, "build", "out", "token.txt"), "a rule inside an excluded folder applies there");
    await put(join(ws, "build", "token.txt"), "not hidden: the rule is in build/out/");
    await put(join(ws, "node_modules", "dep", ".git", "config"), "a .git inside an excluded folder");
    await put(join(ws, ".git", "config"), "[core]\n");
    await mkdir(join(ws, ".git", "hooks"));
    await put(join(ws, ".git", "objects", "x.pem"), ".git is never walked");
    await put(join(ws, ".umbra", "config.json"), "{}");
    await put(join(ws, ".umbra", "rules", "style.md"), "agents may write here");
    await put(join(ws, ".umbra", "policy-notes.txt"), "x");
    await put(join(ws, "app.code-workspace"), "{}");
    await put(join(ws, "src", "nested.code-workspace"), "only root ones are protected");
  });

  it("hides every .umbraignore/.cursorignore match, a matched folder as one entry", async () => {
    const { policy } = await resolvePolicy({ workspace: ws, config: sandboxConfig(), env });
    expect(withoutSystemSecrets(policy.hiddenPaths)).toEqual(
      [
        join(ws, "build", "out", "token.txt"),
        join(ws, "certs", "server.pem"),
        join(ws, "node_modules", "pkg", "test.pem"),
        join(ws, "private", "key.pem"),
        join(ws, "secrets"),
        join(ws, "sub", "local.txt"),
      ].sort(),
    );
  });

  it("applies the rules inside excluded folders, the configured ones too, which add nothing else", async () => {
    const excluded = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig(),
      env,
      walk: { excludeDirs: ["sub", "secrets", "certs", "private"] },
    });
    expect(excluded.policy.hiddenPaths).toEqual(
      expect.arrayContaining([
        join(ws, "sub", "local.txt"),
        join(ws, "certs", "server.pem"),
        join(ws, "secrets"),
      ]),
    );
    const { policy, git } = await resolvePolicy({ workspace: ws, config: sandboxConfig(), env });
    // the umbra ignore files of excluded folders are read-only like any other; their git ones are not kept
    expect(policy.protectedPaths).toContain(join(ws, "build", "out", ".umbraignore"));
    expect(policy.protectedPaths).not.toContain(join(ws, "node_modules", "pkg", ".gitignore"));
    expect([...(git?.entries ?? [])]).toEqual([".git"]);
  });

  it("protects git settings and hooks, editor and umbra settings and the ignore files", async () => {
    const { policy } = await resolvePolicy({ workspace: ws, config: sandboxConfig(), env });
    expect(policy.protectedPaths).toEqual(
      expect.arrayContaining([
        join(ws, ".git", "config"),
        join(ws, ".git", "hooks"),
        join(ws, ".vscode"),
        join(ws, ".idea"),
        join(ws, ".umbra", "config.json"),
        join(ws, ".umbra", "policy-notes.txt"),
        join(ws, "app.code-workspace"),
        join(ws, ".gitignore"),
        join(ws, ".umbraignore"),
        join(ws, ".cursorignore"),
        join(ws, "sub", ".gitignore"),
        join(ws, "sub", ".cursorignore"),
      ]),
    );
    expect(policy.protectedPaths).not.toContain(join(ws, ".umbra", "rules"));
    expect(policy.protectedPaths).not.toContain(join(ws, ".umbra"));
    expect(policy.protectedPaths).not.toContain(join(ws, "src", "nested.code-workspace"));
  });

  it("findWorkspacePaths reports what it found", async () => {
    const found = await findWorkspacePaths(ws);
    expect(found.gitIsDir).toBe(true);
    expect(found.truncated).toBe(false);
    expect(found.codeWorkspaces).toEqual([join(ws, "app.code-workspace")]);
    expect(found.umbraEntries).toEqual([
      join(ws, ".umbra", "config.json"),
      join(ws, ".umbra", "policy-notes.txt"),
    ]);
    const truncated = await findWorkspacePaths(ws, { maxEntries: 3 });
    expect(truncated.truncated).toBe(true);
  });

  it("warns when the walk is cut short", async () => {
    const { warnings } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig(),
      env,
      walk: { maxEntries: 3 },
    });
    expect(warnings.join("\n")).toMatch(/too many entries/);
  });

  it("hides configured paths and the home folder's credentials", async () => {
    await put(join(home, ".ssh", "id_ed25519"), "key");
    await put(join(home, ".netrc"), "machine x");
    await put(join(base, "elsewhere", "token.txt"), "x");
    const { policy } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ hiddenPaths: ["../elsewhere/token.txt", "~/missing"] }),
      env,
    });
    expect(policy.hiddenPaths).toEqual(
      expect.arrayContaining([
        join(home, ".ssh"),
        join(home, ".netrc"),
        join(base, "elsewhere", "token.txt"),
      ]),
    );
    const off = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ hideCredentials: false }),
      env,
    });
    expect(off.policy.hiddenPaths).not.toContain(join(home, ".ssh"));
  });

  it("hides registry, package-manager, database and AI-tool credentials, histories, browser profiles and system secrets", async () => {
    const credentials = [
      ".npmrc",
      ".cargo/credentials.toml",
      ".config/git/credentials",
      ".pgpass",
      ".claude/.credentials.json",
      ".m2/settings.xml",
      ".gem/credentials",
      ".config/pip/pip.conf",
      ".terraform.d/credentials.tfrc.json",
      ".vault-token",
      ".config/containers/auth.json",
      ".docker/config.json",
      ".bash_history",
      ".mozilla/firefox/profiles.ini",
      ".config/google-chrome/Default/Cookies",
      ".codex/auth.json",
    ];
    for (const rel of credentials) await put(join(home, rel), "secret");
    const { policy } = await resolvePolicy({ workspace: ws, config: sandboxConfig(), env });
    const hidden = (path: string) =>
      policy.hiddenPaths.some((entry) => path === entry || path.startsWith(`${entry}/`));
    for (const rel of credentials) expect(hidden(join(home, rel)), rel).toBe(true);
    for (const path of ["/etc/shadow", "/etc/gshadow"])
      if (existsSync(path)) expect(hidden(path), path).toBe(true);
  });
});

describe("modes", () => {
  it("read-only makes nothing writable", async () => {
    const { policy } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ mode: "read-only" }),
      env,
    });
    expect(policy.mode).toBe("read-only");
    expect(policy.writableRoots).toEqual([]);
  });

  it("full-access is honoured from the command line only", async () => {
    const fromConfig = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ mode: "full-access" }),
      env,
    });
    expect(fromConfig.policy.mode).toBe("workspace-write");
    expect(fromConfig.warnings.join("\n")).toMatch(/full-access must be asked for on the command line/);

    const fromFlag = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig(),
      flags: { mode: "full-access" },
      env,
    });
    expect(fromFlag.warnings).toEqual([]);
    expect(fromFlag.policy.mode).toBe("full-access");
    expect(fromFlag.policy.writableRoots).toEqual(["/"]);
    expect(fromFlag.policy.network).toBe(true);
    expect(fromFlag.policy.protectedPaths).toEqual([]);
  });

  it("flags win over the configuration", async () => {
    const { policy } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ mode: "read-only", limits: { timeoutMs: 5000, processes: 10 } }),
      flags: { mode: "workspace-write", network: true, timeoutMs: 1234 },
      env,
    });
    expect(policy.mode).toBe("workspace-write");
    expect(policy.network).toBe(true);
    expect(policy.limits.timeoutMs).toBe(1234);
    expect(policy.limits.processes).toBe(10);
  });
});

describe("writable roots and caches", () => {
  it("adds existing caches and extra folders, refuses unsafe and missing ones", async () => {
    await mkdir(join(home, ".npm"));
    await mkdir(join(home, ".cache", "go-build"), { recursive: true });
    await mkdir(join(home, ".ssh"));
    await mkdir(join(base, "shared"));
    const { policy, warnings } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ writableRoots: ["../shared", "~/.ssh", "~", "/", "~/nope", join(ws, "sub")] }),
      env,
    });
    expect(policy.writableRoots).toEqual(
      [ws, join(base, "shared"), join(home, ".npm"), join(home, ".cache", "go-build")].sort(),
    );
    const text = warnings.join("\n");
    expect(text).toMatch(/~\/\.ssh may not be writable/);
    expect(text).toMatch(/~ may not be writable: it holds your home folder/);
    expect(text).toMatch(/\/ may not be writable: it is the whole filesystem/);
    expect(text).toMatch(/~\/nope does not exist/);

    const noCaches = await resolvePolicy({ workspace: ws, config: sandboxConfig({ caches: [] }), env });
    expect(noCaches.policy.writableRoots).toEqual([ws]);
  });

  it("a workspace that holds the home folder keeps start-up files, credentials and umbra's data read-only", async () => {
    const { policy } = await resolvePolicy({ workspace: home, config: sandboxConfig(), env });
    expect(policy.writableRoots).toContain(home);
    expect(policy.protectedPaths).toEqual(
      expect.arrayContaining([join(home, ".bashrc"), join(home, ".ssh"), join(home, ".config")]),
    );
    const { policy: wide } = await resolvePolicy({ workspace: base, config: sandboxConfig(), env });
    expect(wide.protectedPaths).toEqual(expect.arrayContaining([join(home, ".profile"), join(base, "data")]));
  });

  it("refuses the umbra data directory", async () => {
    await mkdir(join(base, "data"), { recursive: true });
    const { policy, warnings } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ writableRoots: [join(base, "data")] }),
      env,
    });
    expect(policy.writableRoots).toEqual([ws]);
    expect(warnings.join("\n")).toMatch(/umbra's data/);
  });
});

describe("the admin policy only tightens", () => {
  const admin = (sandbox: Record<string, unknown>): AdminPolicy =>
    parseAdminPolicy(JSON.stringify({ sandbox }), "/etc/umbra/policy.json");

  it("caps the mode, forces the network off and caps limits", async () => {
    const { policy, warnings } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ limits: { timeoutMs: 3_600_000, processes: 50 } }),
      flags: { mode: "full-access", network: true },
      admin: admin({
        mode: "workspace-write",
        network: false,
        limits: { timeoutMs: 60_000, processes: 4096 },
      }),
      env,
    });
    expect(policy.mode).toBe("workspace-write");
    expect(policy.network).toBe(false);
    expect(policy.limits.timeoutMs).toBe(60_000);
    expect(policy.limits.processes).toBe(50);
    const text = warnings.join("\n");
    expect(text).toMatch(/full-access is forbidden by the admin policy/);
    expect(text).toMatch(/network access is forbidden by the admin policy/);
    expect(text).toMatch(/timeoutMs 3600000 is above the admin cap/);
  });

  it("adds protected and hidden paths, removes writable roots and caches, ignores looser values", async () => {
    await mkdir(join(home, ".npm"));
    await mkdir(join(home, ".cache", "pip"), { recursive: true });
    await put(join(ws, "vendor-secrets", "a.key"), "x");
    const { policy, warnings } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig({ caches: ["npm", "pip"] }),
      admin: admin({
        protectedPaths: ["Makefile"],
        hiddenPaths: ["vendor-secrets"],
        denyWrite: ["~/.npm", "deploy"],
        caches: ["npm", "go"],
        writableRoots: ["/"],
        network: { allowCommands: ["*"] },
        env: { allow: ["*"] },
      }),
      env,
    });
    expect(policy.writableRoots).toEqual([ws]);
    expect(policy.protectedPaths).toEqual(expect.arrayContaining([join(ws, "Makefile"), join(ws, "deploy")]));
    expect(policy.hiddenPaths).toContain(join(ws, "vendor-secrets"));
    const text = warnings.join("\n");
    expect(text).toMatch(/caches not allowed by the admin policy: pip/);
    expect(text).toMatch(/\.npm may not be writable \(admin policy\)/);
    expect(text).toMatch(/sandbox\.writableRoots could only loosen the sandbox; ignored/);
    expect(text).toMatch(/sandbox\.network\.allowCommands could only loosen/);
    expect(text).toMatch(/sandbox\.env\.allow could only loosen/);
  });

  it("keeps admin paths in full-access mode", async () => {
    const { policy } = await resolvePolicy({
      workspace: ws,
      config: sandboxConfig(),
      flags: { mode: "full-access" },
      admin: admin({ protectedPaths: ["~/.bashrc"] }),
      env,
    });
    expect(policy.protectedPaths).toEqual([join(home, ".bashrc")]);
  });

  it("loads from /etc/umbra/policy.json or UMBRA_ADMIN_POLICY and fails closed on a broken file", async () => {
    const file = join(base, "policy.json");
    expect(await loadAdminPolicy(undefined, { UMBRA_ADMIN_POLICY: file })).toBeUndefined();
    await writeFile(file, JSON.stringify({ sandbox: { network: { enabled: false } } }));
    const loaded = await loadAdminPolicy(undefined, { UMBRA_ADMIN_POLICY: file });
    expect(loaded?.source).toBe(file);
    expect(adminForbidsNetwork(loaded)).toBe(true);
    expect(adminForbidsNetwork(admin({ network: true }))).toBe(false);
    expect(adminForbidsNetwork(undefined)).toBe(false);
    await writeFile(file, "{ nope");
    await expect(loadAdminPolicy(file)).rejects.toThrow(ConfigError);
    await writeFile(file, JSON.stringify({ sandbox: { netwrk: false } }));
    await expect(loadAdminPolicy(file)).rejects.toThrow(/invalid admin policy/);
    await writeFile(file, JSON.stringify({ sandbox: { mode: "anything" } }));
    await expect(loadAdminPolicy(file)).rejects.toThrow(/sandbox\.mode/);
  });
});

describe("environment allowlist", () => {
  it("refuses secret-looking entries unless the admin allows them", async () => {
    const config = sandboxConfig({
      env: { allow: ["MY_SETTING", "NPM_TOKEN", "AWS_*", "*", "MYAPP_*", "bad-name"] },
    });
    const plain = await resolvePolicy({ workspace: ws, config, env });
    expect(plain.policy.envAllowlist).toEqual(expect.arrayContaining(["MY_SETTING", "MYAPP_*"]));
    expect(plain.policy.envAllowlist).not.toContain("NPM_TOKEN");
    expect(plain.policy.envAllowlist).not.toContain("AWS_*");
    expect(plain.policy.envAllowlist).not.toContain("*");
    const text = plain.warnings.join("\n");
    expect(text).toMatch(/NPM_TOKEN looks like a secret/);
    expect(text).toMatch(/AWS_\* (looks like a secret|would pass secrets)/);
    expect(text).toMatch(/entry \* would pass every variable/);
    expect(text).toMatch(/bad-name is not a variable name/);

    const allowed = await resolvePolicy({
      workspace: ws,
      config,
      admin: parseAdminPolicy(
        JSON.stringify({ sandbox: { env: { allowSecrets: ["NPM_TOKEN"], deny: ["TZ"] } } }),
        "admin",
      ),
      env,
    });
    expect(allowed.policy.envAllowlist).toContain("NPM_TOKEN");
    expect(allowed.policy.envAllowlist).not.toContain("TZ");
  });

  it("classifies names and entries", () => {
    for (const name of [
      "GITHUB_TOKEN",
      "OPENAI_API_KEY",
      "AWS_REGION",
      "DB_PASSWORD",
      "SSH_AUTH_SOCK",
      "npm_config__authToken",
    ])
      expect(isSecretEnvName(name), name).toBe(true);
    for (const name of [
      "PATH",
      "HOME",
      "LANG",
      "LC_ALL",
      "TERM",
      "KEYBOARD_LAYOUT",
      "TOKENIZERS_PARALLELISM",
    ])
      expect(isSecretEnvName(name), name).toBe(false);
    expect(refusedEnvEntry("LC_*")).toBeUndefined();
    expect(refusedEnvEntry("A*")).toBe("would pass secrets");
    expect(refusedEnvEntry("GITHUB_TOKEN")).toBe("looks like a secret");
    expect(refusedEnvEntry("GITHUB_TOKEN", ["GITHUB_TOKEN"])).toBeUndefined();
  });

  it("filterEnv keeps listed names, and never a secret that only a prefix matched", () => {
    const filtered = filterEnv(
      { PATH: "/bin", LC_ALL: "C", LC_API_TOKEN: "s", NPM_TOKEN: "t", OTHER: "x", HOME: undefined },
      ["PATH", "LC_*", "NPM_TOKEN", "HOME"],
    );
    expect(filtered).toEqual({ PATH: "/bin", LC_ALL: "C", NPM_TOKEN: "t" });
  });

  it("passes the toolchain variables of Python, Go, Node, Java, Rust and C by default, by name", async () => {
    const toolchain = [
      "PYTHONPATH",
      "VIRTUAL_ENV",
      "PYTHONHOME",
      "GOFLAGS",
      "GOPROXY",
      "GOPATH",
      "GOROOT",
      "GOCACHE",
      "NODE_PATH",
      "NODE_OPTIONS",
      "JAVA_HOME",
      "CARGO_HOME",
      "RUSTUP_HOME",
      "RUSTFLAGS",
      "CC",
      "CXX",
      "CFLAGS",
      "LDFLAGS",
    ];
    const { policy } = await resolvePolicy({ workspace: ws, config: sandboxConfig(), env });
    const passed = filterEnv(
      Object.fromEntries([...toolchain, "GITHUB_TOKEN", "GOPROXY_TOKEN"].map((name) => [name, "v"])),
      policy.envAllowlist,
    );
    expect(Object.keys(passed).sort()).toEqual([...toolchain].sort());
    // a list of names, not patterns: nothing but LC_* can match a name it does not spell out
    expect(DEFAULT_ENV_ALLOWLIST.filter((entry) => entry.endsWith("*"))).toEqual(["LC_*"]);
    for (const name of DEFAULT_ENV_ALLOWLIST) expect(isSecretEnvName(name), name).toBe(false);
  });

  it("a workspace cannot pass a secret-looking name, also next to the toolchain defaults", async () => {
    const config = sandboxConfig({
      env: { allow: ["PYTHONPATH", "GOPROXY_PASSWORD", "CARGO_REGISTRY_TOKEN"] },
    });
    const { policy, warnings } = await resolvePolicy({ workspace: ws, config, env });
    const passed = filterEnv(
      { PYTHONPATH: "src", GOPROXY_PASSWORD: "p", CARGO_REGISTRY_TOKEN: "t" },
      policy.envAllowlist,
    );
    expect(passed).toEqual({ PYTHONPATH: "src" });
    expect(warnings.join("\n")).toMatch(
      /GOPROXY_PASSWORD looks like a secret.*\n.*CARGO_REGISTRY_TOKEN looks like a secret/,
    );
  });

  it("droppedEnvNames names what filterEnv drops, sorted, without shell bookkeeping", () => {
    const env = {
      PATH: "/bin",
      ZED: "1",
      OPENAI_API_KEY: "sk",
      LC_API_TOKEN: "s",
      PWD: "/",
      _: "x",
      GONE: undefined,
    };
    expect(droppedEnvNames(env, ["PATH", "LC_*"])).toEqual(["LC_API_TOKEN", "OPENAI_API_KEY", "ZED"]);
  });
});

describe("configuration block", () => {
  it("reads the sandbox block of .umbra/config.json and validates it", async () => {
    await put(
      join(ws, ".umbra", "config.json"),
      JSON.stringify({
        sandbox: {
          mode: "read-only",
          network: { allowCommands: ["npm"] },
          writableRoots: [base],
          env: { allow: ["OPENAI_API_KEY"] },
          limits: { processes: 64 },
        },
      }),
    );
    const warnings: string[] = [];
    const config = loadConfig({
      workspaceRoot: ws,
      env: { XDG_CONFIG_HOME: join(base, "none") },
      onWarning: (message) => warnings.push(message),
    });
    expect(config.sandbox.mode).toBe("read-only");
    // A repository may not approve its own network access: only the user's config counts.
    // Nor open folders outside itself to writes, nor pass the user's secrets to its commands.
    expect(config.sandbox.network.allowCommands).toEqual([]);
    expect(config.sandbox.writableRoots).toEqual([]);
    expect(config.sandbox.env.allow).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(/^sandbox\.network\.allowCommands in .*\.umbra\/config\.json is ignored: /),
      expect.stringMatching(/^sandbox\.writableRoots in .*is ignored: .*outside itself/),
      expect.stringMatching(/^sandbox\.env\.allow in .*is ignored: .*API keys/),
    ]);
    expect(config.sandbox.limits).toEqual({ ...DEFAULT_LIMITS, processes: 64 });
    expect(config.sandbox.caches).toContain("npm");
    await put(join(ws, ".umbra", "config.json"), JSON.stringify({ sandbox: { mode: "yolo" } }));
    // An invalid value in a workspace's file is dropped with a warning: a cloned repository cannot stop
    // every command from running.
    const dropped: string[] = [];
    const loaded = loadConfig({
      workspaceRoot: ws,
      env: { XDG_CONFIG_HOME: join(base, "none") },
      onWarning: (message) => dropped.push(message),
    });
    expect(loaded.sandbox.mode).toBe("workspace-write");
    expect(dropped).toEqual([expect.stringMatching(/^sandbox\.mode in .* is ignored/)]);
  });
});
