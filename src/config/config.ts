import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { tightenWorkspaceLayer } from "./tighten.js";

/** Embedder settings: the built-in code model, an OpenAI-compatible endpoint, or a local ONNX model. */
const embedderSchema = z.discriminatedUnion("provider", [
  z.object({ provider: z.literal("code-model"), dimensions: z.number().int().min(8).max(1024).default(256) }),
  z.object({
    provider: z.literal("openai"),
    baseUrl: z.string().url(),
    model: z.string().min(1),
    apiKeyEnv: z.string().default("UMBRA_EMBEDDINGS_API_KEY"),
    dimensions: z.number().int().positive().optional(),
  }),
  z.object({ provider: z.literal("onnx"), dir: z.string().min(1) }),
]);

/** Package-manager and build caches that `sandbox.caches` can make writable (see src/sandbox/policy.ts). */
export const SANDBOX_CACHE_NAMES = ["npm", "yarn", "pnpm", "pip", "go", "cargo"] as const;

const GIB = 1024 * 1024 * 1024;

/** Resource limits of one sandboxed command. */
const sandboxLimitsSchema = z.object({
  processes: z.number().int().positive().default(1024),
  memoryBytes: z
    .number()
    .int()
    .positive()
    .default(8 * GIB),
  cpuSeconds: z.number().int().positive().default(600),
  outputBytes: z
    .number()
    .int()
    .positive()
    .default(16 * 1024 * 1024),
  timeoutMs: z.number().int().positive().default(600_000),
});

/**
 * The sandbox of commands run for agents (`umbra run`, run_command). Paths may be absolute, start with
 * `~/`, or be relative to the workspace. The admin file (/etc/umbra/policy.json) can only tighten this.
 */
const sandboxSchema = z.object({
  /** `full-access` is honoured only when asked for explicitly on the command line (`--full-access`). */
  mode: z.enum(["read-only", "workspace-write", "full-access"]).default("workspace-write"),
  /** Extra writable folders (workspace-write mode); they must exist. */
  writableRoots: z.array(z.string().min(1)).default([]),
  /** Caches made writable in workspace-write mode, when they exist. */
  caches: z.array(z.enum(SANDBOX_CACHE_NAMES)).default(["npm", "yarn", "pnpm", "pip", "go", "cargo"]),
  /** Extra paths made unreadable, on top of what .umbraignore and .cursorignore match. */
  hiddenPaths: z.array(z.string().min(1)).default([]),
  /** Hide credential files of the home folder (~/.ssh, ~/.aws, ~/.netrc, …) that exist. */
  hideCredentials: z.boolean().default(true),
  /** Extra paths kept read-only, on top of .git/config, .git/hooks, editor and umbra settings, ignore files. */
  protectedPaths: z.array(z.string().min(1)).default([]),
  network: z
    .object({
      /** Commands approved for network access without asking: a command name, or a glob of the command line. */
      allowCommands: z.array(z.string().min(1)).default([]),
    })
    .default({}),
  env: z
    .object({
      /** Environment variables passed through on top of the defaults; `NAME_*` is a prefix. */
      allow: z.array(z.string().min(1)).default([]),
    })
    .default({}),
  limits: sandboxLimitsSchema.default({}),
});

/**
 * The coding agent (`umbra agent`): the model it talks to and the limits of one session. The API key is
 * never stored here: it is read from the environment variable named by `apiKeyEnv`.
 */
const agentSchema = z.object({
  provider: z.enum(["openai-compatible", "anthropic"]).default("openai-compatible"),
  /** The endpoint, e.g. `http://127.0.0.1:11434/v1` (OpenAI-compatible) or Anthropic's API base URL. */
  baseUrl: z.string().url().optional(),
  model: z.string().min(1).optional(),
  /** The environment variable holding the API key (default UMBRA_MODEL_API_KEY; ANTHROPIC_API_KEY for Anthropic). */
  apiKeyEnv: z.string().min(1).optional(),
  /** Model calls (tool-using steps) per session. */
  maxSteps: z.number().int().positive().default(40),
  /** Wall time of a session. */
  maxTimeMs: z
    .number()
    .int()
    .positive()
    .default(20 * 60_000),
  /** Input plus output tokens of a session. */
  maxTokens: z.number().int().positive().default(2_000_000),
  /** The model's context window; old tool output is compacted when a request nears it. */
  contextTokens: z.number().int().positive().default(128_000),
  /** Upper bound of one model call (connection and streaming together). */
  requestTimeoutMs: z.number().int().positive().default(180_000),
  /** Retries of a model call that failed with 429, 5xx, a time-out or a broken stream. */
  maxRetries: z.number().int().nonnegative().default(4),
  /** Rounds in which the agent is sent back to fix failing lints or tests after it said it was done. */
  maxFixups: z.number().int().nonnegative().default(2),
  /** Run in the user's folder (sandboxed) after a diff is applied, e.g. `npm test`. */
  testCommand: z.string().min(1).optional(),
  /**
   * The workspace's own `agent.testCommand` (from its `.umbra/config.json`): it runs only after the user
   * confirmed it once for this repository (see src/config/trust.ts); a user's `testCommand` wins.
   */
  workspaceTestCommand: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** Prices in US dollars per million tokens; when set, sessions report their cost. */
  price: z
    .object({ inputPerMillion: z.number().nonnegative(), outputPerMillion: z.number().nonnegative() })
    .optional(),
});

