import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { AcceptQuestion, ClientHooks, NetworkQuestion } from "../engine/api.js";

/**
 * The engine's questions to the user, asked through MCP elicitation: the client shows a form with one
 * yes/no field to the user (not to the model). A client that did not declare form elicitation cannot
 * ask, and every answer is no: a network request is denied, an accept is not done (the engine says so
 * in its result). So is a question the user declines, cancels or leaves unanswered.
 */

/** How long a question waits for the user. */
const ANSWER_TIMEOUT_MS = 10 * 60_000;
/** The most of an agent's words (its command, its reason) a question quotes. */
const MAX_QUOTE = 2000;
const MAX_DIFFSTAT = 50;

/**
 * A control character other than newline and tab (C0, DEL, C1), or a bidirectional control (marks,
 * embeddings, overrides, isolates), with which a command could be shown in another order than it runs.
 */
export function isControl(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  if (char === "\n" || char === "\t") return false;
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x061c ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * A name (a file's path, a label) on one line: its control characters, newline and tab included, shown
 * as \uXXXX escapes, so that it cannot add lines of its own to what the user or the model reads.
 */
export function oneLine(text: string): string {
  return [...text]
    .map((char) =>
      char === "\n" || char === "\t" || isControl(char)
        ? `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`
        : char,
    )
    .join("");
}

/**
 * Untrusted text in a question, bounded and without control characters: what the client shows cannot
 * drive a terminal or reorder or hide part of itself (an escape sequence loses its ESC and shows as text).
 */
function quoted(text: string): string {
  const clean = [...text].filter((char) => !isControl(char)).join("");
  return clean.length > MAX_QUOTE
    ? `${clean.slice(0, MAX_QUOTE)}… (${clean.length - MAX_QUOTE} more characters)`
    : clean;
}

export function networkMessage(question: NetworkQuestion): string {
  return [
    `An agent asks to run a command WITH NETWORK ACCESS, sandboxed in its branch ${quoted(question.branch)}:`,
    "",
    quoted(question.command),
    "",
    `The agent's reason: ${question.reason ? quoted(question.reason) : "(none given)"}`,
    "",
    "With network the command can reach the internet and your local network. Approve only if you trust it.",
  ].join("\n");
}

export function acceptMessage(question: AcceptQuestion): string {
  const shown = question.diffstat.slice(0, MAX_DIFFSTAT);
  // one line a file: a name holding a newline is shown escaped, it cannot add lines of its own
  const stat = shown.map((file) => `  ${quoted(oneLine(file.path))}  +${file.added} -${file.removed}`);
  if (question.diffstat.length > shown.length)
    stat.push(`  … and ${question.diffstat.length - shown.length} more files`);
  return [
    `An agent asks to accept its branch ${quoted(question.branch)} into your folder:`,
    "",
    quoted(question.summary),
    ...(stat.length > 0 ? ["", ...stat] : []),
    "",
    "Edits you made meanwhile are kept (three-way merge); `umbra undo` takes an accept back.",
  ].join("\n");
}

/** Where a question goes: the request (a tool call) it belongs to, so it travels on that call's stream. */
export type RelatedRequest = (kind: "run" | "accept", branch: string) => RequestId | undefined;

export function elicitationHooks(
  server: Server,
  related: RelatedRequest,
  log: (line: string) => void,
): ClientHooks {
  /** The user's answer; undefined when the client cannot ask (no form elicitation). */
  const ask = async (
    message: string,
    title: string,
    relatedRequestId: RequestId | undefined,
  ): Promise<boolean | undefined> => {
    if (!server.getClientCapabilities()?.elicitation?.form) return undefined;
    try {
      const answer = await server.elicitInput(
        {
          mode: "form",
          message,
          requestedSchema: {
            type: "object",
            properties: { approve: { type: "boolean", title, default: false } },
            required: ["approve"],
          },
        },
        { timeout: ANSWER_TIMEOUT_MS, ...(relatedRequestId !== undefined ? { relatedRequestId } : {}) },
      );
      return answer.action === "accept" && answer.content?.approve === true;
    } catch (error) {
      log(
        `the question to the user failed, taken as no: ${error instanceof Error ? error.message : String(error)}`,
      );
      return false;
    }
  };
  return {
    approveNetwork: (question) =>
      ask(networkMessage(question), "Allow network access", related("run", question.branch)),
    // an accept is confirmed by the agent's own user or not at all
    confirmAccept: async (question) =>
      (await ask(
        acceptMessage(question),
        "Accept these changes into your folder",
        related("accept", question.branch),
      )) === true,
  };
}
