import { lstatSync } from "node:fs";
import type { OperationName, ParamsOf, ResultOf } from "../engine/api.js";
import { enginePlace } from "../engine/place.js";

/** Whether a socket is there to try (a cheap look: no engine module is loaded when none is). */
function socketThere(env: NodeJS.ProcessEnv): boolean {
  try {
    return lstatSync(enginePlace(env).socket).isSocket();
  } catch {
    return false;
  }
}

/**
 * Runs operation `name` on the running engine (`umbra serve`) for `umbra COMMAND`, or answers
 * undefined when the command does the work itself, as it does without an engine: when none runs, when
 * `UMBRA_ENGINE=off`, when the engine's API does not take these parameters (a --limit past its
 * bound), and when the engine goes away before it answered (the operations asked here only read).
 * The engine's own errors are thrown (EngineError, exit status 2 for bad input).
 */
export async function onRunningEngine<N extends OperationName>(
  command: string,
  name: N,
  params: ParamsOf<N>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResultOf<N> | undefined> {
  if (env.UMBRA_ENGINE === "off" || !socketThere(env)) return undefined;
  const [{ OPERATIONS }, { runningEngine }, { isEngineError }] = await Promise.all([
    import("../engine/api.js"),
    import("../engine/client.js"),
    import("../engine/errors.js"),
  ]);
  if (!OPERATIONS[name].safeParse(params).success) return undefined;
  const unreachable = (error: unknown) => isEngineError(error) && error.code === "NO_ENGINE";
  const engine = await runningEngine({ name: `umbra ${command}`, env }).catch((error: unknown) => {
    if (unreachable(error)) return undefined;
    throw error;
  });
  if (!engine) return undefined;
  try {
    return await engine.call(name, params);
  } catch (error) {
    if (unreachable(error)) return undefined;
    throw error;
  } finally {
    await engine.close();
  }
}
