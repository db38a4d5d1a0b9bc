/**
 * The crash test's seam: with UMBRA_ACCEPT_CRASH_AFTER=N in the environment, the process kills itself
 * with SIGKILL right after the N-th step of an accept or undo that changed the disk (a write, fsync,
 * rename or unlink, in the user's folder or the journal), so a test can stop it at any step without
 * depending on timing. Unset (always, outside that test) it does nothing.
 */
export type StepCounter = (step: string) => void;

export function crashSeam(env: NodeJS.ProcessEnv): StepCounter {
  const limit = Number(env.UMBRA_ACCEPT_CRASH_AFTER);
  if (!Number.isInteger(limit) || limit < 1) return () => {};
  let steps = 0;
  return () => {
    steps += 1;
    if (steps >= limit) process.kill(process.pid, "SIGKILL");
  };
}
