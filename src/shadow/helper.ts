import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { ShadowError } from "./errors.js";

/** Exit status of the helper when it could not set a branch up (the reason is on stderr). */
export const HELPER_SETUP_FAILED = 125;

/** Where the native helper is built (`npm run build` / `npm run build:native`); `UMBRA_HELPER` overrides. */
export function helperLocation(env: NodeJS.ProcessEnv = process.env): string {
  return env.UMBRA_HELPER || join(import.meta.dirname, "..", "..", "native", "build", "umbra-helper");
}

let checked: string | undefined;

/** The path of the native helper; a ShadowError (HELPER_NOT_BUILT) when it is missing. */
export function helperPath(): string {
  const path = helperLocation();
  if (checked === path) return path;
  try {
    accessSync(path, constants.X_OK);
  } catch (error) {
    throw new ShadowError(
      "HELPER_NOT_BUILT",
      `the native helper ${path} is not built: run npm run build (needs a C compiler)`,
      { cause: error },
    );
  }
  checked = path;
  return path;
}

export interface HelperResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the helper with `args` and collects its output; never throws for a non-zero exit. */
export function runHelper(args: readonly string[], timeoutMs = 30_000): Promise<HelperResult> {
  const path = helperPath();
  return new Promise((resolve, reject) => {
    execFile(
      path,
      args,
      { encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") {
          if (error.killed || error.signal) {
            resolve({ code: 128, stdout, stderr: stderr || `killed by ${error.signal ?? "timeout"}` });
            return;
          }
          reject(
            new ShadowError("HELPER_NOT_BUILT", `cannot run ${path}: ${error.message}`, { cause: error }),
          );
          return;
        }
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/** The first line the helper wrote on stderr, without its `umbra-helper: ` prefix. */
export function helperReason(stderr: string): string {
  const line =
    stderr
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.startsWith("umbra-helper:")) ??
    stderr.trim().split("\n")[0] ??
    "";
  return line.replace(/^umbra-helper:\s*/, "") || "no reason given";
}

const OPAQUE_BATCH = 500;

/** Which of `dirs` (absolute paths in an upper layer) carry the overlay "opaque" mark. */
export async function opaqueDirs(dirs: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let start = 0; start < dirs.length; start += OPAQUE_BATCH) {
    const batch = dirs.slice(start, start + OPAQUE_BATCH);
    const result = await runHelper(["opaque", ...batch]);
    if (result.code !== 0) {
      throw new ShadowError("MOUNT_FAILED", `umbra-helper opaque failed: ${helperReason(result.stderr)}`);
    }
    for (const line of result.stdout.split("\n")) if (line !== "") found.add(line);
  }
  return found;
}
