import { loadConfig, type UmbraConfig } from "../config/config.js";
import type { IndexProgress } from "../index/indexer.js";
import { formatProgress, ProgressLine } from "./progress.js";

/** Configuration for a command run against `root`. */
export function configFor(root: string): UmbraConfig {
  // settings the workspace's own .umbra/config.json may not make are dropped, and said so on stderr
  return loadConfig({
    workspaceRoot: root,
    onWarning: (message) => void process.stderr.write(`umbra: ${message}\n`),
  });
}

/** Progress and warning callbacks that draw on the terminal and print warnings on stderr. */
export function terminalReporter(): {
  onProgress: (progress: IndexProgress) => void;
  onWarning: (message: string) => void;
  done: () => void;
} {
  const line = new ProgressLine();
  return {
    onProgress: (p) => line.update(formatProgress(p.phase, p.done, p.total)),
    onWarning: (message) => {
      line.done();
      process.stderr.write(`umbra: ${message}\n`);
    },
    done: () => line.done(),
  };
}

/** An AbortSignal that fires on the first Ctrl-C (a second one exits at once). */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  process.once("SIGINT", () => {
    process.stderr.write("\numbra: interrupting (Ctrl-C again to quit now)\n");
    controller.abort();
    process.once("SIGINT", () => process.exit(130));
  });
  process.once("SIGTERM", () => controller.abort());
  return controller.signal;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Everything on standard input, as UTF-8 text. */
export async function readStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}