const configSchema = z.object({
  index: z
    .object({
      maxFileBytes: z
        .number()
        .int()
        .positive()
        .default(1024 * 1024),
      excludeDirs: z.array(z.string()).optional(),
      chunkTokens: z.number().int().min(50).max(4000).default(400),
      embedder: embedderSchema.default({ provider: "code-model", dimensions: 256 }),
      batchSize: z.number().int().positive().default(64),
      filesPerBatch: z.number().int().positive().default(200),
    })
    .default({}),
  watch: z
    .object({
      intervalMs: z
        .number()
        .int()
        .positive()
        .default(5 * 60_000),
      debounceMs: z.number().int().nonnegative().default(300),
    })
    .default({}),
  shadow: z
    .object({
      /** How branches are made: `auto` tries kernel overlayfs, fuse-overlayfs, reflink copy, copy. */
      mode: z.enum(["auto", "overlay", "fuse-overlayfs", "reflink", "copy"]).default("auto"),
      /** Branches whose owning process is gone are garbage-collected after this many hours. */
      gcAfterHours: z.number().nonnegative().default(24),
    })
    .default({}),
  lsp: z
    .object({
      /** A language server with no request for this long is shut down. */
      idleMinutes: z.number().positive().default(15),
      /** Upper bound for any single request to a language server. */
      requestTimeoutMs: z.number().int().positive().default(10_000),
      /** Upper bound for diagnostics of one edit to settle; past it the result is marked partial. */
      lintTimeoutMs: z.number().int().positive().default(15_000),
      /** Push-diagnostics servers: how long no new diagnostics must arrive before a result is settled. */
      quietMs: z.number().int().nonnegative().default(150),
    })
    .default({}),
  sandbox: sandboxSchema.default({}),
  agent: agentSchema.default({}),
  mcp: z
    .object({
      /**
       * `accept` over MCP writes into the user's folder without asking them first (through elicitation).
       * Only the user's own config may set it.
       */
      autoAccept: z.boolean().default(false),
    })
    .default({}),
  /** The engine (`umbra serve`): the user's own, so only their config sets it (never a workspace's). */
  engine: z
    .object({
      /** It stops after this many minutes with no client connected and no request (0: never). */
      idleMinutes: z.number().nonnegative().max(1_000_000).default(30),
    })
    .default({}),
});

export type UmbraConfig = z.infer<typeof configSchema>;
export type EmbedderConfig = z.infer<typeof embedderSchema>;
export type ShadowConfig = UmbraConfig["shadow"];
export type LspConfig = UmbraConfig["lsp"];
export type SandboxConfig = UmbraConfig["sandbox"];
export type SandboxLimitsConfig = SandboxConfig["limits"];
export type AgentConfig = UmbraConfig["agent"];

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Json = { [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Deep merge of plain objects; later layers win, arrays are replaced. The result has no prototype: a key
 * named `__proto__` (JSON gives it as an own key) stays a key and never becomes the object's prototype.
 */
export function mergeLayers(...layers: Json[]): Json {
  const out: Json = Object.create(null);
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      const current = out[key];
      out[key] = isObject(current) && isObject(value) ? mergeLayers(current, value) : value;
    }
  }
  return out;
}

function readJsonLayer(file: string): Json {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw new ConfigError(`${file} must hold a JSON object`);
  return parsed;
}

/** Settings taken from `UMBRA_*` environment variables. */
export function environmentLayer(env: NodeJS.ProcessEnv): Json {
  const index: Json = {};
  if (env.UMBRA_MAX_FILE_BYTES) index.maxFileBytes = Number(env.UMBRA_MAX_FILE_BYTES);
  if (env.UMBRA_EMBEDDINGS_BASE_URL) {
    index.embedder = {
      provider: "openai",
      baseUrl: env.UMBRA_EMBEDDINGS_BASE_URL,
      model: env.UMBRA_EMBEDDINGS_MODEL ?? "",
    };
  } else if (env.UMBRA_EMBEDDINGS_ONNX_DIR) {
    index.embedder = { provider: "onnx", dir: env.UMBRA_EMBEDDINGS_ONNX_DIR };
  }
  const agent: Json = {};
  if (env.UMBRA_MODEL_BASE_URL) agent.baseUrl = env.UMBRA_MODEL_BASE_URL;
  if (env.UMBRA_MODEL) agent.model = env.UMBRA_MODEL;
  if (env.UMBRA_MODEL_PROVIDER) agent.provider = env.UMBRA_MODEL_PROVIDER;
  const layer: Json = {};
  if (Object.keys(index).length > 0) layer.index = index;
  if (Object.keys(agent).length > 0) layer.agent = agent;
  return layer;
}

