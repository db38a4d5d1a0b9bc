/** An error the user caused (bad usage or input): exit status 2 with a one-line reason. */
export class UsageError extends Error {
  override name = "UsageError";
}

const ENGINE_INPUT_ERRORS: ReadonlySet<string> = new Set([
  "BAD_REQUEST",
  "NOT_FOUND",
  "REFUSED",
  "UNAVAILABLE",
  "BUSY",
  "STALE",
]);

/** Exit status for an error: 2 for bad usage or input, 1 for a failure of the work itself. */
export function exitCodeFor(error: unknown): number {
  const name = (error as { name?: string })?.name;
  const inputErrors = [
    "UsageError",
    "WorkspaceError",
    "ConfigError",
    "NotIndexedError",
    "CommanderError",
    "SessionNotFoundError",
  ];
  // the accept's own bad input: a file the branch did not change, hunks without one file, ...
  if (name === "AcceptError" && (error as { code?: string }).code === "USAGE") return 2;
  // the engine's answer to bad input, or to a request it cannot serve (the direct path's own errors are 2 too)
  if (name === "EngineError" && ENGINE_INPUT_ERRORS.has((error as { code?: string }).code ?? "")) return 2;
  return name && inputErrors.includes(name) ? 2 : 1;
}
