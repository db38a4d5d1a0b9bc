import type { EngineEvent } from "./wire.js";

/**
 * One line for an engine event on the agents board (text only: the board puts it in a text node).
 * Pure. A long text is cut.
 */

const MAX = 400;

function text(event: EngineEvent, name: string): string {
  const value = event[name];
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}

function cut(line: string): string {
  const flat = line.replace(/\s+$/, "");
  return flat.length > MAX ? `${flat.slice(0, MAX)}…` : flat;
}

/** A tool call's input in a few words: its path and command, else its JSON. */
function inputOf(input: unknown): string {
  if (typeof input !== "object" || input === null) return "";
  const fields = input as Record<string, unknown>;
  const named = ["path", "command", "query", "pattern"]
    .map((key) => fields[key])
    .filter((value) => typeof value === "string");
  return named.length > 0 ? named.join(" ") : JSON.stringify(input);
}

export function describeEvent(event: EngineEvent): string {
  switch (event.type) {
    case "session":
      return cut(["session", text(event, "state"), text(event, "message")].filter(Boolean).join(" "));
    case "tool":
      return event.phase === "call"
        ? cut(`→ ${text(event, "name")} ${inputOf(event.input)}`)
        : cut(`← ${text(event, "name")} ${event.ok === false ? "failed: " : ""}${text(event, "summary")}`);
    case "lint":
      return `lint after ${text(event, "name")}: ${text(event, "errors")} error(s)`;
    case "output":
      return cut(`${event.stream === "stderr" ? "stderr" : "out"} ${text(event, "text")}`);
    case "usage": {
      const tokens = event.tokens as { input?: number; output?: number } | undefined;
      const cost = typeof event.cost === "number" ? ` $${event.cost.toFixed(4)}` : "";
      return `usage ${tokens?.input ?? 0} in / ${tokens?.output ?? 0} out tokens${cost}`;
    }
    case "approval":
      return cut(
        ["approval", text(event, "state"), text(event, "decision"), text(event, "command")]
          .filter(Boolean)
          .join(" "),
      );
    case "text":
      return cut(text(event, "text"));
    case "notice":
      return cut(`note: ${text(event, "message")}`);
    default:
      return cut(`${event.type} ${text(event, "message")}`);
  }
}
