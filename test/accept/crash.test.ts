/**
 * The crash test of issue 13: an accept of ~20 files (changed, merged with the user's concurrent edits,
 * added in new folders, deleted, a link) is killed with SIGKILL, 50 times at a random step (the
 * UMBRA_ACCEPT_CRASH_AFTER seam: the child kills itself right after its N-th write, fsync, rename or
 * unlink, so it does not depend on timing) and 10 times after a random delay. After each kill every
 * path holds exactly its old or its new content (never torn; leftover temporary files only under their
 * own `.umbra-accept-*` names); the next accept or undo removes those, and undo brings the folder back to
 * exactly what it was before. The child runs the built dist/ (npm run build). The kills run in two
 * lanes at once, each with its own identical folder and data directory.
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
const LANES = 2;

const SEED = Number(process.env.UMBRA_CRASH_SEED ?? Date.now() % 1_000_000);
const rand = prng(SEED);

let base: string;
/** The folder's state before the accept and after it (the same in every lane). */
let before: Record<string, string>;
let after: Record<string, string>;

function content(i: number): string {
  return numbered(30).replace(/^/gm, `f${i} `);
}

const CHANGES: RecordedChange[] = [
  ...Array.from({ length: 10 }, (_, i) =>
    change(`f${i}.txt`, file(content(i)), file(replaceLine(content(i), 2, `agent ${i}`))),
  ),
  ...[10, 11, 12].map((i) => change(`src/f${i}.txt`, file(content(i)), ABSENT)),
  change("new/a.txt", ABSENT, file("a\n")),
  change("new/deep/b.txt", ABSENT, file("b\n")),
  change("top.txt", ABSENT, file("top\n", "100755")),
  change("ln", ABSENT, link("f13.txt")),
];

async function serialise(state: FileState) {
  if (state.kind !== "file") return state;
  return { kind: "file", mode: state.mode, data: (await state.load()).toString("base64") };
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
}

/** One folder (a git repository of 20 files with the user's concurrent edits) and its data directory. */
class Lane {
  readonly ws: string;
  readonly env: NodeJS.ProcessEnv;
  private readonly spec: string;

  constructor(dir: string) {
    this.ws = join(dir, "ws");
    this.env = { ...process.env, UMBRA_HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config") };
    this.spec = join(dir, "spec.json");
  }

  async create(): Promise<void> {
    mkdirSync(this.ws, { recursive: true });
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[i < 10 ? `f${i}.txt` : `src/f${i}.txt`] = content(i);
    writeFiles(this.ws, files);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@u", ...args], {
        cwd: this.ws,
        stdio: "pipe",
      });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "base");
    // the user's concurrent edits, which the accept merges (the agent changes line 2, the user line 25)
    for (let i = 0; i < 4; i++)
      writeFileSync(join(this.ws, `f${i}.txt`), replaceLine(content(i), 25, `user ${i}`));
    const changes = await Promise.all(
      CHANGES.map(async (c) => ({
        path: c.path,
        base: await serialise(c.base as FileState),
        branch: await serialise(c.branch),
      })),
    );
    writeFileSync(this.spec, JSON.stringify({ root: this.ws, changes }));
  }

  /** Runs the child; `killAfterMs` kills it from here after that long (else it runs to its own end). */
  child(extraEnv: NodeJS.ProcessEnv, killAfterMs?: number): Promise<Outcome> {
    return new Promise((done) => {
      const proc = spawn(process.execPath, [CHILD, this.spec], { env: { ...this.env, ...extraEnv } });
      let stdout = "";
      proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
      });
      proc.stderr.resume();
      const timer =
        killAfterMs === undefined ? undefined : setTimeout(() => proc.kill("SIGKILL"), killAfterMs);
      proc.on("close", (code, signal) => {
        clearTimeout(timer);
        done({ code, signal, stdout });
      });
    });
  }

  /** Every path holds its old or its new state; returns what else there is (leftover temporary files). */
  oldOrNew(where: string): string[] {
    const now = snapshot(this.ws);
    const temps: string[] = [];
    for (const path of new Set([...Object.keys(before), ...Object.keys(after), ...Object.keys(now)])) {
      if (TEMP.test(path)) temps.push(path);
      else if (now[path] !== before[path] && now[path] !== after[path])
        throw new Error(
          `${where}: ${path} is neither old nor new: ${JSON.stringify(now[path])?.slice(0, 80)}`,
        );
    }
    return temps;
  }

  /** After a kill: (sometimes) the next accept, then undo; the folder must be back to `before`. */
  async recover(where: string, nextAcceptFirst: boolean): Promise<void> {
    this.oldOrNew(where);
    if (nextAcceptFirst) {
      await acceptChanges({ root: this.ws, changes: CHANGES, env: this.env }).catch((error: unknown) => {
        if (!(error instanceof AcceptError && error.code === "INTERRUPTED")) throw error;
      });
      expect(this.oldOrNew(`${where}, after the next accept`), where).toEqual([]);
    }
    await undoLastAccept(this.ws, { env: this.env });
    expect(snapshot(this.ws), `${where}, after undo`).toEqual(before);
  }
}

