import type { EngineEvent } from "./wire.js";

/**
 * One line for an engine event on the agents board (text only; the board puts it in a text node).
 * Pure. Fields the engine does not send are left out; a long text is cut.
 */

const MAX = 400;

function field(event: EngineEvent, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = event[name];
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number") return String(value);
  }
  return undefined;
}

function cut(text: string): string {
  const flat = text.replace(/\s+$/, "");
  return flat.length > MAX ? `${flat.slice(0, MAX)}…` : flat;
}

export function describeEvent(event: EngineEvent): string {
  const parts: string[] = [event.type];
  switch (event.type) {
    case "session":
      parts.push(field(event, "state") ?? "", field(event, "message", "error") ?? "");
      break;
    case "tool":
      parts.push(field(event, "name", "tool") ?? "", field(event, "summary", "text", "result") ?? "");
      break;
    case "lint":
      parts.push(
        field(event, "path") ?? "",
        field(event, "summary", "text") ?? "",
        field(event, "errors") ? `${field(event, "errors")} error(s)` : "",
      );
      break;
    case "output":
      parts.push(field(event, "chunk", "text", "data") ?? "");
      break;
    case "usage": {
      const tokens = event.tokens as { input?: number; output?: number } | undefined;
      if (tokens) parts.push(`${tokens.input ?? 0} in / ${tokens.output ?? 0} out tokens`);
      if (typeof event.cost === "number") parts.push(`$${event.cost.toFixed(4)}`);
      break;
    }
    case "approval":
      parts.push(field(event, "state", "decision") ?? "", field(event, "command") ?? "");
      break;
    default:
      parts.push(field(event, "message", "text", "summary") ?? "");
  }
  return cut(parts.filter(Boolean).join(" "));
}
