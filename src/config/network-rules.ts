/**
 * Network rules the user saved for a repository from the approvals queue ("for this repository"): more
 * `sandbox.network.allowCommands` entries, kept in the workspace's data folder (0600), on the trusted
 * side: never in the workspace's own `.umbra/config.json`, which the workspace (and an agent) controls.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { UmbraConfig } from "./config.js";
import { workspaceDir } from "./paths.js";
import { PRIVATE_FILE, privateDirSync } from "./private.js";

export interface StoredRule {
  id: string;
  rule: string;
  createdAt: string;
}

function rulesFile(realRoot: string, env: NodeJS.ProcessEnv): string {
  return join(workspaceDir(realRoot, env), "network-rules.json");
}

/** The rules saved for the workspace at `realRoot` (none when the file is missing or unreadable). */
export function savedNetworkRules(realRoot: string, env: NodeJS.ProcessEnv = process.env): StoredRule[] {
  try {
    const value: unknown = JSON.parse(readFileSync(rulesFile(realRoot, env), "utf8"));
    if (!Array.isArray(value)) return [];
    return value.filter(
      (entry): entry is StoredRule =>
        typeof entry?.id === "string" &&
        typeof entry.rule === "string" &&
        typeof entry.createdAt === "string",
    );
  } catch {
    return [];
  }
}

function store(realRoot: string, rules: StoredRule[], env: NodeJS.ProcessEnv): void {
  const file = rulesFile(realRoot, env);
  privateDirSync(workspaceDir(realRoot, env));
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(rules, null, 2)}\n`, { mode: PRIVATE_FILE });
  renameSync(temp, file);
}

/**
 * What the user allows network for in the workspace at `realRoot`: their `sandbox.network.allowCommands`
 * and the rules they saved for it (read now: one saved a moment ago counts).
 */
export function networkAllowlist(
  realRoot: string,
  config: Pick<UmbraConfig, "sandbox">,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  return [
    ...(config.sandbox.network.allowCommands ?? []),
    ...savedNetworkRules(realRoot, env).map((entry) => entry.rule),
  ];
}

/** Saves `rule` for the workspace (the one already saved when it is there). */
export function saveNetworkRule(
  realRoot: string,
  rule: string,
  env: NodeJS.ProcessEnv = process.env,
): StoredRule {
  const rules = savedNetworkRules(realRoot, env);
  const found = rules.find((entry) => entry.rule === rule);
  if (found) return found;
  const entry = { id: randomBytes(6).toString("hex"), rule, createdAt: new Date().toISOString() };
  store(realRoot, [...rules, entry], env);
  return entry;
}

/** Removes rule `id`; false when the workspace has no such rule. */
export function deleteNetworkRule(
  realRoot: string,
  id: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const rules = savedNetworkRules(realRoot, env);
  const kept = rules.filter((entry) => entry.id !== id);
  if (kept.length === rules.length) return false;
  store(realRoot, kept, env);
  return true;
}
