/** `umbra undo` (the built CLI): restores the last accept, exit 1 when it leaves files you changed since. */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { acceptChanges } from "../../src/accept/index.js";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { change, file, writeFiles } from "./helpers.js";

let base: string;
let ws: string;
let env: NodeJS.ProcessEnv;

beforeAll(requireBuiltCli);
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-undo-")));
  ws = join(base, "ws");
  mkdirSync(ws);
  env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

it("restores the last accept, then has nothing to undo", async () => {
  writeFiles(ws, { "a.txt": "old\n" });
  await acceptChanges({ root: ws, changes: [change("a.txt", file("old\n"), file("new\n"))], env });
  expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("new\n");
  const undo = umbraSync(env, ["undo", "--root", ws]);
  expect(undo, undo.stderr).toMatchObject({
    code: 0,
    stdout: "restored a.txt\nundid the last accept: 1 file(s) restored\n",
  });
  expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("old\n");
  const again = umbraSync(env, ["undo", "--root", ws, "--json"]);
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout)).toEqual({
    found: false,
    restored: [],
    left: [],
    message: "nothing to undo",
  });
});

it("leaves a file you changed after the accept, with exit status 1", async () => {
  writeFiles(ws, { "a.txt": "old\n" });
  await acceptChanges({ root: ws, changes: [change("a.txt", file("old\n"), file("new\n"))], env });
  writeFileSync(join(ws, "a.txt"), "mine\n");
  const undo = umbraSync(env, ["undo", "--root", ws]);
  expect(undo.code).toBe(1);
  expect(undo.stdout).toContain("left a.txt: you changed it after the accept");
  expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("mine\n");
  expect(umbraSync(env, ["undo", "--root", join(ws, "missing")]).code).toBe(2);
});
