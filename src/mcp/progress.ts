import type { Progress } from "../engine/api.js";

/** What an MCP progress notification carries (`notifications/progress`, less the token). */
export interface ProgressNote {
  progress: number;
  total: number;
  message: string;
}

/**
 * The engine's progress as MCP progress notifications, whose `progress` must grow with each one. The
 * engine counts each phase from 0 (files hashed, then chunks embedded): a new phase goes on from where
 * the last one ended, and a report that would not grow is left out.
 */
export function progressNotes(send: (note: ProgressNote) => void): (progress: Progress) => void {
  let phase: string | undefined;
  let base = 0;
  let last: number | undefined;
  return ({ message, done, total }) => {
    if (message !== phase) {
      phase = message;
      base = last ?? 0;
    }
    const progress = base + done;
    if (last !== undefined && progress <= last) return;
    last = progress;
    send({ progress, total: base + Math.max(total, done), message });
  };
}
