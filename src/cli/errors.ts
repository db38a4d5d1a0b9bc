/** An error the user caused (bad usage or input): exit status 2 with a one-line reason. */
export class UsageError extends Error {
  override name = "UsageError";
}

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
  return name && inputErrors.includes(name) ? 2 : 1;
}
