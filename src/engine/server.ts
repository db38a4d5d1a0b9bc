import { chmodSync, closeSync, lstatSync, openSync, readFileSync, unlinkSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import {
  createMessageConnection,
  type Logger,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { acquireLock, LockBusyError } from "../index/lock.js";
import { errorCode } from "../workspace/errors.js";
import type { Caller, ClientHooks, OperationName } from "./api.js";
import type { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { FrameGuard } from "./frame-guard.js";
import type { EnginePlace } from "./place.js";
import { socketAddress } from "./place.js";
import {
  callParams,
  ENGINE_ERROR_CODE,
  type EngineInfo,
  type HelloResult,
  helloParams,
  MAX_MESSAGE_BYTES,
  METHODS,
  PROTOCOL_VERSION,
} from "./protocol.js";

/** What the socket needs of the engine: the Engine class (a fake in the protocol's tests). */
export type EngineCore = Pick<Engine, "connect" | "disconnect" | "call" | "clientCount" | "startedAt">;

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

const quiet: Logger = { error() {}, warn() {}, info() {}, log() {} };

/**
 * The lock that makes one engine per user and machine: held by the serving process for its life and
 * released by the kernel when it exits, however it exits. BUSY (naming the pid) while another holds it.
 */
export async function holdServeLock(place: EnginePlace): Promise<() => void> {
  // made 0600 first: SQLite gives its journal the lock file's mode, and the owner file keeps its own
  for (const file of [place.lock, `${place.lock}.owner`]) closeSync(openSync(file, "a", 0o600));
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

function responseError(error: unknown): ResponseError<{ code: string; message: string }> {
  const engineError =
    error instanceof EngineError
      ? error
      : new EngineError("INTERNAL", error instanceof Error ? error.message : String(error));
  return new ResponseError(ENGINE_ERROR_CODE, engineError.message, engineError.toWire());
}

/**
 * Serves `engine` on the engine's socket (0600, in its 0700 folder) until stopped, asked to stop, or
 * idle. The caller holds the serve lock. Every connection is a client of its own (after its hello);
 * everything it sends is checked, and a connection that breaks the framing is dropped.
 */
export async function listenEngine(engine: EngineCore, options: ListenOptions): Promise<EngineServer> {
  const { place } = options;
  removeStaleSocket(place.socket);
  const address = socketAddress(place);
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
  const idleTimer =
    options.idleMs > 0
      ? setInterval(
          () => {
            if (engine.clientCount === 0 && inFlight === 0 && Date.now() - lastActivity >= options.idleMs)
              void stop("idle");
          },
          Math.min(Math.max(options.idleMs / 4, 50), 30_000),
        )
      : undefined;
  idleTimer?.unref();

  function stop(reason: string): Promise<void> {
    stopping ??= (async () => {
      if (idleTimer) clearInterval(idleTimer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // each client reads the end of its stream; one that does not close its side is cut off
      for (const socket of sockets) socket.end();
      const cut = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, 2000);
      await closed;
      clearTimeout(cut);
      address.release();
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
    touch();
    const guard = new FrameGuard(MAX_MESSAGE_BYTES);
    const connection = createMessageConnection(
      new StreamMessageReader(guard),
      new StreamMessageWriter(socket),
      quiet,
    );
    let caller: Caller | undefined;
    let closed = false;
    const drop = () => {
      if (closed) return;
      closed = true;
      sockets.delete(socket);
      if (caller) engine.disconnect(caller);
      connection.dispose();
      socket.destroy();
      touch();
    };
    socket.on("error", drop).on("close", drop);
    guard.on("error", drop);
    socket.pipe(guard);
    connection.onError(drop);
    connection.onClose(drop);

    const ask = async (method: string, question: unknown): Promise<boolean> => {
      if (closed) return false;
      try {
        return (await connection.sendRequest(method, question)) === true;
      } catch {
        return false;
      }
    };
    const hooks: ClientHooks = {
      approveNetwork: (question) => ask(METHODS.approveNetwork, question),
      confirmAccept: (question) => ask(METHODS.confirmAccept, question),
    };
    const handle =
      (run: (params: unknown) => unknown) =>
      async (params: unknown): Promise<unknown> => {
        inFlight++;
        touch();
        try {
          return await run(params);
        } catch (error) {
          return responseError(error);
        } finally {
          inFlight--;
          touch();
        }
      };

    connection.onRequest(
      METHODS.hello,
      handle((params): HelloResult => {
        const hello = helloParams.safeParse(params);
        if (!hello.success) throw new EngineError("BAD_REQUEST", "hello: expected {name, protocol}");
        if (hello.data.protocol !== PROTOCOL_VERSION)
          throw new EngineError(
            "BAD_REQUEST",
            `this engine speaks protocol ${PROTOCOL_VERSION}, the client ${hello.data.protocol}: umbra serve --stop stops it`,
          );
        if (caller) throw new EngineError("BAD_REQUEST", "hello was said already");
        if (closed) throw new EngineError("NO_ENGINE", "the connection is closed");
        caller = engine.connect(hello.data.name, hooks);
        return { protocol: PROTOCOL_VERSION, pid: process.pid, startedAt: engine.startedAt };
      }),
    );
    connection.onRequest(
      METHODS.call,
      handle((params) => {
        if (!caller) throw new EngineError("BAD_REQUEST", "say hello first");
        const call = callParams.safeParse(params);
        if (!call.success) throw new EngineError("BAD_REQUEST", "call: expected {name, params}");
        calls++;
        return engine.call(caller, call.data.name as OperationName, call.data.params);
      }),
    );
    connection.onRequest(METHODS.info, handle(info));
    connection.onRequest(
      METHODS.stop,
      handle(() => {
        setImmediate(() => void stop("asked"));
        return { pid: process.pid };
      }),
    );
    connection.listen();
  });

  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(address.address, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    address.release();
    throw new EngineError("UNAVAILABLE", `cannot listen on ${place.socket}: ${errorCode(error) ?? error}`);
  } finally {
    process.umask(umask);
  }
  chmodSync(place.socket, 0o600);
  return { stopped, stop };
}
