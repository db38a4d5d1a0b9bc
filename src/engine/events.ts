import type { LiveEvent, SessionEvent } from "./api.js";

/**
 * The engine's live events (agent sessions, approvals): numbered, fanned out to every listener at once
 * (the HTTP API's SSE streams), and the latest kept so that a page that reconnects asks for what came
 * after the last one it saw (Last-Event-ID) and misses nothing. Memory is bounded by `keep`.
 */

export type EventInput = Pick<SessionEvent, "type" | "workspace" | "session"> & {
  at?: string;
  [field: string]: unknown;
};
export type Listener = (event: LiveEvent) => void;

const KEEP = 5000;

export class EventLog {
  private readonly recent: LiveEvent[] = [];
  private readonly listeners = new Set<Listener>();
  private last = 0;

  constructor(private readonly keep = KEEP) {}

  publish(input: EventInput): LiveEvent {
    const event = { ...input, id: ++this.last, at: input.at ?? new Date().toISOString() } as LiveEvent;
    this.recent.push(event);
    if (this.recent.length > this.keep) this.recent.splice(0, this.recent.length - this.keep);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // one listener's failure (a closed stream) is not the others'
      }
    }
    return event;
  }

  /**
   * The kept events after id `after` (all kept ones for 0), oldest first. A cursor past the last id is
   * an earlier engine's (ids begin again with each engine): all kept ones, so that none is skipped.
   */
  since(after: number): LiveEvent[] {
    const from = after > this.last ? 0 : after;
    const first = this.recent.findIndex((event) => event.id > from);
    return first < 0 ? [] : this.recent.slice(first);
  }

  /** Every event from now on, until the returned function is called. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** How many listen now (pages with the event stream open). */
  get watchers(): number {
    return this.listeners.size;
  }

  get lastId(): number {
    return this.last;
  }
}
