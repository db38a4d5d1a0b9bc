/**
 * A value made again once it is older than `maxAgeMs` (and when making it failed), shared by every
 * caller meanwhile. The engine lives long, and what it derives from the workspace (the sandbox policy:
 * which files are hidden; the file doors built on it) must follow the user's changes: an ignore rule
 * added, a secret created. `fresh()` makes a new one now.
 */
export class Recent<T> {
  private current: { value: Promise<T>; at: number } | undefined;

  constructor(
    private readonly make: () => Promise<T>,
    private readonly maxAgeMs: number,
  ) {}

  get(): Promise<T> {
    if (this.current && performance.now() - this.current.at < this.maxAgeMs) return this.current.value;
    return this.fresh();
  }

  fresh(): Promise<T> {
    const entry = { value: this.make(), at: performance.now() };
    this.current = entry;
    entry.value.catch(() => {
      if (this.current === entry) this.current = undefined;
    });
    return entry.value;
  }

  /** Forgets the value: the next get() makes a new one. */
  clear(): void {
    this.current = undefined;
  }
}
