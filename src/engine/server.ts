import { chmodSync, lstatSync, readFileSync, unlinkSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { PRIVATE_FILE } from "../config/private.js";
import { acquireLock, LockBusyError } from "../index/lock.js";
import { errorCode } from "../workspace/errors.js";
import { serveConnection } from "./connection.js";
import type { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { type EnginePlace, socketPath } from "./place.js";
import type { EngineInfo } from "./protocol.js";

/** What the socket needs of the engine: the Engine class (a fake in the protocol's tests). */
export type EngineCore = Pick<
  Engine,
  "connect" | "disconnect" | "call" | "clientCount" | "runningSessions" | "startedAt"
>;

export interface ListenOptions {
  place: EnginePlace;
  /** Stop after this long with no client connected and no request running (0: never). */
  idleMs: number;
}

export interface EngineServer {
  /** Resolves with why the server stopped: "idle", "asked" (umbra/stop), or what `stop` was given. */
  readonly stopped: Promise<string>;
  /** Stops listening and closes every connection (their running requests are not answered). */
  stop(reason: string): Promise<void>;
}

/** Connections at once; more are refused by the kernel's backlog, not served. */
const MAX_CONNECTIONS = 512;

/** How often the engine looks whether it is idle, and whether its socket is still there. */
const CHECK_MS = 5_000;

/**
 * The lock that makes one engine per user and machine: held by the serving process for its life and
 * released by the kernel when it exits, however it exits. BUSY (naming the pid) while another holds it.
 */
export async function holdServeLock(place: EnginePlace): Promise<() => void> {
  try {
    return await acquireLock(place.lock);
  } catch (error) {
    if (!(error instanceof LockBusyError)) throw error;
    let pid = "";
    try {
      pid = ` (pid ${(JSON.parse(readFileSync(`${place.lock}.owner`, "utf8")) as { pid: number }).pid})`;
    } catch {
      // the holder has not written its pid yet
    }
    throw new EngineError("BUSY", `an engine already runs${pid}; umbra serve --stop stops it`);
  }
}

/** A socket left by an engine that crashed (only called with the serve lock held: nobody listens on it). */
function removeStaleSocket(path: string): void {
  try {
    if (!lstatSync(path).isSocket())
      throw new EngineError("REFUSED", `${path} is not a socket; umbra does not replace it`);
    unlinkSync(path);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}

/**
 * Serves `engine` on the engine's socket (0600, in its 0700 folder) until stopped, asked to stop, or
 * idle. The caller holds the serve lock. Every connection is a client of its own (after its hello);
 * everything it sends is checked, and a connection that breaks the framing is dropped.
 */
export async function listenEngine(engine: EngineCore, options: ListenOptions): Promise<EngineServer> {
  const { place } = options;
  const path = socketPath(place);
  removeStaleSocket(path);
  const server = createServer();
  server.maxConnections = MAX_CONNECTIONS;
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let calls = 0;
  let lastActivity = Date.now();
  const touch = () => {
    lastActivity = Date.now();
  };

  let stopping: Promise<void> | undefined;
  let reportStopped: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    reportStopped = resolve;
  });
  let timer: NodeJS.Timeout | undefined;
  const idle = () => {
    // a running agent session is activity: the idle time counts from its end
    if (engine.runningSessions > 0) touch();
    return (
      options.idleMs > 0 &&
      engine.clientCount === 0 &&
      inFlight === 0 &&
      Date.now() - lastActivity >= options.idleMs
    );
  };
  let bound: number | undefined;
  /** What is at the socket's path now: ours, nothing, or another's (a new engine's, after ours was removed). */
  const atPath = (): "ours" | "none" | "other" => {
    try {
      return lstatSync(path).ino === bound ? "ours" : "other";
    } catch {
      return "none";
    }
  };

  function stop(reason: string): Promise<void> {
    stopping ??= (async () => {
      clearInterval(timer);
      // closing unlinks the path (libuv does): not when it is another engine's socket now
      const closed =
        atPath() === "other"
          ? Promise.resolve(void server.unref())
          : new Promise<void>((resolve) => server.close(() => resolve()));
      // each client reads the end of its stream; one that does not close its side is cut off
      for (const socket of sockets) socket.end();
      const cut = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, 2000);
      await closed;
      clearTimeout(cut);
      reportStopped(reason);
    })();
    return stopping;
  }

  const info = (): EngineInfo => ({
    pid: process.pid,
    startedAt: engine.startedAt,
    clients: engine.clientCount,
    uptimeSeconds: Math.round((Date.now() - Date.parse(engine.startedAt)) / 1000),
    calls,
    idleMinutes: options.idleMs / 60_000,
  });

  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    serveConnection(socket, engine, {
      touch,
      running: (delta) => {
        inFlight += delta;
        touch();
      },
      called: () => {
        calls++;
      },
      info,
      stop: () => void stop("asked"),
    });
  });

  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    throw new EngineError("UNAVAILABLE", `cannot listen on ${path}: ${errorCode(error) ?? error}`);
  } finally {
    process.umask(umask);
  }
  chmodSync(path, PRIVATE_FILE);
  bound = lstatSync(path).ino;
  // idle, or unreachable: a socket removed (its data folder deleted) can reach this engine no more
  timer = setInterval(
    () => {
      if (atPath() !== "ours") void stop("its socket was removed");
      else if (idle()) void stop("idle");
    },
    Math.min(options.idleMs > 0 ? Math.max(options.idleMs / 4, 50) : CHECK_MS, CHECK_MS),
  );
  timer.unref();
  return { stopped, stop };
}
