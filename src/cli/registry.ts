import type { Command } from "commander";

type Register = (program: Command) => void;

interface CommandEntry {
  /** The one line `umbra --help` lists; `umbra COMMAND --help` gives the command's full description. */
  summary: string;
  /** Imports the command's module, and with it the libraries it needs, only when the command runs. */
  load: () => Promise<Register>;
}

export const COMMANDS: Record<string, CommandEntry> = {
  index: {
    summary: "build or update the index of DIR",
    load: async () => (await import("./index-command.js")).registerIndex,
  },
  search: {
    summary: "hybrid search (lexical + vector + exact) over the index",
    load: async () => (await import("./search-command.js")).registerSearch,
  },
  grep: {
    summary: "exact or regex search through ripgrep",
    load: async () => (await import("./grep-command.js")).registerGrep,
  },
  status: {
    summary: "what is indexed: files, chunks, skipped files, last sync",
    load: async () => (await import("./status-command.js")).registerStatus,
  },
  watch: {
    summary: "keep the index of DIR fresh",
    load: async () => (await import("./watch-command.js")).registerWatch,
  },
  lint: {
    summary: "diagnostics of FILE from its language server (nothing is written)",
    load: async () => (await import("./lint-command.js")).registerLint,
  },
  shadow: {
    summary: "the shadow branches of a workspace: list, diff, apply, rebase, discard, gc",
    load: async () => (await import("./shadow-command.js")).registerShadow,
  },
  run: {
    summary: "run a command in the sandbox",
    load: async () => (await import("./run-command.js")).registerRun,
  },
  agent: {
    summary: "run a coding agent on TASK in its own shadow branch",
    load: async () => (await import("./agent-command.js")).registerAgent,
  },
  sessions: {
    summary: "the agent sessions of a workspace: list them, apply one later",
    load: async () => (await import("./sessions-command.js")).registerSessions,
  },
  undo: {
    summary: "undo the last accept: the files it wrote get back what they held before",
    load: async () => (await import("./undo-command.js")).registerUndo,
  },
  serve: {
    summary:
      "run the engine: indexes and language servers kept warm for every client, over a socket (and --http: the HTTP API on 127.0.0.1)",
    load: async () => (await import("./serve-command.js")).registerServe,
  },
  mcp: {
    summary: "serve umbra's tools to an agent over MCP (stdio, or --http on 127.0.0.1)",
    load: async () => (await import("./mcp-command.js")).registerMcp,
  },
  demo: {
    summary: "index and search a copy of the bundled examples/ project, offline",
    load: async () => (await import("./demo-command.js")).registerDemo,
  },
  eval: {
    summary: "evaluate an agent on a task set, or compare two results files",
    load: async () => (await import("./eval-command.js")).registerEval,
  },
};

/**
 * The command that `args` (the arguments after `umbra`) run: the first one that is not an option, or the
 * one after `help`. umbra's own options take no value, so nothing else can come first. Undefined when no
 * known command is named (help, --version, a typo: every command is then listed by its summary only).
 */
export function invokedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith("-"));
  const name = words[0] === "help" ? words[1] : words[0];
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : undefined;
}
