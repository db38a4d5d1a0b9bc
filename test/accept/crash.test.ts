/**
 * The crash test of issue 13: an accept of ~20 files (changed, merged with the user's concurrent edits,
 * added in new folders, deleted, a link) is killed with SIGKILL, 50 times at a random step (the
 * UMBRA_ACCEPT_CRASH_AFTER seam: the child kills itself right after its N-th write, fsync, rename or
 * unlink, so it does not depend on timing) and 10 times after a random delay. After each kill every
 * path holds exactly its old or its new content (never torn; leftover temporary files only under their
 * own `.umbra-accept-*` names); the next accept or undo removes those, and undo brings the folder back to
 * exactly what it was before. The child runs the built dist/ (npm run build).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AcceptError, acceptChanges, undoLastAccept } from "../../src/accept/index.js";
import type { FileState, RecordedChange } from "../../src/shadow/recorded.js";
import { prng } from "../index/embed/synthetic.js";
import { ABSENT, change, file, link, numbered, replaceLine, snapshot, writeFiles } from "./helpers.js";

const CHILD = join(import.meta.dirname, "crash-child.mjs");
const DIST = join(import.meta.dirname, "..", "..", "dist", "accept", "index.js");
const TEMP = /(^|\/)\.umbra-accept-[0-9a-f]+-\d+$/;

let base: string;
let ws: string;
let env: NodeJS.ProcessEnv;
let specFile: string;
let changes: RecordedChange[];
let before: Record<string, string>;
let after: Record<string, string>;

const SEED = Number(process.env.UMBRA_CRASH_SEED ?? Date.now() % 1_000_000);
const rand = prng(SEED);

function content(i: number): string {
  return numbered(30).replace(/^/gm, `f${i} `);
}

async function serialise(state: FileState) {
  if (state.kind !== "file") return state;
  return { kind: "file", mode: state.mode, data: (await state.load()).toString("base64") };
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the child; `killAfterMs` kills it from here after that long (else it runs to its own end). */
function child(extraEnv: NodeJS.ProcessEnv, killAfterMs?: number): Promise<Outcome> {
  return new Promise((done) => {
    const proc = spawn(process.execPath, [CHILD, specFile], { env: { ...env, ...extraEnv } });
    let stdout = "";
    let stderr = "";
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => proc.kill("SIGKILL"), killAfterMs);
    proc.on("close", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr });
    });
  });
}

/** Every path holds its old or its new state; anything else is a leftover temporary file. */
function expectOldOrNew(where: string): string[] {
  const now = snapshot(ws);
  const temps: string[] = [];
  for (const path of new Set([...Object.keys(before), ...Object.keys(after), ...Object.keys(now)])) {
    if (TEMP.test(path)) {
      temps.push(path);
      continue;
    }
    const value = now[path];
    if (value !== before[path] && value !== after[path])
      throw new Error(`${where}: ${path} is neither old nor new: ${JSON.stringify(value)?.slice(0, 80)}`);
  }
  return temps;
}

/** After a kill: (sometimes) the next accept, then undo; the folder must be back to `before`. */
async function recover(where: string, nextAcceptFirst: boolean): Promise<void> {
  expectOldOrNew(where);
  if (nextAcceptFirst) {
    await acceptChanges({ root: ws, changes, env }).catch((error: unknown) => {
      if (!(error instanceof AcceptError && error.code === "INTERRUPTED")) throw error;
    });
    expect(expectOldOrNew(`${where}, after the next accept`), where).toEqual([]);
  }
  await undoLastAccept(ws, { env });
  expect(snapshot(ws), `${where}, after undo`).toEqual(before);
}

beforeAll(async () => {
  if (!existsSync(DIST)) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-crash-")));
  ws = join(base, "ws");
  mkdirSync(ws);
  env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[i < 10 ? `f${i}.txt` : `src/f${i}.txt`] = content(i);
  writeFiles(ws, files);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@u", ...args], { cwd: ws, stdio: "pipe" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "base");
  // the user's concurrent edits, which the accept merges (the agent changes line 2, the user line 25)
  for (let i = 0; i < 4; i++) writeFileSync(join(ws, `f${i}.txt`), replaceLine(content(i), 25, `user ${i}`));
  changes = [
    ...Array.from({ length: 10 }, (_, i) =>
      change(`f${i}.txt`, file(content(i)), file(replaceLine(content(i), 2, `agent ${i}`))),
    ),
    ...[10, 11, 12].map((i) => change(`src/f${i}.txt`, file(content(i)), ABSENT)),
    change("new/a.txt", ABSENT, file("a\n")),
    change("new/deep/b.txt", ABSENT, file("b\n")),
    change("top.txt", ABSENT, file("top\n", "100755")),
    change("ln", ABSENT, link("f13.txt")),
  ];
  specFile = join(base, "spec.json");
  writeFileSync(
    specFile,
    JSON.stringify({
      root: ws,
      changes: await Promise.all(
        changes.map(async (c) => ({
          path: c.path,
          base: await serialise(c.base as FileState),
          branch: await serialise(c.branch),
        })),
      ),
    }),
  );
  before = snapshot(ws);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe(`accept killed with SIGKILL (seed ${SEED})`, () => {
  let steps = 0;
  let fullRunMs = 0;

  it("runs whole: every change applied, and undo restores the folder", async () => {
    const start = Date.now();
    const run = await child({});
    fullRunMs = Date.now() - start;
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(run.stdout.split("\n")[0] ?? "{}").applied).toHaveLength(changes.length);
    after = snapshot(ws);
    expect(after["f0.txt"]).toContain("agent 0");
    expect(after["f0.txt"]).toContain("user 0");
    // how many steps the seam counts: the child counts the seam's kills instead of dying (see crash-child.mjs)
    await undoLastAccept(ws, { env });
    expect(snapshot(ws)).toEqual(before);
    const counted = await child({ UMBRA_ACCEPT_CRASH_AFTER: "1", UMBRA_CRASH_TEST_COUNT: "1" });
    steps = JSON.parse(counted.stdout.split("\n")[1] ?? "{}").steps;
    expect(steps).toBeGreaterThan(changes.length * 2);
    await undoLastAccept(ws, { env });
    expect(snapshot(ws)).toEqual(before);
  });

  it("50 kills at a random step: each file old or new, then undo restores everything", async () => {
    for (let i = 0; i < 50; i++) {
      const at = 1 + Math.floor(rand() * steps);
      const run = await child({ UMBRA_ACCEPT_CRASH_AFTER: String(at) });
      expect(run.signal, `kill at step ${at}: ${run.stderr}`).toBe("SIGKILL");
      await recover(`kill ${i} at step ${at} of ${steps}`, i % 2 === 1);
    }
  });

  it("10 kills after a random delay: the same", async () => {
    for (let i = 0; i < 10; i++) {
      const delay = Math.floor(rand() * fullRunMs);
      await child({}, delay);
      await recover(`kill ${i} after ${delay} ms`, i % 2 === 1);
    }
  });
});
