import type { Socket } from "node:net";
import {
  CancellationToken,
  createMessageConnection,
  type Logger,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import type { Caller, ClientHooks, OperationName, Progress } from "./api.js";
import { EngineError } from "./errors.js";
import { FrameGuard } from "./frame-guard.js";
import {
  callParams,
  ENGINE_ERROR_CODE,
  type EngineInfo,
  type HelloResult,
  helloParams,
  MAX_MESSAGE_BYTES,
  METHODS,
  PROTOCOL_VERSION,
  type ProgressNotice,
  UNASKED,
} from "./protocol.js";
import type { EngineCore } from "./server.js";

/** What one connection tells the server it belongs to, and asks of it. */
export interface ConnectionHost {
  /** Something happened (a client came or went): the engine is not idle. */
  touch(): void;
  /** A request began (+1) or ended (-1). */
  running(delta: 1 | -1): void;
  /** An operation was called. */
  called(): void;
  info(): EngineInfo;
  /** The client asked the engine to stop. */
  stop(): void;
}

const quiet: Logger = { error() {}, warn() {}, info() {}, log() {} };

function responseError(error: unknown): ResponseError<{ code: string; message: string }> {
  const engineError =
    error instanceof EngineError
      ? error
      : new EngineError("INTERNAL", error instanceof Error ? error.message : String(error));
  return new ResponseError(ENGINE_ERROR_CODE, engineError.message, engineError.toWire());
}

/**
 * Serves one client on `socket` (see protocol.ts): its hello makes it a caller of the engine, whose
 * hooks are requests back to it; every request is checked; a broken frame, bad JSON or an error of the
 * socket drops the connection, and with it the caller (its running calls are aborted).
 */
export function serveConnection(socket: Socket, engine: EngineCore, host: ConnectionHost): void {
  host.touch();
  const guard = new FrameGuard(MAX_MESSAGE_BYTES);
  const connection = createMessageConnection(
    new StreamMessageReader(guard),
    new StreamMessageWriter(socket),
    quiet,
  );
  let caller: Caller | undefined;
  let closed = false;
  // a call of this client stops when the client cancels it or goes away
  const gone = new AbortController();
  const drop = () => {
    if (closed) return;
    closed = true;
    gone.abort();
    if (caller) engine.disconnect(caller);
    connection.dispose();
    socket.destroy();
    host.touch();
  };
  socket.on("error", drop).on("close", drop);
  guard.on("error", drop);
  socket.pipe(guard);
  connection.onError(drop);
  connection.onClose(drop);

  const ask = async (method: string, question: unknown): Promise<unknown> => {
    if (closed) return false;
    try {
      return await connection.sendRequest(method, question);
    } catch {
      return false;
    }
  };
  const hooks: ClientHooks = {
    approveNetwork: async (question) => {
      const answer = await ask(METHODS.approveNetwork, question);
      return answer === UNASKED ? undefined : answer === true;
    },
    confirmAccept: async (question) => (await ask(METHODS.confirmAccept, question)) === true,
  };
  const handle =
    (run: (params: unknown, signal: AbortSignal) => unknown) =>
    async (params: unknown, ...rest: unknown[]): Promise<unknown> => {
      host.running(1);
      const token = rest.at(-1);
      const cancelled = new AbortController();
      const listener = CancellationToken.is(token)
        ? token.onCancellationRequested(() => cancelled.abort())
        : undefined;
      try {
        // vscode-jsonrpc spreads array parameters: one object, then the token, is all a request may have
        if (rest.length !== 1 || typeof params !== "object" || params === null || Array.isArray(params))
          throw new EngineError("BAD_REQUEST", "the parameters must be one object");
        return await run(params, AbortSignal.any([cancelled.signal, gone.signal]));
      } catch (error) {
        return responseError(error);
      } finally {
        listener?.dispose();
        host.running(-1);
      }
    };
  const progressTo =
    (id: number) =>
    (progress: Progress): void => {
      if (closed) return;
      const notice: ProgressNotice = { id, ...progress };
      void connection.sendNotification(METHODS.progress, notice).catch(() => undefined);
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
    handle((params, signal) => {
      if (!caller) throw new EngineError("BAD_REQUEST", "say hello first");
      const call = callParams.safeParse(params);
      if (!call.success) throw new EngineError("BAD_REQUEST", "call: expected {name, params}");
      host.called();
      const id = call.data.progress;
      return engine.call(caller, call.data.name as OperationName, call.data.params, {
        signal,
        ...(id === undefined ? {} : { onProgress: progressTo(id) }),
      });
    }),
  );
  connection.onRequest(
    METHODS.info,
    handle(() => host.info()),
  );
  connection.onRequest(
    METHODS.stop,
    handle(() => {
      setImmediate(() => host.stop());
      return { pid: process.pid };
    }),
  );
  connection.listen();
}
