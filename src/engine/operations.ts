import type { Caller, OperationName, ParsedParamsOf, ResultOf } from "./api.js";
import { EngineError } from "./errors.js";
import type { WorkspaceHub } from "./workspaces.js";

export interface EngineFacts {
  pid: number;
  startedAt: string;
  clients: number;
}

/** Carries out one checked request. */
export async function runOperation<N extends OperationName>(
  _hub: WorkspaceHub,
  _caller: Caller,
  name: N,
  _params: ParsedParamsOf<N>,
  _facts: EngineFacts,
): Promise<ResultOf<N>> {
  throw new EngineError("UNAVAILABLE", `${name} is not built yet`);
}
