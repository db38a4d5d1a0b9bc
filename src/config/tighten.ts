/**
 * What a workspace's own `.umbra/config.json` may do. The file comes with the repository, and a cloned
 * repository is untrusted: it may tune umbra for itself and tighten what its commands and agents may do,
 * never loosen it. Every setting has one rule; a setting with no rule is refused. Pure: the caller gives
 * the user's effective configuration (defaults < user file) to compare against.
 */

type Json = { [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * - `free`: any value (tuning that neither sends data anywhere nor loosens a limit);
 * - `min` / `max`: a number at most / at least the user's (a tighter limit; gc that keeps data longer);
 * - `union`: workspace-relative paths added to the user's list (more hidden or protected paths);
 * - `subset`: only entries the user's list has (fewer writable caches, fewer excluded folders);
 * - `true`: can only be switched on (credential hiding);
 * - `mode`: read-only < workspace-write, never wider than the user's;
 * - `confirm`: kept, but used only after the user confirmed it once for this repository;
 * - a string: refused, with why.
 */
type Rule = "free" | "min" | "max" | "union" | "subset" | "true" | "mode" | "confirm" | { refused: string };

const OFF_MACHINE = {
  refused:
    "a repository may not choose where code or secrets are sent; set it in ~/.config/umbra/config.json",
};

const RULES: Record<string, Rule> = {
  "index.maxFileBytes": "min",
  // an excluded folder is one the sandbox's walk and the git guard do not look inside
  "index.excludeDirs": "subset",
  "index.chunkTokens": "free",
  "index.embedder": OFF_MACHINE,
  "index.batchSize": "min",
  "index.filesPerBatch": "min",
  "watch.intervalMs": "free",
  "watch.debounceMs": "free",
  "shadow.mode": {
    refused: "a repository may not choose how its branches are stored; set it in ~/.config/umbra/config.json",
  },
  "shadow.gcAfterHours": "max",
  "lsp.idleMinutes": "min",
  "lsp.requestTimeoutMs": "min",
  "lsp.lintTimeoutMs": "min",
  "lsp.quietMs": "free",
  "sandbox.mode": "mode",
  "sandbox.writableRoots": {
    refused:
      "a repository may not open folders outside itself to writes; list them in ~/.config/umbra/config.json",
  },
  "sandbox.caches": "subset",
  "sandbox.hiddenPaths": "union",
  "sandbox.hideCredentials": "true",
  "sandbox.protectedPaths": "union",
  "sandbox.network.allowCommands": {
    refused:
      "a repository may not approve its own network access; list the commands in ~/.config/umbra/config.json",
  },
  "sandbox.env.allow": {
    refused:
      "a repository may not pass your environment (API keys, tokens) to its commands; list the variables in ~/.config/umbra/config.json",
  },
  "sandbox.limits.processes": "min",
  "sandbox.limits.memoryBytes": "min",
  "sandbox.limits.cpuSeconds": "min",
  "sandbox.limits.outputBytes": "min",
  "sandbox.limits.timeoutMs": "min",
  "agent.provider": OFF_MACHINE,
  "agent.baseUrl": OFF_MACHINE,
  "agent.model": OFF_MACHINE,
  "agent.apiKeyEnv": OFF_MACHINE,
  "agent.maxSteps": "min",
  "agent.maxTimeMs": "min",
  "agent.maxTokens": "min",
  "agent.contextTokens": "min",
  "agent.requestTimeoutMs": "min",
  "agent.maxRetries": "min",
  "agent.maxFixups": "min",
  "agent.testCommand": "confirm",
  "agent.temperature": "free",
  "agent.price": "free",
  "mcp.autoAccept": {
    refused:
      "a repository may not accept its own changes into your folder; set it in ~/.config/umbra/config.json",
  },
  "engine.idleMinutes": {
    refused: "the engine is yours, not a repository's; set it in ~/.config/umbra/config.json",
  },
};

const MODE_ORDER = ["read-only", "workspace-write", "full-access"];

/** A path a workspace may name: relative, inside the workspace, no `~`, no `..`, no NUL or newline. */
function insideWorkspace(path: unknown): path is string {
  if (typeof path !== "string" || path === "") return false;
  if (path.startsWith("/") || path.startsWith("~") || /[\0\n\r]/.test(path)) return false;
  return !path.split(/[\\/]+/).includes("..");
}

function valueAt(config: Json, keys: readonly string[]): unknown {
  let node: unknown = config;
  for (const key of keys) node = isObject(node) ? node[key] : undefined;
  return node;
}

/** Why `value` is refused under `rule` given the user's `current`, or the value to keep. */
function judge(rule: Rule, value: unknown, current: unknown): { keep: unknown } | { why: string } {
  if (typeof rule === "object") return { why: rule.refused };
  switch (rule) {
    case "free":
    case "confirm":
      return { keep: value };
    case "min":
    case "max": {
      if (typeof value !== "number" || typeof current !== "number") return { keep: value };
      const tighter = rule === "min" ? value <= current : value >= current;
      return tighter
        ? { keep: value }
        : { why: `a repository may only ${rule === "min" ? "lower" : "raise"} it (yours is ${current})` };
    }
    case "union": {
      if (!Array.isArray(value)) return { keep: value };
      const outside = value.filter((path) => !insideWorkspace(path));
      if (outside.length > 0) return { why: "a repository may only name relative paths inside itself" };
      return { keep: [...(Array.isArray(current) ? current : []), ...value] };
    }
    case "subset": {
      if (!Array.isArray(value)) return { keep: value };
      if (!Array.isArray(current))
        return { why: "a repository may only narrow a list set in ~/.config/umbra/config.json" };
      const extra = value.filter((entry) => !current.includes(entry));
      return extra.length === 0
        ? { keep: value }
        : {
            why: `a repository may only narrow it (not add ${extra.map((e) => JSON.stringify(e)).join(", ")})`,
          };
    }
    case "true":
      return value === true ? { keep: true } : { why: "a repository may only switch it on" };
    case "mode": {
      const asked = MODE_ORDER.indexOf(String(value));
      const mine = MODE_ORDER.indexOf(String(current));
      if (asked < 0) return { keep: value };
      return asked <= Math.min(mine < 0 ? 1 : mine, 1)
        ? { keep: value }
        : { why: "a repository may only make its sandbox stricter" };
    }
  }
}

export interface TightenedLayer {
  /** The settings kept, in the shape of the configuration file. */
  layer: Json;
  /** `agent.testCommand`, when the workspace set one: it runs only after the user confirmed it. */
  testCommand?: string;
  /** One line per refused setting: `key in FILE is ignored: why`. */
  ignored: string[];
}

/**
 * The workspace's settings that it may make, judged against the user's effective configuration
 * `user` (defaults < user file). Settings umbra does not know are left for the schema to drop.
 */
export function tightenWorkspaceLayer(workspace: Json, user: Json, file: string): TightenedLayer {
  const out: TightenedLayer = { layer: {}, ignored: [] };
  const visit = (node: Json, keys: string[]) => {
    for (const [key, value] of Object.entries(node)) {
      const path = [...keys, key];
      const name = path.join(".");
      // own keys only: `constructor`, `toString` or `__proto__` must not find Object.prototype's
      const rule = Object.hasOwn(RULES, name) ? RULES[name] : undefined;
      if (rule === undefined && isObject(value) && Object.keys(RULES).some((k) => k.startsWith(`${name}.`))) {
        visit(value, path);
        continue;
      }
      if (rule === undefined) continue;
      const verdict = judge(rule, value, valueAt(user, path));
      if ("why" in verdict) {
        out.ignored.push(`${name} in ${file} is ignored: ${verdict.why}`);
        continue;
      }
      if (rule === "confirm") {
        if (typeof value === "string") out.testCommand = value;
        continue;
      }
      let parent = out.layer;
      for (const part of keys) {
        const child = parent[part];
        const next: Json = isObject(child) ? child : {};
        parent[part] = next;
        parent = next;
      }
      parent[key] = verdict.keep;
    }
  };
  visit(workspace, []);
  return out;
}
