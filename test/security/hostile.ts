/**
 * The hostile workspace of the escape suites that drive a front end (MCP, HTTP): a git repository (a
 * copy of examples/) with hidden files (.env and secrets/ in .umbraignore), hard links to them and to
 * ~/.ssh/id_rsa in a fake home, links out (to ~, ~/.ssh, /etc/passwd, ..), odd names, core.hooksPath =
 * .husky and a cloned repository's core.fsmonitor and core.pager; beside it the fake home, a file
 * outside and another workspace. What must never change (the user's folder, the home, the folder
 * beside) is fingerprinted before the probes and compared after each.
 */
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "vitest";
import { umbraSync } from "../helpers/cli.js";
import { copyExamples } from "../helpers/workspace.js";
import { fingerprintTree } from "../mcp/helpers.js";

const SECRETS = [
  "HOME_SECRET_bashrc",
  "HOME_SECRET_ssh",
  "WS_SECRET_env",
  "WS_SECRET_pem",
  "OUTSIDE_SECRET",
  "OTHER_ROOT_SECRET",
  "ENV_SECRET_key",
];
/** A line of /etc/passwd. */
const PASSWD = /root:[^:\n]*:0:0:/;

/** The secret (or /etc/passwd) that `text` quotes; undefined when it quotes none. */
export function leak(text: string): string | undefined {
  return SECRETS.find((secret) => text.includes(secret)) ?? (PASSWD.test(text) ? "/etc/passwd" : undefined);
}

export interface Hostile {
  /** The folder holding all of the others. */
  base: string;
  /** The user's folder (indexed). */
  root: string;
  home: string;
  data: string;
  /** Another workspace beside it. */
  other: string;
  env: NodeJS.ProcessEnv;
}

/** Makes the hostile workspace and its surroundings, and builds its index. */
export async function hostileWorkspace(): Promise<Hostile> {
  const root = realpathSync(await copyExamples());
  const base = dirname(root);
  const home = join(base, "home");
  const other = join(base, "other");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    UMBRA_HOME: join(base, "data"),
    XDG_CONFIG_HOME: join(base, "config"),
    GIT_CONFIG_NOSYSTEM: "1",
    // what the user's shell holds: never passed into a command's sandbox
    UMBRA_MODEL_API_KEY: "ENV_SECRET_key",
    AWS_SECRET_ACCESS_KEY: "ENV_SECRET_key",
  };
  const git = (...args: string[]): string =>
    execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@u", ...args], {
      cwd: root,
      env,
      encoding: "utf8",
    });
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".bashrc"), "export HOME_SECRET_bashrc=1\n");
  writeFileSync(join(home, ".ssh", "id_rsa"), "HOME_SECRET_ssh\n");
  writeFileSync(join(base, "outside.txt"), "OUTSIDE_SECRET\n");
  mkdirSync(other);
  writeFileSync(join(other, "other-secret.txt"), "OTHER_ROOT_SECRET\n");

  writeFileSync(join(root, ".umbraignore"), ".env\nsecrets/\n");
  writeFileSync(join(root, ".gitignore"), ".env\nsecrets/\n");
  writeFileSync(join(root, ".env"), "WS_SECRET_env=1\n");
  mkdirSync(join(root, "secrets"));
  writeFileSync(join(root, "secrets", "id.pem"), "WS_SECRET_pem\n");
  mkdirSync(join(root, ".vscode"));
  writeFileSync(join(root, ".vscode", "settings.json"), "{}\n");
  git("init", "-q", "-b", "main");
  git("config", "core.hooksPath", ".husky");
  git("add", "-A");
  git("commit", "-qm", "base");
  // a cloned repository's git config that runs a program wherever git looks at the folder
  git("config", "core.fsmonitor", `touch ${join(base, "ran-fsmonitor")}`);
  git("config", "core.pager", `touch ${join(base, "ran-pager")}`);
  // what a cloned repository can hold: links out, links to hidden files, hard links, odd names
  symlinkSync(home, join(root, "homelink"));
  symlinkSync(join(home, ".ssh"), join(root, "ssh"));
  symlinkSync("/etc/passwd", join(root, "passwd.txt"));
  symlinkSync("/etc", join(root, "etc"));
  symlinkSync("..", join(root, "up"));
  symlinkSync(".env", join(root, "env-link.txt"));
  symlinkSync("secrets", join(root, "secrets-link"));
  symlinkSync("billing", join(root, "lib"));
  linkSync(join(root, ".env"), join(root, "notes-link.txt"));
  linkSync(join(home, ".ssh", "id_rsa"), join(root, "key-copy.txt"));
  writeFileSync(join(root, "a\nfake-entry.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "\u001b[31mred.ts"), "export const red = 1;\n");
  const indexed = umbraSync(env, ["index", root]);
  expect(indexed.code, indexed.stderr).toBe(0);
  return { base, root, home, data: join(base, "data"), other, env };
}

/** Links in the workspace that lead out of it: to /etc/passwd, /etc, ~ and ~/.ssh. */
export const LINKS_OUT = [
  "passwd.txt",
  "etc/passwd",
  "homelink/.bashrc",
  "homelink/.ssh/id_rsa",
  "ssh/id_rsa",
];

/** Paths that name something outside the workspace, or a hidden file by another spelling. */
export function pathsOut(h: Hostile): string[] {
  return [
    "../outside.txt",
    "billing/../../outside.txt",
    "/etc/passwd",
    `${h.root}/../outside.txt`,
    join(h.other, "other-secret.txt"),
    "~/.bashrc",
    "/proc/self/root/etc/passwd",
    "/proc/self/cwd/../outside.txt",
    ".//.env",
    "secrets//id.pem",
    ".env\u0000.txt",
  ];
}

/** Files an accept may never write: outside, hidden, protected, through a link out. */
export const NEVER_ACCEPTED = [
  "../outside.txt",
  ".env",
  "/etc/passwd",
  ".git/config",
  "homelink/.bashrc",
  "secrets/id.pem",
];

/** What must not change: the user's folder, the home folder, the one beside, the file outside. */
export interface Snapshot {
  root: string[];
  home: string[];
  other: string[];
  outside: string;
}

export async function snapshotAll(h: Hostile): Promise<Snapshot> {
  return {
    root: await fingerprintTree(h.root),
    // umbra makes the language servers' cache folders (~/.cache/gopls, ~/.cache/clangd) itself
    home: (await fingerprintTree(h.home)).filter((line) => !/^\S+ \.cache(\/| )/.test(line)),
    other: await fingerprintTree(h.other),
    outside: readFileSync(join(h.base, "outside.txt"), "utf8"),
  };
}

/** The lines of `now` not in `then` (+) and of `then` not in `now` (-). */
function changedLines(then: string[], now: string[]): string[] {
  return [
    ...now.filter((line) => !then.includes(line)).map((line) => `+ ${line}`),
    ...then.filter((line) => !now.includes(line)).map((line) => `- ${line}`),
  ];
}

/** Fails when anything of `before` changed. */
export async function expectUntouched(h: Hostile, before: Snapshot): Promise<void> {
  const now = await snapshotAll(h);
  expect(changedLines(before.root, now.root), "the user's folder changed").toEqual([]);
  expect(changedLines(before.home, now.home), "the home folder changed").toEqual([]);
  expect(changedLines(before.other, now.other), "the other workspace changed").toEqual([]);
  expect(now.outside).toBe(before.outside);
}
