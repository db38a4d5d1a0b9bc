/**
 * A value worked out again once it is older than `maxAgeMs`, shared by every caller meanwhile. The
 * engine lives long, and what it derives from the workspace (the sandbox policy: which files are hidden;
 * the file doors built on it) must follow the user's changes: an ignore rule added, a secret created.
 * Past its age the value is still served while the new one is worked out (once, in the background), so
 * no request waits for it: what a caller gets is at most the age plus one working-out old. `fresh()`
 * works one out now and waits for it (commands get that).
 */
export class Recent<T> {
  private current: { value: Promise<T>; at: number } | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly make: () => Promise<T>,
    private readonly maxAgeMs: number,
  ) {}

  get(): Promise<T> {
    const current = this.current;
    if (!current) return this.fresh();
    if (performance.now() - current.at >= this.maxAgeMs && !this.renewing) {
      const started = performance.now();
      const next = this.make();
      this.renewing = next.then(
        () => {
          if (this.current === current) this.current = { value: next, at: started };
        },
        () => undefined,
      );
      void this.renewing.finally(() => {
        this.renewing = undefined;
      });
    }
    return current.value;
  }

  fresh(): Promise<T> {
    const entry = { value: this.make(), at: performance.now() };
    this.current = entry;
    entry.value.catch(() => {
      if (this.current === entry) this.current = undefined;
    });
    return entry.value;
  }

  /** Forgets the value: the next get() works out a new one and waits for it. */
  clear(): void {
    this.current = undefined;
  }
}
