import type { z } from "zod";
import type { UmbraConfig } from "../../config/config.js";
import type { SearchContext } from "../../index/search/context.js";
import type { LspHost } from "../../lsp/index.js";
import type { Approver, WorkspaceSandbox } from "../../sandbox/index.js";
import type { Branch, BranchFiles } from "../../shadow/index.js";

/** What a tool works on: the agent's branch (never the user's folder) and the services around it. */
export interface ToolContext {
  /** The branch the tools write and run in; absent: the user's own folder, read-only (no edits, no runs). */
  branch?: Branch;
  /**
   * The door every file tool reads and writes the branch through: hidden paths, links out of the
   * workspace and non-regular files refused, protected paths read-only (src/shadow/files.ts).
   */
  files(): Promise<BranchFiles>;
  /** The user's folder (absolute, symlink-free); files are named relative to it. */
  root: string;
  config: UmbraConfig;
  env: NodeJS.ProcessEnv;
  /** The language-server host serving the branch (started on first use); undefined when unavailable. */
  lsp(): Promise<LspHost | undefined>;
  /** The workspace's index, built first when there is none. */
  searchIndex(): Promise<SearchContext>;
  /** The sandbox of run_command in the branch (network as approved). */
  sandbox(network: boolean): Promise<WorkspaceSandbox>;
  /** Approves network access for a command; the default denies. */
  approver: Approver;
  signal?: AbortSignal;
  /** Where a command's output goes as it comes (the engine's live events); it is in the result anyway. */
  onOutput?: (stream: "stdout" | "stderr", chunk: string) => void;
}

/** What a tool call produced. */
export interface ToolResult {
  ok: boolean;
  /** What the model reads. */
  output: string;
  /** One line for the progress display. */
  summary: string;
  /** Files the call changed in the branch. */
  changed?: string[];
  /** Errors introduced by the change (lint feedback), when linted. */
  lintErrors?: number;
  /** A command that ran and failed (exit status not 0). */
  commandFailed?: boolean;
  /** A command that ran and passed. */
  commandPassed?: boolean;
}

export interface AgentTool<S extends z.ZodTypeAny = z.ZodTypeAny> {
  name: string;
  description: string;
  schema: S;
  run(input: z.infer<S>, context: ToolContext): Promise<ToolResult>;
}

/** Declares a tool (keeps the input type tied to its schema). */
export function defineTool<S extends z.ZodTypeAny>(tool: AgentTool<S>): AgentTool {
  return tool as unknown as AgentTool;
}

/** A tool call that could not be carried out: the model reads the message. */
export function failure(message: string, summary = message): ToolResult {
  return { ok: false, output: message, summary: summary.split("\n")[0] ?? "" };
}

/** Text shortened to at most `max` characters, keeping the head and the tail. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.3);
  const tail = max - head;
  return `${text.slice(0, head)}\n[... ${text.length - max} characters cut ...]\n${text.slice(-tail)}`;
}

/** Absolute paths of the user's folder replaced by workspace-relative ones (outputs name no machine paths). */
export function relativize(text: string, root: string): string {
  return text.split(`${root}/`).join("").split(root).join(".");
}

/** A workspace-relative path the model gave, normalized; undefined when it leaves the workspace. */
export function cleanPath(path: string, root: string): string | undefined {
  let rel = path.trim();
  if (rel.startsWith(`${root}/`)) rel = rel.slice(root.length + 1);
  // (?<!\/): a trailing run of slashes is looked for from its first one only, not from every slash
  rel = rel.replace(/^\.\/+/, "").replace(/(?<!\/)\/+$/, "");
  if (rel === "." || rel === "") return "";
  if (rel.startsWith("/") || rel.split("/").includes("..")) return undefined;
  return rel;
}
