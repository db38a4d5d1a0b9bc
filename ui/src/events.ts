import type { EngineEvent } from "./wire.js";

/**
 * The engine's live events (GET /api/events, server-sent): one EventSource for the page, shared by its
 * views. The page resumes from the last event id it saw, so that a reconnect replays only what it
 * missed, never the engine's whole backlog: the browser's own reconnects send Last-Event-ID; a stream
 * the browser gave up on (an error answer) is opened again after a pause with ?since=ID; and the id is
 * kept for the tab (sessionStorage), so that a reload resumes from it too.
 */

type Listener = (event: EngineEvent) => void;

const listeners = new Set<Listener>();
/** Event types the engine sends (`event:` lines); a message of another type arrives as "message". */
const TYPES = ["session", "tool", "lint", "output", "usage", "approval", "text", "notice", "message"];
const CURSOR_KEY = "umbra.events.last";
/** The pause before opening a stream the browser closed: doubled up to the most, back to the first once open. */
const FIRST_PAUSE_MS = 1000;
const MOST_PAUSE_MS = 30_000;

let source: EventSource | undefined;
let onState: ((connected: boolean) => void) | undefined;
let lastId = storedCursor();
let pause = FIRST_PAUSE_MS;

function storedCursor(): number {
  try {
    const stored = Number(sessionStorage.getItem(CURSOR_KEY) ?? "0");
    return Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
  } catch {
    return 0;
  }
}

/** Notes the id of an event heard (the SSE `id:` line), for the next connection. */
function heard(id: string): void {
  const n = Number(id);
  if (!/^\d{1,15}$/.test(id) || n <= lastId) return;
  lastId = n;
  try {
    sessionStorage.setItem(CURSOR_KEY, String(n));
  } catch {
    // storage refused (private mode): the cursor lives as long as the page
  }
}

/** Where the next connection starts: after the last event heard, else the kept backlog. */
export function eventsUrl(last: number): string {
  return last > 0 ? `/api/events?since=${last}` : "/api/events";
}

function deliver(type: string, message: MessageEvent<string>): void {
  heard(message.lastEventId);
  let event: EngineEvent;
  try {
    event = { ...(JSON.parse(message.data) as EngineEvent) };
  } catch {
    return;
  }
  if (typeof event.type !== "string") event.type = type;
  for (const listener of listeners) listener(event);
}

function open(): void {
  const opened = new EventSource(eventsUrl(lastId), { withCredentials: true });
  source = opened;
  opened.addEventListener("open", () => {
    pause = FIRST_PAUSE_MS;
    onState?.(true);
  });
  opened.addEventListener("error", () => {
    onState?.(false);
    // CONNECTING: the browser tries again by itself (with Last-Event-ID); CLOSED: it gave up
    if (opened.readyState !== EventSource.CLOSED || source !== opened) return;
    source = undefined;
    setTimeout(() => {
      if (!source) open();
    }, pause);
    pause = Math.min(pause * 2, MOST_PAUSE_MS);
  });
  for (const type of TYPES)
    opened.addEventListener(type, (message) => deliver(type, message as MessageEvent<string>));
}

/** Opens the stream (once); `state` hears whether it is connected. */
export function connectEvents(state: (connected: boolean) => void): void {
  onState = state;
  if (!source) open();
}

/** Hears every event until the returned function is called. */
export function onEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
