import { lstatSync } from "node:fs";
import { connect, type Socket } from "node:net";
import {
  type CancellationToken,
  CancellationTokenSource,
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { errorCode } from "../workspace/errors.js";
import type {
  AcceptQuestion,
  CallOptions,
  ClientHooks,
  EngineApi,
  NetworkQuestion,
  OperationName,
  ParamsOf,
  Progress,
  ResultOf,
} from "./api.js";
import { EngineError } from "./errors.js";
import { type EnginePlace, privateEngineDir, socketPath } from "./place.js";
import {
  type EngineInfo,
  engineErrorOf,
  type HelloResult,
  METHODS,
  PROTOCOL_VERSION,
  type ProgressNotice,
  UNASKED,
} from "./protocol.js";

/** An engine that does not answer its hello in this long is taken as not running. */
const HELLO_TIMEOUT_MS = 15_000;

/**
 * A connected socket to the running engine; undefined when none runs (no socket, or nobody listens).
 * NO_ENGINE when one could not be used: a path the kernel would not take, a folder that is not private.
 */
async function dial(place: EnginePlace, env: NodeJS.ProcessEnv): Promise<Socket | undefined> {
  const unusable = (error: unknown) =>
    new EngineError("NO_ENGINE", error instanceof Error ? error.message : String(error));
  let path: string;
  try {
    path = socketPath(place);
  } catch (error) {
    throw unusable(error);
  }
  try {
    if (!lstatSync(path).isSocket()) return undefined;
  } catch {
    return undefined;
  }
  try {
    privateEngineDir(place, env, false);
  } catch (error) {
    throw unusable(error);
  }
  return new Promise<Socket | undefined>((resolve, reject) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error) => {
      const code = errorCode(error);
      if (code === "ECONNREFUSED" || code === "ENOENT") resolve(undefined);
      else
        reject(new EngineError("NO_ENGINE", `cannot reach the engine at ${place.socket}: ${code ?? error}`));
    });
  });
}

/** One connection to the running engine (`umbra serve`) over its socket. */
export class SocketEngine implements EngineApi {
  private closed = false;
  private nextProgress = 0;
  private readonly progress = new Map<number, (progress: Progress) => void>();

  private constructor(
    private readonly socket: Socket,
    private readonly connection: MessageConnection,
  ) {
    // the engine went away: what is still waiting for an answer fails (NO_ENGINE), as does what follows
    const gone = () => void this.close();
    connection.onClose(gone);
    socket.on("error", gone).on("close", gone);
    connection.onNotification(METHODS.progress, ({ id, message, done, total }: ProgressNotice) =>
      this.progress.get(id)?.({ message, done, total }),
    );
  }

  /**
   * Connects to the running engine; undefined when none runs. With `hello` (a client's name and
   * hooks), the connection is a client of the engine and may call operations; without, it may only
   * ask for `info` and `stop`.
   */
  static async connect(
    place: EnginePlace,
    env: NodeJS.ProcessEnv,
    hello?: { name: string; hooks?: ClientHooks },
  ): Promise<SocketEngine | undefined> {
    const socket = await dial(place, env);
    if (!socket) return undefined;
    const connection = createMessageConnection(
      new StreamMessageReader(socket),
      new StreamMessageWriter(socket),
    );
    const hooks = hello?.hooks;
    if (hooks) {
      connection.onRequest(
        METHODS.approveNetwork,
        async (question: NetworkQuestion): Promise<unknown> =>
          (await hooks.approveNetwork(question)) ?? UNASKED,
      );
      connection.onRequest(
        METHODS.confirmAccept,
        (question: AcceptQuestion): Promise<unknown> => hooks.confirmAccept(question),
      );
    }
    connection.listen();
    const engine = new SocketEngine(socket, connection);
    if (!hello) return engine;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        engine.request<HelloResult>(METHODS.hello, { name: hello.name, protocol: PROTOCOL_VERSION }),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new EngineError("NO_ENGINE", "the engine does not answer")),
            HELLO_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      await engine.close();
      throw error instanceof EngineError && error.code !== "NO_ENGINE"
        ? new EngineError("NO_ENGINE", `the engine refused this client: ${error.message}`)
        : error;
    } finally {
      clearTimeout(timer);
    }
    return engine;
  }

  async call<N extends OperationName>(
    name: N,
    params: ParamsOf<N>,
    options: CallOptions = {},
  ): Promise<ResultOf<N>> {
    const { signal, onProgress } = options;
    if (signal?.aborted) throw new EngineError("CANCELLED", "the request was cancelled");
    const id = onProgress ? this.nextProgress++ : undefined;
    if (id !== undefined && onProgress) this.progress.set(id, onProgress);
    const cancel = signal ? new CancellationTokenSource() : undefined;
    const abort = () => cancel?.cancel();
    signal?.addEventListener("abort", abort, { once: true });
    try {
      return await this.request<ResultOf<N>>(
        METHODS.call,
        { name, params, ...(id === undefined ? {} : { progress: id }) },
        cancel?.token,
      );
    } finally {
      signal?.removeEventListener("abort", abort);
      cancel?.dispose();
      if (id !== undefined) this.progress.delete(id);
    }
  }

  info(): Promise<EngineInfo> {
    return this.request<EngineInfo>(METHODS.info, {});
  }

  /** Asks the engine to stop (it may close the connection before its answer is out): its pid. */
  async stop(): Promise<number> {
    const { pid } = await this.info();
    await this.request(METHODS.stop, {}).catch(() => undefined);
    return pid;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.connection.dispose();
    this.socket.destroy();
  }

  private async request<T>(method: string, params: unknown, token?: CancellationToken): Promise<T> {
    if (this.closed) throw new EngineError("NO_ENGINE", "the connection to the engine is closed");
    try {
      // a token only when there is one: another argument would make the parameters an array
      const answer = token
        ? await this.connection.sendRequest(method, params, token)
        : await this.connection.sendRequest(method, params);
      return answer as T;
    } catch (error) {
      throw engineErrorOf(error);
    }
  }
}