export interface LoadConfigOptions {
  workspaceRoot?: string;
  env?: NodeJS.ProcessEnv;
  flags?: Json;
  /** Told (one line each) about workspace settings that were ignored, and why. */
  onWarning?: (message: string) => void;
}

/**
 * The workspace's own `.umbra/config.json`, read without following a link: the file and its folder
 * must be what they say they are, inside the workspace. Errors never quote the file's content.
 */
function readWorkspaceLayer(root: string): { file: string; layer: Json } {
  const dir = join(root, ".umbra");
  const file = join(dir, "config.json");
  let fd: number;
  try {
    if (!lstatSync(dir).isDirectory()) return { file, layer: {} };
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { file, layer: {} };
    if (code === "ELOOP") throw new ConfigError(`${file} is a symbolic link; umbra does not follow it`);
    throw new ConfigError(`cannot read ${file}: ${code ?? "error"}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ConfigError(`${file} is not a regular file`);
    if (stat.size > MAX_WORKSPACE_CONFIG_BYTES) throw new ConfigError(`${file} is larger than 1 MiB`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(fd, "utf8"));
    } catch {
      throw new ConfigError(`${file} is not valid JSON`);
    }
    if (!isObject(parsed)) throw new ConfigError(`${file} must hold a JSON object`);
    return { file, layer: parsed };
  } finally {
    closeSync(fd);
  }
}

const MAX_WORKSPACE_CONFIG_BYTES = 1024 * 1024;

function parseConfig(layer: Json): z.SafeParseReturnType<unknown, UmbraConfig> {
  return configSchema.safeParse(layer);
}

function invalid(issue: z.ZodIssue | undefined): ConfigError {
  return new ConfigError(
    `invalid configuration at ${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "?"}`,
  );
}

/** Whether `layer` sets the setting at `path` (or one below it). */
function sets(layer: Json, path: readonly (string | number)[]): boolean {
  let node: unknown = layer;
  for (const key of path) {
    if (!isObject(node) || !(String(key) in node)) return false;
    node = node[String(key)];
  }
  return true;
}

/**
 * The effective configuration: built-in defaults < `~/.config/umbra/config.json` <
 * `<workspace>/.umbra/config.json` < `UMBRA_*` environment < command-line flags. The workspace file
 * may only tighten (src/config/tighten.ts): what it may not set, or sets to an invalid value, is
 * dropped with a warning, and its `agent.testCommand` lands in `agent.workspaceTestCommand`.
 */
export function loadConfig(options: LoadConfigOptions = {}): UmbraConfig {
  const env = options.env ?? process.env;
  const configHome = env.XDG_CONFIG_HOME ?? join(homedir(), ".config");
  const userLayer = readJsonLayer(join(configHome, "umbra", "config.json"));
  const user = parseConfig(userLayer);
  if (!user.success) throw invalid(user.error.issues[0]);
  const after = [environmentLayer(env), options.flags ?? {}];
  if (!options.workspaceRoot) {
    const result = parseConfig(mergeLayers(userLayer, ...after));
    if (!result.success) throw invalid(result.error.issues[0]);
    return result.data;
  }
  const { file, layer } = readWorkspaceLayer(options.workspaceRoot);
  const tightened = tightenWorkspaceLayer(layer, user.data, file);
  for (const line of tightened.ignored) options.onWarning?.(line);
  let workspace = tightened.layer;
  if (tightened.testCommand !== undefined) {
    workspace = mergeLayers(workspace, { agent: { workspaceTestCommand: tightened.testCommand } });
  }
  for (;;) {
    const result = parseConfig(mergeLayers(userLayer, workspace, ...after));
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    const path = issue?.path ?? [];
    if (!sets(workspace, path) || path.length === 0) throw invalid(issue);
    options.onWarning?.(`${path.join(".")} in ${file} is ignored: ${unquoted(issue)}`);
    workspace = withoutPath(workspace, path.map(String));
  }
}

/**
 * Why a workspace value is invalid, without quoting the value: it comes from the repository and could
 * hold a newline that fakes a line of umbra's own, or a terminal escape.
 */
function unquoted(issue: z.ZodIssue | undefined): string {
  if (issue === undefined) return "invalid";
  if (issue.code === "invalid_enum_value")
    return `expected one of ${issue.options.map((option) => JSON.stringify(option)).join(", ")}`;
  if (issue.code === "invalid_literal") return `expected ${JSON.stringify(issue.expected)}`;
  // zod's other messages name types and bounds only
  return issue.message;
}

/** `layer` without the setting at `keys` (copies along the path). */
function withoutPath(layer: Json, keys: readonly string[]): Json {
  const [key, ...rest] = keys;
  if (key === undefined || !(key in layer)) return layer;
  if (rest.length === 0) {
    const { [key]: _dropped, ...kept } = layer;
    return kept;
  }
  const child = layer[key];
  return isObject(child) ? { ...layer, [key]: withoutPath(child, rest) } : withoutPath(layer, [key]);
}
