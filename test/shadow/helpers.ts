import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { type Branch, type ForkOptions, fork } from "../../src/shadow/index.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

const ROOT = join(import.meta.dirname, "..", "..");
const HELPER = join(ROOT, "native", "build", "umbra-helper");
const SOURCE = join(ROOT, "native", "umbra-helper.c");

/** Builds the native helper when it is missing or older than its source (as `npm run build` does). */
export function ensureHelper(): string {
  if (!existsSync(HELPER) || statSync(HELPER).mtimeMs < statSync(SOURCE).mtimeMs) {
    execFileSync("sh", [join(ROOT, "native", "build.sh")], { stdio: "pipe" });
  }
  return HELPER;
}

/** A workspace (copy of examples/), a private data directory, and the workspace's fingerprint. */
export interface Fixture {
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** Fingerprint of the user's folder that every test ends with (rebase() after a deliberate user edit). */
  before: string;
  branches: Branch[];
  fork(options?: ForkOptions): Promise<Branch>;
  rebase(): Promise<void>;
  /** Asserts the user's folder is byte-identical to the start (hashes + mtimes), discards branches, cleans up. */
  done(): Promise<void>;
}

export async function setup(prepare?: (root: string) => Promise<void> | void): Promise<Fixture> {
  ensureHelper();
  const root = await copyExamples();
  if (prepare) await prepare(root);
  const home = await tempDir("home");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    UMBRA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
  };
  const before = await fingerprint(root);
  const fixture: Fixture = {
    root,
    home,
    env,
    before,
    branches: [],
    async fork(options = {}) {
      const branch = await fork(root, { env, ...options });
      fixture.branches.push(branch);
      return branch;
    },
    async rebase() {
      fixture.before = await fingerprint(root);
    },
    async done() {
      try {
        for (const branch of fixture.branches) if (!branch.isDiscarded) await branch.discard();
        expect(await fingerprint(root)).toBe(fixture.before);
      } finally {
        await cleanup(join(root, ".."), home);
      }
    },
  };
  return fixture;
}

/** Runs git in `cwd`, quietly, with a fixed identity. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}
