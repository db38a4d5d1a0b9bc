import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";
import { dataDir, privateDataDir } from "../config/paths.js";
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
  chmodSync(dir, 0o700);
}

/**
 * The engine folder, made (0700) when `create`, checked either way: a real folder (not a link), this
 * user's, closed to others. A folder another user could enter, or one that is a link, could hand a
 * client someone else's socket or let someone else's process take the engine's place.
 */
export function privateEngineDir(place: EnginePlace, env: NodeJS.ProcessEnv, create: boolean): void {
  if (create) {
    privateDataDir(env);
    mkdirSync(place.dir, { recursive: true, mode: 0o700 });
  }
  checkPrivate(place.dir, lstatSync(place.dir), create);
}

/** An address of the socket that the kernel takes, and what to do once it is no longer used. */
export interface SocketAddress {
  address: string;
  release(): void;
}

/**
 * An address of the engine's socket that the kernel takes. A path over 107 bytes (a deep UMBRA_HOME)
 * is reached through the engine folder opened as a descriptor, `/proc/self/fd/N/engine.sock` (Linux),
 * kept open until `release` (a server releases it after it stopped listening, so that the unlink on
 * close reaches the same folder). Elsewhere such a path is a one-line error.
 */
export function socketAddress(place: EnginePlace): SocketAddress {
  if (Buffer.byteLength(place.socket) <= MAX_SOCKET_PATH_BYTES)
    return { address: place.socket, release() {} };
  if (process.platform !== "linux")
    throw new EngineError(
      "UNAVAILABLE",
      `the engine's socket path ${place.socket} is longer than ${MAX_SOCKET_PATH_BYTES} bytes: set UMBRA_HOME to a shorter folder`,
    );
  const fd = openSync(place.dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    checkPrivate(place.dir, fstatSync(fd), false);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  let open = true;
  return {
    address: `/proc/self/fd/${fd}/engine.sock`,
    release() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
