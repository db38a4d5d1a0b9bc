import { readFile, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { ConfigError, SANDBOX_CACHE_NAMES, type SandboxConfig } from "../config/config.js";
import { dataDir, workspaceId } from "../config/paths.js";
import { type GitGuard, gitControlPaths } from "./git-guard.js";
import { findHiddenLinks, type LinksCache } from "./hidden-links.js";
import type { HiddenMask, SandboxMode, SandboxPolicy } from "./types.js";
import { type FindWorkspacePathsOptions, findWorkspacePaths } from "./workspace-walk.js";

export {
  AGENT_WRITABLE_UMBRA_DIRS,
  type FindWorkspacePathsOptions,
  findWorkspacePaths,
  type WorkspacePaths,
} from "./workspace-walk.js";

export type SandboxLimits = SandboxPolicy["limits"];
export type CacheName = (typeof SANDBOX_CACHE_NAMES)[number];

/** Where the admin policy lives; `UMBRA_ADMIN_POLICY` overrides it (for tests). */
export const ADMIN_POLICY_FILE = "/etc/umbra/policy.json";

const GIB = 1024 * 1024 * 1024;

/** Limits fit for builds and test suites. */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  processes: 1024,
  memoryBytes: 8 * GIB,
  cpuSeconds: 600,
  outputBytes: 16 * 1024 * 1024,
  timeoutMs: 600_000,
});

/**
 * Environment variables passed into the sandbox by default: exact names (no pattern that could let a
 * secret through), except `LC_*`. Besides the basics: what build and test tools read to find their
 * toolchain, packages and caches and to take their flags. Names that look like secrets are dropped even
 * when a prefix matches them (see filterEnv); none of these does (a test checks it).
 */
export const DEFAULT_ENV_ALLOWLIST: readonly string[] = Object.freeze([
  // basics
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "TZ",
  "TMPDIR",
  "CI",
  "XDG_CACHE_HOME",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "SOURCE_DATE_EPOCH",
  // Python
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSAFEPATH",
  "PYTHONDONTWRITEBYTECODE",
  "PYTHONPYCACHEPREFIX",
  "PYTHONUNBUFFERED",
  "PYTHONIOENCODING",
  "PYTHONUTF8",
  "PYTHONWARNINGS",
  "PYTHONHASHSEED",
  "PYTHONNOUSERSITE",
  "PYTHONDEVMODE",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "CONDA_DEFAULT_ENV",
  "PYENV_ROOT",
  "PYENV_VERSION",
  "PIP_CACHE_DIR",
  "PIP_CERT",
  "PIP_DISABLE_PIP_VERSION_CHECK",
  "PIP_FIND_LINKS",
  "PIP_NO_INDEX",
  "PYTEST_ADDOPTS",
  "PYTEST_PLUGINS",
  "TOX_WORK_DIR",
  // Go
  "GOPATH",
  "GOROOT",
  "GOBIN",
  "GOCACHE",
  "GOMODCACHE",
  "GOTMPDIR",
  "GOENV",
  "GOFLAGS",
  "GOPROXY",
  "GOPRIVATE",
  "GONOPROXY",
  "GONOSUMDB",
  "GOSUMDB",
  "GOTOOLCHAIN",
  "GOWORK",
  "GO111MODULE",
  "GOOS",
  "GOARCH",
  "GOAMD64",
  "GOARM64",
  "GOEXPERIMENT",
  "GODEBUG",
  "GOMAXPROCS",
  "GOGC",
  "GOMEMLIMIT",
  "CGO_ENABLED",
  "CGO_CFLAGS",
  "CGO_CPPFLAGS",
  "CGO_CXXFLAGS",
  "CGO_LDFLAGS",
  // Node
  "NODE_ENV",
  "NODE_PATH",
  "NODE_OPTIONS",
  "NODE_EXTRA_CA_CERTS",
  "NODE_NO_WARNINGS",
  "COREPACK_HOME",
  // Java
  "JAVA_HOME",
  "JAVA_TOOL_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "CLASSPATH",
  "MAVEN_OPTS",
  "GRADLE_USER_HOME",
  "GRADLE_OPTS",
  // Rust
  "CARGO_HOME",
  "CARGO_TARGET_DIR",
  "CARGO_INCREMENTAL",
  "CARGO_BUILD_JOBS",
  "RUSTUP_HOME",
  "RUSTUP_TOOLCHAIN",
  "RUSTFLAGS",
  "RUSTDOCFLAGS",
  "RUSTC_WRAPPER",
  "RUST_BACKTRACE",
  "RUST_LOG",
  // Ruby
  "GEM_HOME",
  "GEM_PATH",
  "BUNDLE_PATH",
  "BUNDLE_GEMFILE",
  "RUBYLIB",
  "RUBYOPT",
  // C and C++
  "CC",
  "CXX",
  "CPP",
  "AR",
  "LD",
  "CFLAGS",
  "CXXFLAGS",
  "CPPFLAGS",
  "LDFLAGS",
  "LDLIBS",
  "MAKEFLAGS",
  "CPATH",
  "C_INCLUDE_PATH",
  "CPLUS_INCLUDE_PATH",
  "LIBRARY_PATH",
  "LD_LIBRARY_PATH",
  "PKG_CONFIG_PATH",
  "CMAKE_PREFIX_PATH",
  "CMAKE_GENERATOR",
  "CMAKE_BUILD_PARALLEL_LEVEL",
  "CCACHE_DIR",
]);

