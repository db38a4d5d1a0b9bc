import { basename } from "node:path";
import { createInterface } from "node:readline";

/**
 * Network approval. Network access is off by default; a command that needs it asks an Approver. There is
 * no per-domain allowlist (an HTTP proxy that only lets chosen hosts through): approval is all or nothing
 * for one command.
 */

export interface NetworkRequest {
  command: string;
  args: string[];
  /** Why the command needs the network, as the asker puts it. */
  reason?: string;
}

/** Says whether `request` may have network access. */
export type Approver = (request: NetworkRequest) => Promise<boolean>;

/** Denies every request. */
export function alwaysDeny(): Approver {
  return async () => false;
}

/** Approves every request (`--yes`). */
export function alwaysApprove(): Approver {
  return async () => true;
}

/** The command line as one string, arguments with spaces or quotes JSON-quoted. */
export function commandLine(request: Pick<NetworkRequest, "command" | "args">): string {
  const quote = (word: string) => (word === "" || /[\s"'\\]/.test(word) ? JSON.stringify(word) : word);
  return [request.command, ...request.args].map(quote).join(" ");
}

function globRegExp(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((part) =>
      part
        .split("?")
        .map((piece) => piece.replace(/[.+^${}()|[\]\\]/g, "\\$&"))
        .join("."),
    )
    .join(".*");
  return new RegExp(`^${body}$`, "s");
}

/**
 * Whether an allowlist entry covers the request. An entry without spaces or wildcards is a command name:
 * it matches the command itself or its base name (`npm` matches `/usr/bin/npm install`). Otherwise it is a
 * glob (`*` any text, `?` one character) over the whole command line, tried with the command as given
 * and with its base name (`npm install *`, `go mod download`).
 */
export function allowlistMatches(entry: string, request: Pick<NetworkRequest, "command" | "args">): boolean {
  const pattern = entry.trim();
  if (pattern === "") return false;
  if (!/[\s*?]/.test(pattern)) return request.command === pattern || basename(request.command) === pattern;
  const matcher = globRegExp(pattern);
  const lines = [request.args.join(" ")].flatMap((rest) => {
    const tail = rest === "" ? "" : ` ${rest}`;
    return [`${request.command}${tail}`, `${basename(request.command)}${tail}`];
  });
  return lines.some((line) => matcher.test(line));
}

/**
 * The allowCommands entry that allows exactly `request`: the command line as allowlistMatches reads it,
 * a `*` in it made `?` (the entry then covers one character there, no more). A command without
 * arguments gets its bare name, which allows it with any arguments; the agent's run_command always
 * asks for `sh -c COMMAND`.
 */
export function allowEntryFor(request: Pick<NetworkRequest, "command" | "args">): string {
  return [request.command, ...request.args].join(" ").replace(/\*/g, "?");
}

/** Approves the commands that `sandbox.network.allowCommands` lists; denies the rest. */
export function allowlistApprover(entries: readonly string[]): Approver {
  return async (request) => entries.some((entry) => allowlistMatches(entry, request));
}

/** Asks each approver in turn; the first that approves wins, and the rest are not asked. */
export function firstApproving(...approvers: Approver[]): Approver {
  return async (request) => {
    for (const approver of approvers) if (await approver(request)) return true;
    return false;
  };
}

interface TtyReadable extends NodeJS.ReadableStream {
  isTTY?: boolean;
}

interface TtyWritable extends NodeJS.WritableStream {
  isTTY?: boolean;
}

export interface TerminalApproverOptions {
  input?: TtyReadable;
  output?: TtyWritable;
  /** Where the reason of a denial without asking goes (default: `umbra: …` on `output`). */
  notify?: (message: string) => void;
}

/**
 * Asks on the terminal: `Allow network access for …? [y/N]` on stderr, the answer from stdin. Only when
 * both are terminals; otherwise the request is denied with a message saying how to approve it.
 */
export function terminalApprover(options: TerminalApproverOptions = {}): Approver {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  const notify = options.notify ?? ((message: string) => void output.write(`umbra: ${message}\n`));
  return (request) => {
    if (!input.isTTY || !output.isTTY) {
      notify(
        "network access needs approval and there is no terminal to ask on: denied (approve with --yes, or list the command in sandbox.network.allowCommands)",
      );
      return Promise.resolve(false);
    }
    const why = request.reason ? ` (${request.reason})` : "";
    const question = `umbra: allow network access for \`${commandLine(request)}\`${why}? [y/N] `;
    return new Promise((resolve) => {
      const reader = createInterface({ input, output, terminal: true });
      let answered = false;
      reader.once("close", () => {
        if (!answered) {
          output.write("\n");
          resolve(false);
        }
      });
      reader.question(question, (answer) => {
        answered = true;
        reader.close();
        resolve(/^\s*y(es)?\s*$/i.test(answer));
      });
    });
  };
}
