import { chmodSync, lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { dataDir, privateDataDir } from "../config/paths.js";
import { PRIVATE_DIR, privateDirSync } from "../config/private.js";
import { EngineError } from "./errors.js";

/** Where the user's engine lives: one folder in the data directory, 0700, with its socket (0600) in it. */
export interface EnginePlace {
  dir: string;
  socket: string;
  /** Held by the running `umbra serve` (an exclusive lock the kernel releases when it exits). */
  lock: string;
  /** stdout and stderr of an engine started on demand. */
  log: string;
}

export function enginePlace(env: NodeJS.ProcessEnv = process.env): EnginePlace {
  const dir = join(dataDir(env), "engine");
  return {
    dir,
    socket: join(dir, "engine.sock"),
    lock: join(dir, "serve.lock"),
    log: join(dir, "engine.log"),
  };
}

/** The longest unix socket path the kernel takes (sun_path is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

function checkPrivate(dir: string, stats: Stats, repair: boolean): void {
  if (!stats.isDirectory()) throw new EngineError("REFUSED", `${dir} is not a folder; umbra does not use it`);
  if (stats.uid !== process.getuid?.())
    throw new EngineError("REFUSED", `${dir} belongs to another user; umbra does not use it`);
  if ((stats.mode & 0o077) === 0) return;
  if (!repair) throw new EngineError("REFUSED", `${dir} is open to other users; umbra does not use it`);
  chmodSync(dir, PRIVATE_DIR);
}

/**
 * The engine folder, made (0700) when `create`, checked either way: a real folder (not a link), this
 * user's, closed to others. A folder another user could enter, or one that is a link, could hand a
 * client someone else's socket or let someone else's process take the engine's place.
 */
export function privateEngineDir(place: EnginePlace, env: NodeJS.ProcessEnv, create: boolean): void {
  if (create) {
    privateDataDir(env);
    privateDirSync(place.dir);
  }
  checkPrivate(place.dir, lstatSync(place.dir), create);
}

/**
 * The socket's path, when the kernel takes it: one over 107 bytes (a deep UMBRA_HOME) is a one-line
 * error. It is not bound through a descriptor of the folder (`/proc/self/fd/N/engine.sock`) instead:
 * the sandbox covers the host's sockets by the paths /proc/net/unix lists, and such a socket is listed
 * under a name that means nothing outside the engine, so a sandboxed command could reach it.
 */
export function socketPath(place: EnginePlace): string {
  if (Buffer.byteLength(place.socket) <= MAX_SOCKET_PATH_BYTES) return place.socket;
  throw new EngineError(
    "UNAVAILABLE",
    `the engine's socket path ${place.socket} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a unix socket may have: set UMBRA_HOME to a shorter folder`,
  );
}
