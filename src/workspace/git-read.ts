/**
 * The one way umbra runs git over a folder it does not trust: for reading only. Git runs what a
 * repository's configuration names (core.fsmonitor, signature programs, diff drivers, transports for a
 * partial clone's lazy fetch), so every such setting a read could reach is forced off on the command
 * line, which wins over every configuration file; no pager, no prompt, and no repository chosen by the
 * environment. Callers pass only subcommands that read (config, rev-parse, log).
 */
import { execFile } from "node:child_process";

/** Variables that would make git look at another repository than the folder's own. */
const REPOSITORY_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
];

/** Settings forced on every read: what a hostile repository could otherwise make git run or fetch. */
const FORCED_SETTINGS = [
  "core.fsmonitor=false",
  "log.showSignature=false",
  "protocol.allow=never",
  "core.quotePath=false",
];

export interface GitRun {
  code: number;
  stdout: string;
}

export interface ReadGitOptions {
  timeoutMs?: number;
  /** The most output read; past it the run counts as failed. */
  maxBytes?: number;
  /** Extra environment (e.g. GIT_CEILING_DIRECTORIES). */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** Runs `git ARGS` in `cwd` for reading; a failure (git missing, not a repository, time-out) is a non-zero code. */
export function readGit(args: readonly string[], cwd: string, options: ReadGitOptions = {}): Promise<GitRun> {
  const env: NodeJS.ProcessEnv = {
    ...(options.env ?? process.env),
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_NO_REPLACE_OBJECTS: "1",
  };
  for (const name of REPOSITORY_VARIABLES) delete env[name];
  return new Promise((done) => {
    try {
      const child = execFile(
        "git",
        [...FORCED_SETTINGS.flatMap((setting) => ["-c", setting]), ...args],
        {
          cwd,
          env,
          timeout: options.timeoutMs ?? 20_000,
          maxBuffer: options.maxBytes ?? 4 * 1024 * 1024,
          windowsHide: true,
          ...(options.signal ? { signal: options.signal } : {}),
        },
        (error, stdout) => done({ code: error ? 1 : 0, stdout }),
      );
      child.stdin?.end();
    } catch {
      done({ code: 1, stdout: "" });
    }
  });
}