/**
 * Names of environment variables that hold credentials (case-insensitive globs, `*` = any text). They
 * never enter the sandbox unless the admin policy lists them in `sandbox.env.allowSecrets`.
 */
export const SECRET_ENV_PATTERNS: readonly string[] = Object.freeze([
  "*_KEY",
  "*_KEYS",
  "*_TOKEN",
  "*_TOKENS",
  "*_SECRET",
  "*_SECRETS",
  "*_SECRET_*",
  "*_PASSWORD",
  "*_PASSWORDS",
  "*_PASSWD",
  "*_PASS",
  "*_PWD",
  "*_CREDENTIAL",
  "*_CREDENTIALS",
  "*_AUTH",
  "*_AUTH_*",
  "*AUTHTOKEN*",
  "*_COOKIE",
  "*_DSN",
  "*_PRIVATE_*",
  "AWS_*",
  "AZURE_*",
  "VAULT_*",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "DATABASE_URL",
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "GPG_AGENT_INFO",
  "KRB5CCNAME",
  "KEY",
  "TOKEN",
  "SECRET",
  "PASSWORD",
  "API_KEY",
]);

/**
 * Workspace paths kept read-only whether or not they exist, relative to the workspace, each with the
 * reason given to an agent. Besides these: every entry of `.umbra/` except AGENT_WRITABLE_UMBRA_DIRS,
 * every `*.code-workspace` at the root and every ignore file at any depth.
 */
export const PROTECTED_WORKSPACE_PATHS: readonly { path: string; reason: string }[] = Object.freeze([
  { path: ".git/config", reason: "commands may not change the git configuration" },
  { path: ".git/hooks", reason: "commands may not change git hooks" },
  { path: ".vscode", reason: "commands may not change editor settings" },
  { path: ".idea", reason: "commands may not change editor settings" },
  { path: ".umbra/config.json", reason: "commands may not change umbra's settings" },
  { path: ".gitignore", reason: "commands may not change ignore files" },
  { path: ".umbraignore", reason: "commands may not change ignore files" },
  { path: ".cursorignore", reason: "commands may not change ignore files" },
]);

/**
 * Credential files and folders of the home folder, hidden when `sandbox.hideCredentials` is on: keys
 * and tokens of ssh, gpg, clouds, registries and package managers, git credential stores, databases,
 * shell histories, browser profiles and the data folders of AI coding tools (their API keys and
 * transcripts).
 */
