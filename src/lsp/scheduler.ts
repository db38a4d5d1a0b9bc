import { LspError } from "./errors.js";

interface Job {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs one job at a time for one server, round-robin across branches: each branch with queued work gets
 * one job per round, in the order branches first asked, so a branch with many requests cannot starve
 * the others. A job owns the server while it runs (it switches the documents to its branch's content,
 * asks, and reads the answer before the next job starts).
 */
export class FairScheduler {
  private readonly queues = new Map<string, Job[]>();
  private readonly ring: string[] = [];
  private running = false;
  private closed = false;
  /** How many jobs ran, per branch (for tests and status). */
  readonly served = new Map<string, number>();

  constructor(private readonly hooks: { before?: () => void; after?: () => void } = {}) {}

  /** Queues `job` for `branchId` and resolves with its result once it has run. */
  run<T>(branchId: string, job: () => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new LspError("shut-down", "the language-server host is shut down"));
    return new Promise<T>((resolve, reject) => {
      const queue = this.queues.get(branchId);
      const entry: Job = { run: job, resolve: (value) => resolve(value as T), reject };
      if (queue) queue.push(entry);
      else {
        this.queues.set(branchId, [entry]);
        this.ring.push(branchId);
      }
      void this.pump();
    });
  }

  /** Jobs waiting (not counting the one running). */
  get pending(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.length;
    return count;
  }

  get busy(): boolean {
    return this.running;
  }

  private next(): Job | undefined {
    const branchId = this.ring.shift();
    if (branchId === undefined) return undefined;
    const queue = this.queues.get(branchId);
    const job = queue?.shift();
    if (queue && queue.length > 0) this.ring.push(branchId);
    else this.queues.delete(branchId);
    this.served.set(branchId, (this.served.get(branchId) ?? 0) + 1);
    return job;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.hooks.before?.();
    try {
      for (let job = this.next(); job; job = this.next()) {
        try {
          job.resolve(await job.run());
        } catch (error) {
          job.reject(error);
        }
      }
    } finally {
      this.running = false;
      this.hooks.after?.();
    }
  }

  /** Rejects every queued job; the running one finishes. */
  close(): void {
    this.closed = true;
    for (const queue of this.queues.values()) {
      for (const job of queue) job.reject(new LspError("shut-down", "the language-server host is shut down"));
    }
    this.queues.clear();
    this.ring.length = 0;
  }
}
