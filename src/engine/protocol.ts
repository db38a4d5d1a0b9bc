import { z } from "zod";
import type { Progress } from "./api.js";
import { EngineError } from "./errors.js";

/**
 * The engine's socket protocol: JSON-RPC 2.0 with Content-Length framing (as LSP), one connection per
 * client. A client first says hello (its name and the protocol it speaks); then `umbra/call` runs an
 * operation of the engine API (src/engine/api.ts) for it, and the engine may ask the client back
 * (`umbra/approveNetwork`, `umbra/confirmAccept`: anything but `true`, or no answer because the client
 * has no handler, is no; to `umbra/approveNetwork` the answer UNASKED says the client could not ask its
 * user). A call is cancelled with `$/cancelRequest`, and its progress comes back as
 * `umbra/progress` notifications when it named a progress id. `umbra/info` and `umbra/stop` need no
 * hello (`umbra serve --status`, `--stop`).
 */
export const PROTOCOL_VERSION = 1;

export const METHODS = {
  hello: "umbra/hello",
  call: "umbra/call",
  info: "umbra/info",
  stop: "umbra/stop",
  approveNetwork: "umbra/approveNetwork",
  confirmAccept: "umbra/confirmAccept",
  /** A notification to the client: {id, message, done, total}, for the call that named that `progress` id. */
  progress: "umbra/progress",
} as const;

/** The answer to `umbra/approveNetwork` of a client that cannot ask its user. */
export const UNASKED = "unasked";

export const helloParams = z.object({
  name: z.string().max(200),
  protocol: z.number().int(),
});

export const callParams = z.object({
  name: z.string().min(1).max(100),
  params: z.unknown(),
  /** Where the call's progress goes: an id of the client's, sent back with each umbra/progress. */
  progress: z.number().int().nonnegative().optional(),
});

export type ProgressNotice = Progress & { id: number };

export interface HelloResult {
  protocol: number;
  pid: number;
  startedAt: string;
}

export interface EngineInfo {
  pid: number;
  startedAt: string;
  /** Connections that said hello, now. */
  clients: number;
  uptimeSeconds: number;
  /** Operations called since it started (by every client). */
  calls: number;
  /** The idle time after which the engine stops (0: never). */
  idleMinutes: number;
}

/** The JSON-RPC error code of every EngineError (its `data` is EngineError.toWire()). */
export const ENGINE_ERROR_CODE = -32001;

/** The size of one message the engine reads at most (a file of 64 MiB, escaped, fits). */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** What a failed request's error stands for, on the client side. */
export function engineErrorOf(error: unknown): EngineError {
  if (error instanceof EngineError) return error;
  const record = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  if (record.code === ENGINE_ERROR_CODE) return EngineError.fromWire(record.data);
  const message = typeof record.message === "string" ? record.message : String(error);
  return new EngineError("NO_ENGINE", `the engine did not answer: ${message}`);
}
