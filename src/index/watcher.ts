import { type FSWatcher, watch } from "node:fs";
import type { IndexReport } from "./indexer.js";

export interface WatchOptions {
  /** Runs one incremental sync; the watcher never runs two at once. */
  sync: (reason: string) => Promise<IndexReport>;
  /** Quiet time after the last file event before a sync (bursts become one sync). */
  debounceMs: number;
  /** Periodic full Merkle check, for changes no event reported (network mounts, missed events). */
  intervalMs: number;
  onSync?: (report: IndexReport, reason: string) => void;
  onError?: (error: unknown) => void;
  /** Each file event (git's noise left out), as it comes, before any debounce. */
  onChange?: (path: string) => void;
  /** Whether file events are coming: true once the watch is set up, false when it fails or ends. */
  onWatching?: (live: boolean) => void;
  signal?: AbortSignal;
}

/** Paths whose events never need a sync: git's internals change on every command. */
function isNoise(path: string): boolean {
  return /(^|\/)\.git\/(objects|logs|index\.lock|FETCH_HEAD|ORIG_HEAD)/.test(path);
}

/**
 * Keeps an index fresh: file-system events (recursive watch) debounced into batched syncs, plus a
 * periodic Merkle check. Resolves when the signal aborts.
 */
export async function watchWorkspace(root: string, options: WatchOptions): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let pending: string | undefined;
  const changed = new Set<string>();

  const runSync = async (reason: string): Promise<void> => {
    if (running) {
      pending = reason;
      return;
    }
    running = true;
    try {
      const report = await options.sync(reason);
      options.onSync?.(report, reason);
    } catch (error) {
      options.onError?.(error);
    } finally {
      running = false;
      if (pending && !options.signal?.aborted) {
        const next = pending;
        pending = undefined;
        void runSync(next);
      }
    }
  };

  const schedule = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      const reason = `${changed.size} path(s) changed`;
      changed.clear();
      void runSync(reason);
    }, options.debounceMs);
  };

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(root, { recursive: true }, (_event, file) => {
      const path = file?.toString() ?? "";
      if (isNoise(path)) return;
      changed.add(path);
      options.onChange?.(path);
      schedule();
    });
    watcher.on("error", (error) => {
      options.onWatching?.(false);
      options.onError?.(error);
    });
    options.onWatching?.(true);
  } catch (error) {
    options.onError?.(error);
  }
  const interval = setInterval(() => void runSync("periodic check"), options.intervalMs);
  await runSync("start");
  await new Promise<void>((resolve) => {
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  clearInterval(interval);
  if (timer) clearTimeout(timer);
  watcher?.close();
  options.onWatching?.(false);
  while (running) await new Promise((resolve) => setTimeout(resolve, 50));
}
