/** How old a Recent value may be. */
export interface RecentAges {
  /** Worked out again once older than this (now: callers may ask every time). */
  max: () => number;
  /** After `changed()`, worked out again once older than this. */
  afterChange: number;
}

/**
 * A value worked out again once it is too old, shared by every caller meanwhile. The engine lives long,
 * and what it derives from the workspace (the sandbox policy: which files are hidden; the file doors built
 * on it) must follow the user's changes: an ignore rule added, a secret created. A value is too old past
 * `ages.max()`, or past `ages.afterChange` once `changed()` said the workspace changed since it was begun.
 * A value too old is still served while the new one is worked out (once, in the background), so no
 * request waits for it: what a caller gets is at most that age plus one working-out old. `fresh()` works
 * one out now and waits for it (commands get that).
 */
export class Recent<T> {
  private current: { value: Promise<T>; at: number } | undefined;
  private renewing: Promise<void> | undefined;
  private changedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly make: () => Promise<T>,
    private readonly ages: RecentAges,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): Promise<T> {
    const current = this.current;
    if (!current) return this.fresh();
    if (!this.renewing && this.tooOld(current.at)) {
      const started = this.now();
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

  private tooOld(at: number): boolean {
    const age = this.now() - at;
    return age >= this.ages.max() || (this.changedAt >= at && age >= this.ages.afterChange);
  }

  fresh(): Promise<T> {
    const entry = { value: this.make(), at: this.now() };
    this.current = entry;
    entry.value.catch(() => {
      if (this.current === entry) this.current = undefined;
    });
    return entry.value;
  }

  /** What the value is worked out from changed (now): it is renewed once `afterChange` old. */
  changed(): void {
    this.changedAt = this.now();
  }

  /** Forgets the value: the next get() works out a new one and waits for it. */
  clear(): void {
    this.current = undefined;
  }
}
