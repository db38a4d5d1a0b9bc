/**
 * Settling conflicts in acceptChanges: each choice writes exactly the bytes it stands for, undo puts the
 * user's bytes back, an edited text is written only while the user's file is the version they saw, and
 * a resolution for a path that does not conflict (or is not accepted) is refused with nothing written.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acceptChanges, type Settlement, undoLastAccept } from "../../src/accept/index.js";
import type { Resolution } from "../../src/accept/merge.js";
import { loadConfig, type UmbraConfig } from "../../src/config/config.js";
import type { RecordedChange } from "../../src/shadow/recorded.js";
import { change, file, numbered, replaceLine, snapshot, writeFiles } from "./helpers.js";

let base: string;
let ws: string;
let env: NodeJS.ProcessEnv;
let config: UmbraConfig;

const BASE = numbered(20);
/** The agent changes lines 2 and 10; the user changes line 2 (the conflict) and line 19 (merges cleanly). */
const AGENT = replaceLine(replaceLine(BASE, 2, "two-by-agent"), 10, "ten-by-agent");
const USER = replaceLine(replaceLine(BASE, 2, "two-by-user"), 19, "nineteen-by-user");
const CHANGES: RecordedChange[] = [change("f.txt", file(BASE), file(AGENT))];
const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");
const folder = () => readFileSync(join(ws, "f.txt"), "utf8");

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-settle-")));
  ws = join(base, "ws");
  mkdirSync(ws);
  env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };
  config = loadConfig({ workspaceRoot: ws, env });
  writeFiles(ws, { "f.txt": USER });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function accept(
  resolve: Record<string, Resolution | Settlement> | undefined,
  extra: Partial<Parameters<typeof acceptChanges>[0]> = {},
  changes: readonly RecordedChange[] = CHANGES,
) {
  return acceptChanges({
    root: ws,
    changes,
    config,
    env,
    ...(resolve ? { resolve: new Map(Object.entries(resolve)) } : {}),
    ...extra,
  });
}

describe("settling a conflict", () => {
  it("reports the conflict with the user's version and the merge with markers, writing nothing", async () => {
    const report = await accept(undefined);
    expect(report.written).toBe(false);
    expect(report.conflicts).toHaveLength(1);
    const [conflict] = report.conflicts;
    expect(conflict?.yoursSha256).toBe(sha256(USER));
    expect(conflict?.markers).toContain(
      "<<<<<<< yours\ntwo-by-user\n||||||| base\n2\n=======\ntwo-by-agent\n",
    );
    // the agent's clean hunk and the user's are in the text to edit as well
    expect(conflict?.markers).toContain("ten-by-agent\n");
    expect(conflict?.markers).toContain("nineteen-by-user\n");
    expect(folder()).toBe(USER);
  });

  const expected: Record<Resolution, () => string> = {
    ours: () => replaceLine(USER, 10, "ten-by-agent"),
    theirs: () => replaceLine(AGENT, 19, "nineteen-by-user"),
    markers: () => "",
  };
  for (const choice of ["ours", "theirs", "markers"] as const)
    it(`${choice}: the folder holds exactly its merge; undo puts the user's bytes back`, async () => {
      const markers = (await accept(undefined)).conflicts[0]?.markers;
      const report = await accept({ "f.txt": { choice, yoursSha256: sha256(USER) } });
      expect(report).toMatchObject({ written: true, applied: ["f.txt"], conflicts: [] });
      expect(folder()).toBe(choice === "markers" ? markers : expected[choice]());
      expect(await undoLastAccept(ws, { env })).toMatchObject({ found: true, restored: ["f.txt"] });
      expect(folder()).toBe(USER);
    });

  it("edited: writes the user's text exactly, and undo puts the user's bytes back", async () => {
    const mine = "the user's own merge\nwith ünïcode\n";
    const report = await accept({
      "f.txt": { choice: "edited", content: Buffer.from(mine), yoursSha256: sha256(USER) },
    });
    expect(report.applied).toEqual(["f.txt"]);
    expect(folder()).toBe(mine);
    await undoLastAccept(ws, { env });
    expect(folder()).toBe(USER);
  });

  it("edited: refused, nothing written, when the user's file changed since they saw the conflict", async () => {
    const seen = (await accept(undefined)).conflicts[0]?.yoursSha256 ?? "";
    const later = replaceLine(USER, 5, "five-typed-meanwhile");
    writeFiles(ws, { "f.txt": later });
    const before = snapshot(ws);
    for (const choice of ["edited", "theirs"] as const)
      await expect(
        accept({
          "f.txt": {
            choice,
            yoursSha256: seen,
            ...(choice === "edited" ? { content: Buffer.from("x\n") } : {}),
          },
        }),
      ).rejects.toMatchObject({ code: "CHANGED", message: expect.stringContaining("changed since you saw") });
    // without the version the edited text is refused too
    await expect(
      accept({ "f.txt": { choice: "edited", content: Buffer.from("x\n") } }),
    ).rejects.toMatchObject({
      code: "USAGE",
    });
    expect(snapshot(ws)).toEqual(before);
    expect((await undoLastAccept(ws, { env })).found).toBe(false);
  });

  it("refuses a resolution of a path that does not conflict, is unknown, or is not accepted: nothing written", async () => {
    writeFiles(ws, { "clean.txt": BASE });
    const changes = [...CHANGES, change("clean.txt", file(BASE), file(AGENT))];
    const before = snapshot(ws);
    const cases: [Record<string, Resolution>, Partial<Parameters<typeof acceptChanges>[0]>, RegExp][] = [
      [{ "f.txt": "theirs", "clean.txt": "theirs" }, {}, /clean\.txt is not in conflict/],
      [{ "f.txt": "theirs", "nope.txt": "ours" }, {}, /nope\.txt, which is not among the files accepted/],
      [{ "../ws/f.txt": "ours" }, {}, /not among the files accepted/],
      [{ "f.txt": "theirs" }, { select: { files: ["clean.txt"] } }, /f\.txt, which is not among/],
      [{ "clean.txt": "ours" }, { allOrNothing: false }, /clean\.txt is not in conflict/],
    ];
    for (const [resolve, extra, message] of cases)
      await expect(accept(resolve, extra, changes), JSON.stringify(resolve)).rejects.toMatchObject({
        code: "USAGE",
        message: expect.stringMatching(message),
      });
    expect(snapshot(ws)).toEqual(before);
  });

  it("a binary conflict offers no text to edit, and an edited text for it is refused", async () => {
    writeFiles(ws, { "logo.bin": "\u0000user" });
    const changes = [change("logo.bin", file("\u0000base"), file("\u0000agent"))];
    const [conflict] = (await accept(undefined, {}, changes)).conflicts;
    expect(conflict).toMatchObject({ path: "logo.bin", hunks: [], yoursSha256: sha256("\u0000user") });
    expect(conflict?.markers).toBeUndefined();
    await expect(
      accept(
        { "logo.bin": { choice: "edited", content: Buffer.from("text"), yoursSha256: sha256("\u0000user") } },
        {},
        changes,
      ),
    ).rejects.toMatchObject({ code: "USAGE", message: expect.stringContaining("only a text conflict") });
    expect((await accept({ "logo.bin": "theirs" }, {}, changes)).applied).toEqual(["logo.bin"]);
    expect(readFileSync(join(ws, "logo.bin"), "utf8")).toBe("\u0000agent");
  });
});
