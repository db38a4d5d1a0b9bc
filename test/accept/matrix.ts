/**
 * Shared by the no-byte-lost matrices (matrix-*.test.ts): a user's folder that is a git repository with
 * a 20-line file, the user's edits made as an editor makes them (in place, or a temporary file renamed
 * over the original), and git in that folder.
 */
import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { numbered, replaceLine } from "./helpers.js";

export const BASE = numbered(20);
/** What the agent does in the scenario: line 2. */
export const AGENT_SED = `sed -i "s/^2$/two-by-agent/" f.txt`;
export const AGENT = replaceLine(BASE, 2, "two-by-agent");
export const USER = replaceLine(BASE, 19, "nineteen-by-user");
export const BOTH = replaceLine(AGENT, 19, "nineteen-by-user");
export const USER_SAME_LINE = replaceLine(BASE, 2, "two-by-user");

export interface Folder {
  base: string;
  ws: string;
  env: NodeJS.ProcessEnv;
  git(...args: string[]): string;
  read(path: string): string;
  /** Commits what `change` does on a new git branch `other`, then checks `main` out again. */
  commitOnOther(change: () => void): void;
}

/** A temporary user's folder `ws` (a git repository holding f.txt = BASE, committed) and a data dir. */
export function userFolder(): Folder {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-matrix-")));
  const ws = join(base, "ws");
  mkdirSync(ws);
  mkdirSync(join(base, "config", "umbra"), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: join(base, "home"),
    UMBRA_HOME: join(base, "data"),
    XDG_CONFIG_HOME: join(base, "config"),
    UMBRA_ADMIN_POLICY: join(base, "no-admin-policy.json"),
    GIT_CONFIG_NOSYSTEM: "1",
  };
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@u", ...args], {
      cwd: ws,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  writeFileSync(join(ws, "f.txt"), BASE);
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "base");
  const commitOnOther = (change: () => void) => {
    git("checkout", "-qb", "other");
    change();
    git("add", "-A");
    git("commit", "-qm", "other");
    git("checkout", "-q", "main");
  };
  return { base, ws, env, git, read: (path) => readFileSync(join(ws, path), "utf8"), commitOnOther };
}

/** The user's umbra configuration (XDG_CONFIG_HOME/umbra/config.json). */
export function userConfig(folder: Folder, config: object): void {
  writeFileSync(join(folder.base, "config", "umbra", "config.json"), JSON.stringify(config));
}

export type SaveStyle = "in place" | "atomic rename";
export const SAVE_STYLES: SaveStyle[] = ["in place", "atomic rename"];

/**
 * Saves `content` at `path` as an editor does: in place (the same file, truncated and rewritten) or
 * by writing a temporary file next to it and renaming it over the original. Checks that the style
 * really kept or replaced the file.
 */
export function save(folder: Folder, path: string, content: string, style: SaveStyle): void {
  const target = join(folder.ws, path);
  const before = lstatSync(target).ino;
  if (style === "in place") writeFileSync(target, content);
  else {
    const temp = join(folder.ws, `.${path}.swp`);
    writeFileSync(temp, content);
    renameSync(temp, target);
  }
  const after = lstatSync(target).ino;
  if ((style === "in place") !== (before === after)) throw new Error(`${style} save did not behave so`);
}
