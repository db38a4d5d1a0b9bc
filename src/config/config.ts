import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

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

/** Deep merge of plain objects; later layers win, arrays are replaced. */
export function mergeLayers(...layers: Json[]): Json {
  const out: Json = {};
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
 * Settings that only the user may make (user file, environment, flags): a workspace's own
 * `.umbra/config.json` comes with the repository, so a cloned repository could grant itself network
 * access, writes outside itself or the user's secrets with them. Each is a path of keys, with why it is refused.
 */
const USER_ONLY_KEYS: readonly { keys: readonly string[]; why: string }[] = [
  {
    keys: ["sandbox", "network", "allowCommands"],
    why: "a repository may not approve its own network access; list the commands in ~/.config/umbra/config.json",
  },
  {
    keys: ["sandbox", "writableRoots"],
    why: "a repository may not open folders outside itself to writes; list them in ~/.config/umbra/config.json",
  },
  {
    keys: ["sandbox", "env", "allow"],
    why: "a repository may not pass your environment (API keys, tokens) to its commands; list the variables in ~/.config/umbra/config.json",
  },
];

/** `layer` without the setting at `keys` (copies along the path), or undefined when it has none. */
function withoutKey(layer: Json, keys: readonly string[]): Json | undefined {
  const [key, ...rest] = keys;
  if (key === undefined || !(key in layer)) return undefined;
  if (rest.length === 0) {
    const { [key]: _dropped, ...kept } = layer;
    return kept;
  }
  const child = layer[key];
  const inner = isObject(child) ? withoutKey(child, rest) : undefined;
  return inner === undefined ? undefined : { ...layer, [key]: inner };
}

/** The workspace layer without the user-only settings; `onWarning` hears about each one dropped. */
export function withoutUserOnlyKeys(layer: Json, file: string, onWarning?: (message: string) => void): Json {
  let out = layer;
  for (const { keys, why } of USER_ONLY_KEYS) {
    const kept = withoutKey(out, keys);
    if (kept === undefined) continue;
    out = kept;
    onWarning?.(`${keys.join(".")} in ${file} is ignored: ${why}`);
  }
  return out;
}

/**
 * The effective configuration: built-in defaults < `~/.config/umbra/config.json` <
 * `<workspace>/.umbra/config.json` < `UMBRA_*` environment < command-line flags. The workspace file
 * cannot set the user-only keys (USER_ONLY_KEYS): they are dropped from it, with a warning.
 */
export function loadConfig(options: LoadConfigOptions = {}): UmbraConfig {
  const env = options.env ?? process.env;
  const configHome = env.XDG_CONFIG_HOME ?? join(homedir(), ".config");
  const userFile = join(configHome, "umbra", "config.json");
  const layers = [readJsonLayer(userFile)];
  if (options.workspaceRoot) {
    const file = join(options.workspaceRoot, ".umbra", "config.json");
    layers.push(withoutUserOnlyKeys(readJsonLayer(file), file, options.onWarning));
  }
  layers.push(environmentLayer(env), options.flags ?? {});
  const result = configSchema.safeParse(mergeLayers(...layers));
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(
      `invalid configuration at ${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "?"}`,
    );
  }
  return result.data;
}