export const HOME_CREDENTIAL_PATHS: readonly string[] = Object.freeze([
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".pypirc",
  ".config/pip",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  ".gradle/gradle.properties",
  ".gem/credentials",
  ".nuget/NuGet/NuGet.Config",
  ".composer/auth.json",
  ".config/composer/auth.json",
  ".pgpass",
  ".my.cnf",
  ".docker",
  ".config/containers/auth.json",
  ".terraform.d",
  ".vault-token",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/doctl",
  ".oci",
  ".password-store",
  ".local/share/keyrings",
  ".bash_history",
  ".zsh_history",
  ".local/share/fish/fish_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  ".sqlite_history",
  ".lesshst",
  ".viminfo",
  ".mozilla",
  ".config/google-chrome",
  ".config/chromium",
  ".config/BraveSoftware",
  ".config/microsoft-edge",
  ".config/vivaldi",
  ".config/opera",
  ".var/app",
  ".claude",
  ".claude.json",
  ".codex",
  ".gemini",
  ".cursor",
  ".aider",
  ".continue",
  ".config/opencode",
  ".local/share/opencode",
  ".config/github-copilot",
  ".config/Code/User/globalStorage",
  ".vscode-server/data/User/globalStorage",
]);

/**
 * Files of the system that hold secrets: readable to root only, so they matter when umbra itself runs
 * as root (the sandbox then keeps root's rights on files). Hidden always, whoever runs umbra.
 */
export const SYSTEM_SECRET_PATHS: readonly string[] = Object.freeze([
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/etc/ssh/ssh_host_rsa_key",
  "/etc/ssh/ssh_host_ecdsa_key",
  "/etc/ssh/ssh_host_ed25519_key",
  "/etc/ssh/ssh_host_dsa_key",
  "/etc/ssl/private",
  "/etc/security/opasswd",
]);

/** Home-relative paths that may never become writable: a write there could run code outside the sandbox. */
const UNSAFE_WRITABLE_HOME_PATHS = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".config",
  ".local/bin",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".gitconfig",
];

const MODE_RANK: Record<SandboxMode, number> = { "read-only": 0, "workspace-write": 1, "full-access": 2 };

/** Whether mode `a` allows more than mode `b`. */
export function looserMode(a: SandboxMode, b: SandboxMode): boolean {
  return MODE_RANK[a] > MODE_RANK[b];
}

// ---------------------------------------------------------------------------------------------------
// Admin policy

const limitsCapSchema = z
  .object({
    processes: z.number().int().positive(),
    memoryBytes: z.number().int().positive(),
    cpuSeconds: z.number().int().positive(),
    outputBytes: z.number().int().positive(),
    timeoutMs: z.number().int().positive(),
  })
  .partial()
  .strict();

const adminSandboxSchema = z
  .object({
    /** The loosest mode allowed (`workspace-write` forbids full-access, `read-only` forbids writes). */
    mode: z.enum(["read-only", "workspace-write", "full-access"]).optional(),
    /** false: no command gets network access. `{ enabled: false }` says the same. */
    network: z
      .union([
        z.boolean(),
        z.object({ enabled: z.boolean().optional(), allowCommands: z.array(z.string()).optional() }).strict(),
      ])
      .optional(),
    /** Upper bounds of the limits. */
    limits: limitsCapSchema.optional(),
    /** Added to the protected and hidden paths. */
    protectedPaths: z.array(z.string().min(1)).optional(),
    hiddenPaths: z.array(z.string().min(1)).optional(),
    /** Never writable: writable roots at or below these are dropped; inside a writable root they are protected. */
    denyWrite: z.array(z.string().min(1)).optional(),
    /** The caches that may be writable (the configured ones are intersected with these). */
    caches: z.array(z.enum(SANDBOX_CACHE_NAMES)).optional(),
    env: z
      .object({
        /** Never passed through. */
        deny: z.array(z.string().min(1)).optional(),
        /** Secret-looking names that a configuration may pass through. */
        allowSecrets: z.array(z.string().min(1)).optional(),
        allow: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    // Keys that could only loosen the policy: accepted so that the file parses, ignored with a warning.
    writableRoots: z.array(z.string()).optional(),
    hideCredentials: z.boolean().optional(),
  })
  .strict();

const adminFileSchema = z.object({ sandbox: adminSandboxSchema.default({}) }).strict();

/** The admin policy (`/etc/umbra/policy.json`, key `sandbox`): it can only tighten the sandbox. */
export type AdminPolicy = z.infer<typeof adminSandboxSchema> & { source?: string };

/** Parses the text of an admin policy file. Invalid files throw ConfigError: a broken policy fails closed. */
export function parseAdminPolicy(text: string, source: string): AdminPolicy {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`admin policy ${source} is not valid JSON: ${(error as Error).message}`);
  }
  const result = adminFileSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(
      `invalid admin policy ${source} at ${issue?.path.join(".") || "(top)"}: ${issue?.message ?? "?"}`,
    );
  }
  return { ...result.data.sandbox, source };
}

