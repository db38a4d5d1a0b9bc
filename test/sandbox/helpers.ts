import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { lstat, mkdtemp, readdir, readFile, readlink, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_ENV_ALLOWLIST } from "../../src/sandbox/policy.js";
import { runSandboxed } from "../../src/sandbox/run.js";
import type { RunOptions, SandboxPolicy, SandboxResult } from "../../src/sandbox/types.js";

const ROOT = join(import.meta.dirname, "..", "..");
const NATIVE = join(ROOT, "native");
export const HELPER = join(NATIVE, "build", "umbra-helper");

/** Builds the native helper when it is missing or older than one of its sources. */
export function ensureHelper(): string {
  const newest = Math.max(
    ...readdirSync(NATIVE)
      .filter((name) => /\.(c|h|sh)$/.test(name))
      .map((name) => statSync(join(NATIVE, name)).mtimeMs),
  );
  if (!existsSync(HELPER) || statSync(HELPER).mtimeMs < newest) {
    execFileSync("sh", [join(NATIVE, "build.sh")], { stdio: "pipe" });
  }
  return HELPER;
}

export interface SandboxFixture {
  /** The temporary folder holding everything below. */
  base: string;
  /** The workspace (a git repository with ignore files, a hidden file and a hidden folder). */
  ws: string;
  /** A folder outside the workspace that the sandbox can see but must not change. */
  outside: string;
  policy: SandboxPolicy;
  done(): Promise<void>;
}

/**
 * A workspace with `.git`, `.umbraignore` (secret.env, secrets/), `.gitignore`, a file and a folder
 * that the ignore file hides, and a default workspace-write policy for it (network off). `parent` is
 * where the temporary folder goes (default: the OS temp folder).
 */
export async function makeFixture(parent = tmpdir(), mode = 0o700): Promise<SandboxFixture> {
  const base = await realpath(await mkdtemp(join(parent, "umbra-sbx-")));
  execFileSync("chmod", [mode.toString(8), base]);
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(outside, "keep.txt"), "outside\n");
  execFileSync("git", ["init", "-q", "-b", "main", ws]);
  writeFileSync(join(ws, "a.txt"), "hello\n");
  writeFileSync(join(ws, ".umbraignore"), "secret.env\nsecrets/\n");
  writeFileSync(join(ws, ".gitignore"), "node_modules/\n");
  writeFileSync(join(ws, "secret.env"), "API_KEY=top-secret-value\n");
  mkdirSync(join(ws, "secrets"));
  writeFileSync(join(ws, "secrets", "key.txt"), "top-secret-key\n");
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", ...args], { stdio: "pipe" });
  git("add", "a.txt", ".umbraignore", ".gitignore");
  git("commit", "-q", "-m", "init");
  const policy = defaultPolicy(ws);
  return {
    base,
    ws,
    outside,
    policy,
    async done() {
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** The default workspace-write policy for a fixture's workspace. */
export function defaultPolicy(ws: string, overrides: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    mode: "workspace-write",
    workspace: ws,
    writableRoots: [ws],
    hiddenPaths: [join(ws, "secret.env"), join(ws, "secrets")],
    protectedPaths: [
      ".git/config",
      ".git/hooks",
      ".vscode",
      ".idea",
      ".umbra/config.json",
      ".gitignore",
      ".umbraignore",
      ".cursorignore",
    ].map((rel) => join(ws, rel)),
    network: false,
    envAllowlist: [...DEFAULT_ENV_ALLOWLIST],
    limits: {
      processes: 512,
      memoryBytes: 4 * 1024 ** 3,
      cpuSeconds: 60,
      outputBytes: 1024 * 1024,
      timeoutMs: 30_000,
    },
    ...overrides,
  };
}

/** Runs a shell script in the sandbox. */
export function sh(policy: SandboxPolicy, script: string, options: RunOptions = {}): Promise<SandboxResult> {
  return runSandboxed(policy, "sh", ["-c", script], options);
}

/** Runs a python3 program in the sandbox. */
export function py(policy: SandboxPolicy, program: string, options: RunOptions = {}): Promise<SandboxResult> {
  return runSandboxed(policy, "python3", ["-c", program], options);
}

/** Whether a process with `marker` in its command line is still running (zombies do not count). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.includes(marker) && state !== "Z") found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/**
 * Every entry below `root` (symlinks as their targets, not followed) with content hash, mode and mtime:
 * equal fingerprints mean the folder did not change.
 */
export async function snapshot(root: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const rel = `${prefix}${entry.name}`;
      const info = await lstat(path);
      if (entry.isSymbolicLink()) lines.push(`l ${rel} -> ${await readlink(path)}`);
      else if (entry.isDirectory()) {
        lines.push(`d ${rel} ${info.mode}`);
        await walk(path, `${rel}/`);
      } else if (entry.isFile()) {
        const hash = createHash("sha256")
          .update(await readFile(path))
          .digest("hex");
        lines.push(`f ${rel} ${hash} ${info.mode} ${info.mtimeMs}`);
      } else lines.push(`o ${rel} ${info.mode}`);
    }
  };
  await walk(root, "");
  return lines.join("\n");
}

/** The environment of a user whose home and umbra data lie in `base` (no system git config). */
export function userEnv(base: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: join(base, "home"),
    XDG_CONFIG_HOME: join(base, "home", ".config"),
    UMBRA_HOME: join(base, "data"),
    GIT_CONFIG_NOSYSTEM: "1",
  };
}

/** A promise that resolves once the stream fed to `onStdout` has said `word` (a handshake, no timing). */
export function saidOnStdout(word: string): { said: Promise<void>; onStdout: (chunk: string) => void } {
  let resolve: () => void = () => {};
  const said = new Promise<void>((done) => {
    resolve = done;
  });
  let text = "";
  return {
    said,
    onStdout: (chunk) => {
      text += chunk;
      if (text.includes(word)) resolve();
    },
  };
}

/** Waits until the folder's last change is more than the walk cache's window of doubt (2 s) ago. */
export async function settled(folder: string): Promise<void> {
  const changed = () => Math.max(statSync(folder).ctimeMs, statSync(folder).mtimeMs);
  while (Date.now() < changed() + 2_100) await new Promise((done) => setTimeout(done, 100));
}
