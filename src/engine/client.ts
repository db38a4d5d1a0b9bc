import { spawn } from "node:child_process";
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PRIVATE_FILE } from "../config/private.js";
import type { CallOptions, ClientHooks, EngineApi, OperationName, ParamsOf, ResultOf } from "./api.js";
import type { Engine } from "./engine.js";
import { EngineError } from "./errors.js";
import { type EnginePlace, enginePlace, privateEngineDir } from "./place.js";
import { SocketEngine } from "./socket-client.js";

/** An engine a front end talks to, released by close() (the engine itself may live on). */
export interface EngineConnection extends EngineApi {
  close(): Promise<void>;
}

export interface OpenEngineOptions {
  /** What the client calls itself (shown in branch lists). */
  name: string;
  /** How the engine asks this client's user. */
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
 * The running engine (`umbra serve`), or undefined when none runs: nothing is started. Without hooks,
 * the engine's every question to this client is answered no.
 */
export async function runningEngine(
  options: Omit<OpenEngineOptions, "hooks"> & { hooks?: ClientHooks },
): Promise<EngineConnection | undefined> {
  const env = options.env ?? process.env;
  return SocketEngine.connect(enginePlace(env), env, { name: options.name, hooks: options.hooks });
}

/** How long a client waits for an engine it started to listen (a bound for a hang). */
const START_TIMEOUT_MS = 60_000;
/** How long a client still waits once the engine it started has exited (it lost the race to another). */
const AFTER_EXIT_MS = 15_000;
/** An engine log past this size is started afresh. */
const MAX_LOG_BYTES = 1024 * 1024;

/** This package's CLI (from src/engine or dist/engine alike). */
const MAIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** Starts `umbra serve` detached, its output appended to the engine log; resolves when it exits. */
function startServe(place: EnginePlace, env: NodeJS.ProcessEnv): Promise<void> {
  privateEngineDir(place, env, true);
  const log = openSync(
    place.log,
    constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW,
    PRIVATE_FILE,
  );
  try {
    if (fstatSync(log).size > MAX_LOG_BYTES) ftruncateSync(log, 0);
    const child = spawn(process.execPath, [MAIN, "serve"], {
      // not the client's folder: the engine outlives it, and may not keep a workspace's folder busy
      cwd: place.dir,
      detached: true,
      stdio: ["ignore", log, log],
      env,
    });
    child.unref();
    return new Promise((resolve) => {
      child.once("error", () => resolve());
      child.once("exit", () => resolve());
    });
  } finally {
    closeSync(log);
  }
}

function lastLogLine(place: EnginePlace): string {
  try {
    return readFileSync(place.log, "utf8").trim().split("\n").at(-1) ?? "";
  } catch {
    return "";
  }
}

/**
 * The user's engine: the running `umbra serve`, started (detached, its output in the engine folder's
 * engine.log) when none runs. Two clients starting one at once get the same one: the serve lock lets
 * one engine listen, the other `umbra serve` exits. NO_ENGINE when none could be reached.
 */
export async function openEngine(options: OpenEngineOptions): Promise<EngineConnection> {
  const env = options.env ?? process.env;
  const running = await runningEngine(options);
  if (running) return running;
  const place = enginePlace(env);
  let exitedAt: number | undefined;
  void startServe(place, env).then(() => {
    exitedAt = Date.now();
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const engine = await runningEngine(options);
    if (engine) return engine;
    if (Date.now() > deadline || (exitedAt !== undefined && Date.now() - exitedAt > AFTER_EXIT_MS)) {
      const why = lastLogLine(place);
      throw new EngineError(
        "NO_ENGINE",
        `the engine did not start${why ? `: ${why.replace(/^umbra: /, "")}` : ""} (see ${place.log})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
