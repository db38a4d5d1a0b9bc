import type { CallOptions, ClientHooks, EngineApi, OperationName, ParamsOf, ResultOf } from "./api.js";
import { Engine } from "./engine.js";

/** An engine a front end talks to, released by close() (the engine itself may live on). */
export interface EngineConnection extends EngineApi {
  close(): Promise<void>;
}

export interface OpenEngineOptions {
  /** What the client calls itself (shown in branch lists). */
  name: string;
  hooks: ClientHooks;
  env?: NodeJS.ProcessEnv;
}

/** An engine of this process, as a connection: what `call` sends goes to `engine.call` directly. */
export function inProcess(engine: Engine, options: Omit<OpenEngineOptions, "env">): EngineConnection {
  const caller = engine.connect(options.name, options.hooks);
  return {
    call<N extends OperationName>(name: N, params: ParamsOf<N>, options?: CallOptions): Promise<ResultOf<N>> {
      return engine.call(caller, name, params, options);
    },
    async close() {
      engine.disconnect(caller);
    },
  };
}

/**
 * The user's engine: the running `umbra serve`, started when none runs. (Until the socket front end
 * lands: an engine in this process.)
 */
export async function openEngine(options: OpenEngineOptions): Promise<EngineConnection> {
  const engine = new Engine({ env: options.env ?? process.env });
  const connection = inProcess(engine, options);
  return {
    call: connection.call,
    async close() {
      await connection.close();
      await engine.close();
    },
  };
}