/**
 * Reads the admin policy: `file`, else `$UMBRA_ADMIN_POLICY`, else /etc/umbra/policy.json. Undefined when
 * the file does not exist; ConfigError when it exists but cannot be read or is invalid.
 */
export async function loadAdminPolicy(
  file?: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AdminPolicy | undefined> {
  const path = file ?? (env.UMBRA_ADMIN_POLICY || ADMIN_POLICY_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ConfigError(`cannot read admin policy ${path}: ${code ?? (error as Error).message}`);
  }
  return parseAdminPolicy(text, path);
}

/** Whether the admin policy forbids network access to every command. */
export function adminForbidsNetwork(admin: AdminPolicy | undefined): boolean {
  if (!admin || admin.network === undefined) return false;
  return typeof admin.network === "boolean" ? !admin.network : admin.network.enabled === false;
}

// ---------------------------------------------------------------------------------------------------
// Environment

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "i");
}

const SECRET_REGEXPS = SECRET_ENV_PATTERNS.map(globToRegExp);
const SECRET_PREFIXES = SECRET_ENV_PATTERNS.filter((p) => p.endsWith("*") && !p.startsWith("*")).map((p) =>
  p.slice(0, -1).toUpperCase(),
);

/** Whether an environment variable name looks like it holds a credential. */
export function isSecretEnvName(name: string): boolean {
  return SECRET_REGEXPS.some((pattern) => pattern.test(name));
}

const ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*\*?$|^\*$/;

/**
 * Why an allowlist entry may not be used, or undefined when it may. A name is refused when it looks like
 * a secret; a prefix (`NAME_*`) when it could only be a secret's or would match every name.
 */
export function refusedEnvEntry(entry: string, allowSecrets: readonly string[] = []): string | undefined {
  if (!ENV_ENTRY.test(entry)) return "is not a variable name or a NAME_* prefix";
  if (!entry.endsWith("*")) {
    if (isSecretEnvName(entry) && !allowSecrets.includes(entry)) return "looks like a secret";
    return undefined;
  }
  const prefix = entry.slice(0, -1).toUpperCase();
  if (prefix === "") return "would pass every variable, secrets included";
  if (isSecretEnvName(prefix)) return "looks like a secret";
  if (SECRET_PREFIXES.some((secret) => secret.startsWith(prefix) || prefix.startsWith(secret))) {
    return "would pass secrets";
  }
  return undefined;
}

function envEntryMatches(entry: string, name: string): boolean {
  return entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : name === entry;
}

/** Whether `name` passes the allowlist: named exactly, or matched by a `PREFIX*` and not secret-looking. */
function passesEnv(name: string, allowlist: readonly string[]): boolean {
  if (allowlist.includes(name)) return true;
  return allowlist.some((entry) => envEntryMatches(entry, name)) && !isSecretEnvName(name);
}

/**
 * The environment a sandboxed command gets: the variables named by the allowlist (exact names, or
 * `PREFIX*`), except secret-looking names that only a prefix matched.
 */
