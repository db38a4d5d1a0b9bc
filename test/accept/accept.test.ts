/**
 * acceptChanges and undoLastAccept on a real folder: all or nothing, the accept rules, links planted
 * on the way, compare-and-swap against the user's edits made while accepting, and undo.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AcceptError, acceptChanges, undoLastAccept } from "../../src/accept/index.js";
import { loadConfig, type UmbraConfig } from "../../src/config/config.js";
import { workspaceDir } from "../../src/config/paths.js";
import type { RecordedChange } from "../../src/shadow/recorded.js";
import { ABSENT, change, file, link, numbered, replaceLine, snapshot, writeFiles } from "./helpers.js";

let base: string;
let ws: string;
let env: NodeJS.ProcessEnv;
let config: UmbraConfig;

const BASE = numbered(20);
const AGENT = replaceLine(BASE, 2, "two-by-agent");
const USER = replaceLine(BASE, 19, "nineteen-by-user");

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-accept-")));
  ws = join(base, "ws");
  mkdirSync(ws);
  env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };
  config = loadConfig({ workspaceRoot: ws, env });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function git(...args: string[]): void {
  execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@u", ...args], {
    cwd: ws,
    env,
    stdio: "pipe",
  });
}

function commitAll(): void {
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "base");
}

function accept(
  changes: readonly RecordedChange[],
  extra: Partial<Parameters<typeof acceptChanges>[0]> = {},
) {
  return acceptChanges({ root: ws, changes, config, env, ...extra });
}

describe("acceptChanges", () => {
  it("merges the user's concurrent edit, and undo puts the user's file back", async () => {
    writeFiles(ws, { "f.txt": USER });
    const report = await accept([change("f.txt", file(BASE), file(AGENT))]);
    expect(report).toMatchObject({ written: true, applied: ["f.txt"], conflicts: [], refused: [] });
    expect(readFileSync(join(ws, "f.txt"), "utf8")).toBe(replaceLine(AGENT, 19, "nineteen-by-user"));
    const undo = await undoLastAccept(ws, { env });
    expect(undo).toMatchObject({ found: true, restored: ["f.txt"], left: [] });
    expect(readFileSync(join(ws, "f.txt"), "utf8")).toBe(USER);
    expect((await undoLastAccept(ws, { env })).message).toBe("nothing to undo");
  });

  it("writes nothing at all when one file conflicts, and lists every conflict", async () => {
    writeFiles(ws, { "a.txt": USER, "b.txt": replaceLine(BASE, 2, "two-by-user"), "c.txt": BASE });
    const before = snapshot(ws);
    const report = await accept([
      change("a.txt", file(BASE), file(AGENT)),
      change("b.txt", file(BASE), file(AGENT)),
      change("c.txt", file(BASE), ABSENT),
      change("new/d.txt", ABSENT, file("new\n")),
    ]);
    expect(report.written).toBe(false);
    expect(report.applied).toEqual([]);
    expect(report.conflicts).toEqual([
      {
        path: "b.txt",
        why: expect.stringContaining("conflicting hunk"),
        hunks: [expect.objectContaining({ line: 2 })],
        yoursSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        markers: expect.stringContaining("<<<<<<< yours"),
      },
    ]);
    expect(report.message).toContain("nothing was written");
    expect(snapshot(ws)).toEqual(before);
    expect((await undoLastAccept(ws, { env })).found).toBe(false);
  });

  it("with allOrNothing false writes the clean files and leaves the conflicting one", async () => {
    writeFiles(ws, { "a.txt": USER, "b.txt": replaceLine(BASE, 2, "two-by-user") });
    const report = await accept(
      [
        change("a.txt", file(BASE), file(AGENT)),
        change("b.txt", file(BASE), file(AGENT)),
        change("n/x", ABSENT, file("x")),
      ],
      { allOrNothing: false },
    );
    expect(report.refused).toEqual([]);
    expect(report).toMatchObject({ written: true, applied: ["a.txt", "n/x"] });
    expect(report.conflicts.map((c) => c.path)).toEqual(["b.txt"]);
    expect(readFileSync(join(ws, "b.txt"), "utf8")).toBe(replaceLine(BASE, 2, "two-by-user"));
    await undoLastAccept(ws, { env });
    expect(snapshot(ws)).toEqual({
      "a.txt": `file 644 ${USER}`,
      "b.txt": `file 644 ${replaceLine(BASE, 2, "two-by-user")}`,
    });
  });

  it("settles a conflict as the user chose, per file", async () => {
    writeFiles(ws, { "b.txt": replaceLine(BASE, 2, "two-by-user") });
    const report = await accept([change("b.txt", file(BASE), file(AGENT))], {
      resolve: new Map([["b.txt", "theirs"]]),
    });
    expect(report.applied).toEqual(["b.txt"]);
    expect(readFileSync(join(ws, "b.txt"), "utf8")).toBe(AGENT);
  });

  it("never makes an existing file executable nor a link, also when the base is unknown", async () => {
    writeFiles(ws, { "a.sh": BASE, "b.txt": BASE });
    const unknown = { kind: "unknown" as const, why: "you changed it while a command copied it" };
    const report = await accept(
      [change("a.sh", unknown, file(AGENT, "100755")), change("b.txt", unknown, link("a.sh"))],
      {
        resolve: new Map([
          ["a.sh", "theirs"],
          ["b.txt", "theirs"],
        ]),
      },
    );
    expect(report.refused).toEqual([
      { path: "a.sh", why: "would make an existing file executable" },
      { path: "b.txt", why: "would turn your file into a symbolic link or back" },
    ]);
    expect(report.written).toBe(false);
  });

  it("refuses protected paths with reasons and writes the rest", async () => {
    writeFiles(ws, { "ok.txt": BASE, ".git/config": "[core]\n" });
    const report = await accept([
      change(".git/config", file("[core]\n"), file("[core]\n\tfsmonitor = evil\n")),
      change(".vscode/settings.json", ABSENT, file("{}")),
      change("ok.txt", file(BASE), file(AGENT)),
    ]);
    expect(report.applied).toEqual(["ok.txt"]);
    expect(report.refused).toEqual([
      { path: ".git/config", why: expect.stringContaining("git metadata") },
      { path: ".vscode/settings.json", why: expect.stringContaining("editor settings") },
    ]);
    expect(readFileSync(join(ws, ".git/config"), "utf8")).toBe("[core]\n");
  });

  it("never writes through a link of the user's on the way, planted before or during the accept", async () => {
    const outside = join(base, "outside");
    mkdirSync(outside);
    symlinkSync(outside, join(ws, "sub"));
    mkdirSync(join(ws, "dir"));
    writeFiles(ws, { "dir/f.txt": BASE, "g.txt": BASE });
    const before = snapshot(ws);
    const planted = await accept([change("sub/x.txt", ABSENT, file("x"))]);
    expect(planted.refused).toEqual([{ path: "sub/x.txt", why: expect.stringContaining("symbolic link") }]);
    // the folder turns into a link between the merge and the write: nothing is written, g.txt is put back
    const racing = accept(
      [change("g.txt", file(BASE), file(AGENT)), change("dir/f.txt", file(BASE), file(AGENT))],
      {
        testHooks: {
          beforeReplace: (path) => {
            if (path !== "dir/f.txt") return;
            rmSync(join(ws, "dir"), { recursive: true });
            writeFileSync(join(outside, "f.txt"), BASE);
            symlinkSync(outside, join(ws, "dir"));
          },
        },
      },
    );
    await expect(racing).rejects.toMatchObject({ code: "CHANGED" });
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe(BASE);
    expect(readFileSync(join(ws, "g.txt"), "utf8")).toBe(BASE);
    expect(snapshot(ws)).toEqual({ ...before, dir: `link ${outside}`, "dir/f.txt": undefined });
  });

  it("stops and puts everything back when the user changes a file between the merge and its write", async () => {
    writeFiles(ws, { "a.txt": BASE, "b.txt": BASE });
    const racing = accept(
      [change("a.txt", file(BASE), file(AGENT)), change("b.txt", file(BASE), file(AGENT))],
      {
        testHooks: {
          beforeReplace: (path) => {
            if (path === "b.txt") writeFileSync(join(ws, "b.txt"), USER);
          },
        },
      },
    );
    await expect(racing).rejects.toThrow(
      new AcceptError("CHANGED", "b.txt changed while accepting; nothing was changed, run it again"),
    );
    expect(snapshot(ws)).toEqual({ "a.txt": `file 644 ${BASE}`, "b.txt": `file 644 ${USER}` });
    expect((await undoLastAccept(ws, { env })).found).toBe(false);
  });

  it("undo leaves a file the user changed after the accept, and restores the others", async () => {
    writeFiles(ws, { "a.txt": BASE, "b.txt": BASE, "gone.txt": "old\n" });
    commitAll();
    chmodExec(join(ws, "b.txt"));
    const report = await accept([
      change("a.txt", file(BASE), file(AGENT)),
      change("b.txt", file(BASE, "100755"), file(AGENT, "100755")),
      change("gone.txt", file("old\n"), ABSENT),
      change("l", ABSENT, link("a.txt")),
      change("deep/er/new.txt", ABSENT, file("new\n")),
    ]);
    expect(report.applied).toEqual(["a.txt", "b.txt", "gone.txt", "l", "deep/er/new.txt"]);
    expect(snapshot(ws)["b.txt"]).toBe(`file 755 ${AGENT}`);
    writeFileSync(join(ws, "a.txt"), "mine now\n");
    const undo = await undoLastAccept(ws, { env });
    expect(undo.left).toEqual([{ path: "a.txt", why: expect.stringContaining("you changed it") }]);
    expect(snapshot(ws)).toEqual({
      "a.txt": "file 644 mine now\n",
      "b.txt": `file 755 ${BASE}`,
      "gone.txt": "file 644 old\n",
    });
    // again: the same file is still left, nothing else changes
    expect(await undoLastAccept(ws, { env })).toMatchObject({ found: true, left: [{ path: "a.txt" }] });
  });

  it("one accept or undo at a time; the lock of a process that is gone is taken over", async () => {
    writeFiles(ws, { "a.txt": BASE });
    const lock = join(workspaceDir(ws, env), "accept", "lock");
    mkdirSync(join(lock, ".."), { recursive: true });
    writeFileSync(lock, String(process.ppid));
    await expect(accept([change("a.txt", file(BASE), file(AGENT))])).rejects.toMatchObject({ code: "BUSY" });
    await expect(undoLastAccept(ws, { env })).rejects.toMatchObject({ code: "BUSY" });
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe(BASE);
    writeFileSync(lock, "999999999");
    expect((await accept([change("a.txt", file(BASE), file(AGENT))])).applied).toEqual(["a.txt"]);
    expect(existsSync(lock)).toBe(false);
  });

  it("a dry run plans without writing, and hunks need exactly one file", async () => {
    writeFiles(ws, { "a.txt": USER });
    const before = snapshot(ws);
    const report = await accept([change("a.txt", file(BASE), file(AGENT))], { dryRun: true });
    expect(report.written).toBe(false);
    expect(report.planned.map((p) => p.path)).toEqual(["a.txt"]);
    expect(snapshot(ws)).toEqual(before);
    await expect(
      accept([change("a.txt", file(BASE), file(AGENT))], { select: { hunks: [1] } }),
    ).rejects.toMatchObject({
      code: "USAGE",
    });
  });
});

function chmodExec(path: string): void {
  execFileSync("chmod", ["755", path]);
}
