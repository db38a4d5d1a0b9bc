import type { EngineEvent } from "./wire.js";

/**
 * The engine's live events (GET /api/events, server-sent): one EventSource for the page, shared by its
 * views. The browser reconnects by itself and sends Last-Event-ID, so the engine replays what was missed.
 */

type Listener = (event: EngineEvent) => void;

const listeners = new Set<Listener>();
/** Event types the engine sends (`event:` lines); a message of another type arrives as "message". */
const TYPES = ["session", "tool", "lint", "output", "usage", "approval", "text", "notice", "message"];
let source: EventSource | undefined;
let onState: ((connected: boolean) => void) | undefined;

function deliver(type: string, data: string): void {
  let event: EngineEvent;
  try {
    event = { ...(JSON.parse(data) as EngineEvent) };
  } catch {
    return;
  }
  if (typeof event.type !== "string") event.type = type;
  for (const listener of listeners) listener(event);
}

/** Opens the stream (once); `state` hears whether it is connected. */
export function connectEvents(state: (connected: boolean) => void): void {
  onState = state;
  if (source) return;
  source = new EventSource("/api/events", { withCredentials: true });
  source.addEventListener("open", () => onState?.(true));
  source.addEventListener("error", () => onState?.(false));
  for (const type of TYPES)
    source.addEventListener(type, (message) => deliver(type, (message as MessageEvent<string>).data));
}

/** Hears every event until the returned function is called. */
export function onEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