let lanes: Lane[];

beforeAll(async () => {
  if (!existsSync(DIST)) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-crash-")));
  lanes = Array.from({ length: LANES }, (_, i) => new Lane(join(base, `lane${i}`)));
  for (const lane of lanes) await lane.create();
  before = snapshot((lanes[0] as Lane).ws);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Runs `count` iterations spread over the lanes, the lanes at the same time. */
async function inLanes(count: number, iteration: (lane: Lane, i: number) => Promise<void>): Promise<void> {
  await Promise.all(
    lanes.map(async (lane, k) => {
      for (let i = k; i < count; i += LANES) await iteration(lane, i);
    }),
  );
}

describe(`accept killed with SIGKILL (seed ${SEED})`, () => {
  let steps = 0;
  let fullRunMs = 0;

  it("runs whole: every change applied, and undo restores the folder", async () => {
    const lane = lanes[0] as Lane;
    const start = Date.now();
    const run = await lane.child({});
    fullRunMs = Date.now() - start;
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.split("\n")[0] ?? "{}").applied).toHaveLength(CHANGES.length);
    after = snapshot(lane.ws);
    expect(after["f0.txt"]).toContain("agent 0");
    expect(after["f0.txt"]).toContain("user 0");
    await undoLastAccept(lane.ws, { env: lane.env });
    expect(snapshot(lane.ws)).toEqual(before);
    // how many steps the seam counts: the child counts the seam's kills instead of dying (see crash-child.mjs)
    const counted = await lane.child({ UMBRA_ACCEPT_CRASH_AFTER: "1", UMBRA_CRASH_TEST_COUNT: "1" });
    steps = JSON.parse(counted.stdout.split("\n")[1] ?? "{}").steps;
    expect(steps).toBeGreaterThan(CHANGES.length * 2);
    await undoLastAccept(lane.ws, { env: lane.env });
    expect(snapshot(lane.ws)).toEqual(before);
  });

  it("50 kills at a random step: each file old or new, then undo restores everything", async () => {
    const at = Array.from({ length: 50 }, () => 1 + Math.floor(rand() * steps));
    await inLanes(50, async (lane, i) => {
      const run = await lane.child({ UMBRA_ACCEPT_CRASH_AFTER: String(at[i]) });
      expect(run.signal, `kill at step ${at[i]}`).toBe("SIGKILL");
      await lane.recover(`kill ${i} at step ${at[i]} of ${steps}`, i % 4 >= 2);
    });
  });

  it("10 kills after a random delay: the same", async () => {
    const delays = Array.from({ length: 10 }, () => Math.floor(rand() * fullRunMs));
    await inLanes(10, async (lane, i) => {
      await lane.child({}, delays[i]);
      await lane.recover(`kill ${i} after ${delays[i]} ms`, i % 4 >= 2);
    });
  });
});
