/**
 * Waiting in tests without depending on how fast the machine is: wait for a condition, never for a fixed
 * time, and let every bound grow on a slow or busy machine.
 */

/**
 * How many times longer than the defaults tests may wait: `UMBRA_TEST_TIME_SCALE` (default 1), e.g. 3
 * on a runner that is slow or shared. It scales vitest's test and hook timeouts and every bound below.
 */
const TIME_SCALE = timeScale(process.env.UMBRA_TEST_TIME_SCALE);

function timeScale(value: string | undefined): number {
  if (value === undefined || value === "") return 1;
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale < 1) {
    throw new Error(`UMBRA_TEST_TIME_SCALE must be a number of at least 1, not ${JSON.stringify(value)}`);
  }
  return scale;
}

/** `ms` scaled by TIME_SCALE. */
export function scaled(ms: number): number {
  return Math.round(ms * TIME_SCALE);
}

/**
 * Resolves once `condition` holds, checking every 20 ms; fails naming `what` when it still does not
 * after `ms` (30 s by default, scaled): a bound for a hang, not for speed.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const end = Date.now() + scaled(ms);
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out after ${scaled(ms)} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}
