/** Runs at most `concurrency` tasks at a time; the others wait in FIFO order. */
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

export function createLimiter(concurrency: number): Limiter {
  const max = Math.max(1, Math.floor(concurrency));
  let active = 0;
  // A FIFO with a moving head: Array#shift is O(n) on long queues.
  let waiting: (() => void)[] = [];
  let head = 0;

  const release = (): void => {
    active--;
    if (head < waiting.length) {
      const next = waiting[head] as () => void;
      waiting[head] = noop;
      head++;
      if (head > 1024 && head * 2 > waiting.length) {
        waiting = waiting.slice(head);
        head = 0;
      }
      active++;
      next();
    }
  };

  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = (): Promise<T> => {
      let result: Promise<T>;
      try {
        result = task();
      } catch (error) {
        result = Promise.reject(error);
      }
      return result.finally(release);
    };
    if (active < max) {
      active++;
      return run();
    }
    return new Promise<T>((resolve, reject) => {
      waiting.push(() => {
        run().then(resolve, reject);
      });
    });
  };
}

function noop(): void {}