export function filterEnv(env: NodeJS.ProcessEnv, allowlist: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && passesEnv(name, allowlist)) out[name] = value;
  }
  return out;
}

/** Variables that shells set for themselves: dropped like the rest, but not worth a word. */
const SHELL_BOOKKEEPING = new Set(["_", "PWD", "OLDPWD", "SHLVL"]);

/** The names (sorted, never values) of the variables of `env` that filterEnv drops, shell bookkeeping aside. */
export function droppedEnvNames(env: NodeJS.ProcessEnv, allowlist: readonly string[]): string[] {
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !SHELL_BOOKKEEPING.has(name) && !passesEnv(name, allowlist))
    .sort();
}

// ---------------------------------------------------------------------------------------------------
// Paths

/** `path` equals `parent` or lies below it (both absolute, normalized). */
export function isAtOrBelow(path: string, parent: string): boolean {
  if (path === parent || parent === sep) return true;
  return path.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

function dedupeSorted(paths: Iterable<string>): string[] {
  return [...new Set(paths)].sort();
}

/** Drops paths that lie below another path of the list. */
function withoutNested(paths: readonly string[]): string[] {
  const sorted = dedupeSorted(paths);
  return sorted.filter((path) => !sorted.some((other) => other !== path && isAtOrBelow(path, other)));
}

/** Expands `~`, resolves against `base`; does not touch the disk. */
export function expandPath(path: string, base: string, home: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(base, path);
}

/** The real path when it exists, else undefined. */
async function existingReal(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/** The real path of the longest existing ancestor joined with the rest: a path that may not exist yet. */
async function realOrPlanned(path: string): Promise<string> {
  const real = await existingReal(path);
  if (real) return real;
  const parent = resolve(path, "..");
  if (parent === path) return path;
  return join(await realOrPlanned(parent), path.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
}

/** Why `root` may not be writable, or undefined. */
export function unsafeWritableRoot(root: string, home: string, data: string): string | undefined {
  if (root === sep) return "it is the whole filesystem";
  if (isAtOrBelow(home, root)) return "it holds your home folder";
  if (isAtOrBelow(data, root) || isAtOrBelow(root, data)) return "it holds umbra's data (branches, indexes)";
  for (const rel of UNSAFE_WRITABLE_HOME_PATHS) {
    const sensitive = join(home, rel);
    if (isAtOrBelow(root, sensitive)) return `${sensitive} holds credentials or start-up files`;
  }
  return undefined;
}

/** Candidate folders of each cache (only those that exist become writable). */
export function cachePaths(name: CacheName, home: string, env: NodeJS.ProcessEnv): string[] {
  const xdgCache = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
  const cacheHome = xdgCache ?? join(home, ".cache");
  const macCaches = join(home, "Library", "Caches");
  switch (name) {
    case "npm":
      return [env.npm_config_cache || join(home, ".npm")];
    case "yarn":
      return [join(cacheHome, "yarn"), join(home, ".yarn", "berry", "cache"), join(macCaches, "Yarn")];
    case "pnpm":
      return [join(home, ".local", "share", "pnpm", "store"), join(home, "Library", "pnpm", "store")];
    case "pip":
      return [env.PIP_CACHE_DIR || join(cacheHome, "pip"), join(macCaches, "pip")];
    case "go": {
      const gopath = env.GOPATH?.split(":")[0] || join(home, "go");
      return [
        env.GOCACHE || join(cacheHome, "go-build"),
        join(macCaches, "go-build"),
        env.GOMODCACHE || join(gopath, "pkg", "mod"),
      ];
    }
    case "cargo": {
      const cargoHome = env.CARGO_HOME || join(home, ".cargo");
      return [join(cargoHome, "registry"), join(cargoHome, "git")];
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Resolution

/** What the command line asks for; these win over the configuration (the admin policy still caps them). */
export interface PolicyFlags {
  mode?: SandboxMode;
  /** Network access was asked for and approved. */
  network?: boolean;
  writableRoots?: string[];
  timeoutMs?: number;
  limits?: Partial<SandboxLimits>;
}

export interface ResolvePolicyInput {
  /** The workspace folder (resolved to its real path). */
  workspace: string;
  /** The `sandbox` block of the effective configuration (defaults < user < workspace < environment). */
  config: SandboxConfig;
  flags?: PolicyFlags;
  /** The admin policy (see loadAdminPolicy); undefined when there is none. */
  admin?: AdminPolicy | undefined;
  /** For `~`, caches and the data directory (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Options of the workspace walk that finds ignore-file matches. */
  walk?: FindWorkspacePathsOptions;
}

export interface ResolvedPolicy {
  policy: SandboxPolicy;
  /** For checkGitAfterRun when the command runs in the user's folder (workspace-write mode only). */
  git?: GitGuard;
  /** One line each: settings that were refused or capped, and why. */
  warnings: string[];
}

/** The limits: configuration < flags, each capped by the admin policy. Pure. */
export function resolveLimits(
  configured: Partial<SandboxLimits>,
  flags: PolicyFlags,
  admin: AdminPolicy | undefined,
  warnings: string[],
): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...configured, ...flags.limits };
  if (flags.timeoutMs !== undefined) limits.timeoutMs = flags.timeoutMs;
  for (const key of Object.keys(limits) as (keyof SandboxLimits)[]) {
    const cap = admin?.limits?.[key];
    // 0 means "no limit", which is above any cap.
    if (cap !== undefined && (limits[key] > cap || (limits[key] === 0 && cap > 0))) {
      warnings.push(`sandbox limit ${key} ${limits[key]} is above the admin cap; using ${cap}`);
      limits[key] = cap;
    }
  }
  return limits;
}

/** The mode: flags < configuration; full-access only when asked for on the command line. Pure. */
export function resolveMode(
  configured: SandboxMode,
  flags: PolicyFlags,
  admin: AdminPolicy | undefined,
  warnings: string[],
): SandboxMode {
  let mode = flags.mode ?? configured;
  if (flags.mode === undefined && configured === "full-access") {
    warnings.push(
      "sandbox.mode full-access in a configuration file is ignored: full-access must be asked for on the command line (--full-access)",
    );
    mode = "workspace-write";
  }
  if (admin?.mode && looserMode(mode, admin.mode)) {
    warnings.push(`sandbox mode ${mode} is forbidden by the admin policy; using ${admin.mode}`);
    mode = admin.mode;
  }
  return mode;
}

/** The environment allowlist: defaults + configured names, minus secrets and what the admin denies. Pure. */
export function resolveEnvAllowlist(
  configured: readonly string[],
  admin: AdminPolicy | undefined,
  warnings: string[],
): string[] {
  const allowSecrets = admin?.env?.allowSecrets ?? [];
  const out = [...DEFAULT_ENV_ALLOWLIST];
  for (const entry of configured) {
    const refused = refusedEnvEntry(entry, allowSecrets);
    if (refused) warnings.push(`sandbox.env.allow entry ${entry} ${refused}; it is not passed through`);
    else out.push(entry);
  }
  const deny = admin?.env?.deny ?? [];
  return dedupeSorted(out).filter((entry) => !deny.some((denied) => envEntryMatches(denied, entry)));
}

function adminLoosenings(admin: AdminPolicy, warnings: string[]): void {
  const where = admin.source ? ` (${admin.source})` : "";
  const ignored = (key: string) =>
    warnings.push(`admin policy${where}: ${key} could only loosen the sandbox; ignored`);
  if (admin.writableRoots?.length) ignored("sandbox.writableRoots");
  if (admin.hideCredentials === false) ignored("sandbox.hideCredentials false");
  if (admin.env?.allow?.length) ignored("sandbox.env.allow");
  if (typeof admin.network === "object" && admin.network.allowCommands?.length)
    ignored("sandbox.network.allowCommands");
}

/**
 * The sandbox policy of a workspace: built-in defaults < the `sandbox` block of the configuration (user,
 * workspace `.umbra/config.json`, environment) < flags, then the admin policy, which can only tighten:
 * a cap on the mode and the limits, network off, more protected and hidden paths, fewer writable roots,
 * caches and environment variables. Looser admin values and unsafe settings are ignored with a warning.
 */
export async function resolvePolicy(input: ResolvePolicyInput): Promise<ResolvedPolicy> {
  const env = input.env ?? process.env;
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const realHome = (await existingReal(home)) ?? home;
  const data = await realOrPlanned(dataDir(env));
  const flags = input.flags ?? {};
  const { config, admin } = input;
  const warnings: string[] = [];
  const workspace = await realpath(input.workspace);
  if (admin) adminLoosenings(admin, warnings);

  const mode = resolveMode(config.mode, flags, admin, warnings);
  let network = flags.network ?? mode === "full-access";
  if (network && adminForbidsNetwork(admin)) {
    warnings.push("network access is forbidden by the admin policy; the command runs without it");
    network = false;
  }
  const limits = resolveLimits(config.limits, flags, admin, warnings);
  const envAllowlist = resolveEnvAllowlist(config.env.allow, admin, warnings);

  const expand = (path: string) => expandPath(path, workspace, realHome);
  const denyWrite = await Promise.all((admin?.denyWrite ?? []).map((path) => realOrPlanned(expand(path))));

  // Writable roots.
  let writableRoots: string[] = [];
  if (mode === "full-access") writableRoots = [sep];
  else if (mode === "workspace-write") {
    writableRoots.push(workspace);
    for (const [key, list] of [
      ["sandbox.writableRoots", config.writableRoots],
      ["flags.writableRoots", flags.writableRoots ?? []],
    ] as const) {
      for (const entry of list) {
        const real = await existingReal(expand(entry));
        if (!real) {
          warnings.push(`${key}: ${entry} does not exist; it is not made writable`);
          continue;
        }
        const unsafe = unsafeWritableRoot(real, realHome, data);
        if (unsafe && !isAtOrBelow(real, workspace)) {
          warnings.push(`${key}: ${entry} may not be writable: ${unsafe}`);
          continue;
        }
        writableRoots.push(real);
      }
    }
    let caches: readonly CacheName[] = config.caches;
    if (admin?.caches) {
      const allowed = admin.caches;
      const dropped = caches.filter((name) => !allowed.includes(name));
      if (dropped.length) warnings.push(`caches not allowed by the admin policy: ${dropped.join(", ")}`);
      caches = caches.filter((name) => allowed.includes(name));
    }
    for (const name of caches) {
      for (const candidate of cachePaths(name, realHome, env)) {
        const real = await existingReal(candidate);
        if (real && !unsafeWritableRoot(real, realHome, data)) writableRoots.push(real);
      }
    }
    const denied = writableRoots.filter((root) => denyWrite.some((deny) => isAtOrBelow(root, deny)));
    for (const root of denied) warnings.push(`${root} may not be writable (admin policy)`);
    writableRoots = withoutNested(writableRoots.filter((root) => !denied.includes(root)));
  }

  // Hidden and protected paths.
  const hiddenPaths: string[] = [];
  let git: GitGuard | undefined;
  const hiddenMasks: HiddenMask[] = [];
  let linksCache: LinksCache | undefined;
  const protectedPaths: string[] = [];
  for (const path of admin?.hiddenPaths ?? []) {
    const real = await existingReal(expand(path));
    if (real) hiddenPaths.push(real);
  }
  for (const path of admin?.protectedPaths ?? []) protectedPaths.push(await realOrPlanned(expand(path)));
  for (const deny of denyWrite) {
    if (writableRoots.some((root) => isAtOrBelow(deny, root))) protectedPaths.push(deny);
  }
  if (mode !== "full-access") {
    const walk: FindWorkspacePathsOptions = {
      writableRoots,
      cacheFile: join(data, "sandbox", "walk", `${workspaceId(workspace)}.json`),
      ...input.walk,
    };
    const found = findWorkspacePaths(workspace, walk);
    if (found.truncated) {
      warnings.push(
        `the workspace has too many entries to find every .umbraignore match; some ignored files may stay readable`,
      );
    }
    hiddenPaths.push(...found.hidden);
    hiddenMasks.push(...found.masks);
    if (walk.cacheFile)
      linksCache = {
        file: walk.cacheFile.replace(/\.json$/, ".links.json"),
        walkFile: walk.cacheFile,
        unchanged: found.listed === 0 && !found.truncated,
      };
    for (const path of config.hiddenPaths) {
      const real = await existingReal(expand(path));
      if (real) hiddenPaths.push(real);
    }
    if (config.hideCredentials) {
      for (const rel of HOME_CREDENTIAL_PATHS) {
        const real = await existingReal(join(realHome, rel));
        if (real) hiddenPaths.push(real);
      }
    }
    for (const path of SYSTEM_SECRET_PATHS) {
      const real = await existingReal(path);
      if (real) hiddenPaths.push(real);
    }
    for (const { path } of PROTECTED_WORKSPACE_PATHS) {
      if (path.startsWith(".git/") && !found.gitIsDir) continue;
      // Without a .umbra folder, the folder itself is protected: a sandbox backend can stand in for a
      // missing path, not for a missing path inside a missing folder.
      if (path.startsWith(".umbra/") && !found.umbraIsDir) {
        protectedPaths.push(join(workspace, ".umbra"));
        continue;
      }
      protectedPaths.push(join(workspace, path));
    }
    protectedPaths.push(...found.codeWorkspaces, ...found.ignoreFiles, ...found.umbraEntries);
    if (mode === "workspace-write") {
      const nested = found.gitEntries.filter((rel) => rel !== ".git").map((rel) => join(workspace, rel));
      const control = await gitControlPaths(workspace, nested, env);
      // A link itself (a `.git` link, a linked hooks folder) and what it points to are both kept.
      for (const path of control.protect)
        protectedPaths.push(
          join(await realOrPlanned(dirname(path)), basename(path)),
          await realOrPlanned(path),
        );
      warnings.push(...control.warnings);
      git = {
        root: workspace,
        entries: found.truncated ? undefined : new Set(found.gitEntries),
        watch: control.watch,
        gitDirs: new Set(control.gitDirs),
        hooksPaths: control.hooksPaths,
        commonDirs: control.commonDirs,
        before: control.before,
        ignoreFiles: new Set(found.ignoreFiles),
        walk,
      };
    }
    for (const path of config.protectedPaths) protectedPaths.push(await realOrPlanned(expand(path)));
    // A workspace that holds the home folder (umbra run --root ~) must not make start-up files,
    // credentials or umbra's own data writable.
    for (const path of [...UNSAFE_WRITABLE_HOME_PATHS.map((rel) => join(realHome, rel)), data]) {
      if (writableRoots.some((root) => isAtOrBelow(path, root))) protectedPaths.push(path);
    }
  }

  // Other names (hard links) in the workspace of the hidden files are hidden too.
  const links = findHiddenLinks({
    workspace,
    hiddenPaths: dedupeSorted(hiddenPaths),
    masks: hiddenMasks,
    ...(linksCache ? { cache: linksCache } : {}),
  });
  hiddenPaths.push(...links.paths);
  hiddenMasks.push(...links.masks);
  warnings.push(...links.warnings);

  const policy: SandboxPolicy = {
    mode,
    workspace,
    writableRoots,
    hiddenPaths: dedupeSorted(hiddenPaths),
    ...(hiddenMasks.length > 0 ? { hiddenMasks } : {}),
    protectedPaths: dedupeSorted(protectedPaths),
    network,
    envAllowlist,
    limits,
  };
  return { policy, warnings, ...(git ? { git } : {}) };
}

/** The workspace-relative form of `path` (posix), or undefined when it is outside the workspace. */
export function workspaceRelative(workspace: string, path: string): string | undefined {
  if (!isAtOrBelow(path, workspace)) return undefined;
  return relative(workspace, path).split(sep).join("/");
}
