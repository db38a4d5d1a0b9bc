import { lstatSync } from "node:fs";
import { connect, type Socket } from "node:net";
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { errorCode } from "../workspace/errors.js";
import type {
  AcceptQuestion,
  ClientHooks,
  EngineApi,
  NetworkQuestion,
  OperationName,
  ParamsOf,
  ResultOf,
} from "./api.js";
import { EngineError } from "./errors.js";
import { type EnginePlace, privateEngineDir, socketAddress } from "./place.js";
import { type EngineInfo, engineErrorOf, type HelloResult, METHODS, PROTOCOL_VERSION } from "./protocol.js";

/** An engine that does not answer its hello in this long is taken as not running. */
const HELLO_TIMEOUT_MS = 15_000;

/** A connected socket to the running engine; undefined when none runs (no socket, or nobody listens). */
async function dial(place: EnginePlace, env: NodeJS.ProcessEnv): Promise<Socket | undefined> {
  try {
    if (!lstatSync(place.socket).isSocket()) return undefined;
  } catch {
    return undefined;
  }
  const address = (() => {
    try {
      privateEngineDir(place, env, false);
      return socketAddress(place);
    } catch (error) {
      throw new EngineError("NO_ENGINE", error instanceof Error ? error.message : String(error));
    }
  })();
  try {
    return await new Promise<Socket | undefined>((resolve, reject) => {
      const socket = connect(address.address);
      socket.once("connect", () => {
        socket.removeAllListeners("error");
        resolve(socket);
      });
      socket.once("error", (error) => {
        const code = errorCode(error);
        if (code === "ECONNREFUSED" || code === "ENOENT") resolve(undefined);
        else
          reject(
            new EngineError("NO_ENGINE", `cannot reach the engine at ${place.socket}: ${code ?? error}`),
          );
      });
    });
  } finally {
    address.release();
  }
}

/** One connection to the running engine (`umbra serve`) over its socket. */
export class SocketEngine implements EngineApi {
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly connection: MessageConnection,
  ) {
    // the engine went away: what is still waiting for an answer fails (NO_ENGINE), as does what follows
    const gone = () => void this.close();
    connection.onClose(gone);
    socket.on("error", gone).on("close", gone);
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
        (question: NetworkQuestion): Promise<unknown> => hooks.approveNetwork(question),
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

  call<N extends OperationName>(name: N, params: ParamsOf<N>): Promise<ResultOf<N>> {
    return this.request<ResultOf<N>>(METHODS.call, { name, params });
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

  private async request<T>(method: string, params: unknown): Promise<T> {
    if (this.closed) throw new EngineError("NO_ENGINE", "the connection to the engine is closed");
    try {
      return (await this.connection.sendRequest(method, params)) as T;
    } catch (error) {
      throw engineErrorOf(error);
    }
  }
}
