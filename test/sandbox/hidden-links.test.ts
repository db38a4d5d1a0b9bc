/**
 * Other names (hard links) of hidden files: a link already in the user's folder to a hidden file, to a
 * file of a hidden folder or to a credential file of the home folder is hidden in the sandbox like the
 * file itself, wherever it sits (node_modules included), through `umbra run` and `umbra run --shadow`;
 * a link made during a run does not reach a hidden file; the walk for other names is skipped when no
 * hidden file has one, and says so when it cannot look at every hidden file.
 */
import { existsSync, linkSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findHiddenLinks } from "../../src/sandbox/hidden-links.js";
import { requireBuiltCli, umbraAsync } from "../helpers/cli.js";
import { ensureHelper, makeFixture, type SandboxFixture, settled, userEnv } from "./helpers.js";

let f: SandboxFixture;
let env: NodeJS.ProcessEnv;
let home: string;

const SECRETS = ["top-secret-value", "top-secret-key", "SSH_SECRET_key", "DEEP_SECRET"];

function leaked(text: string): string | undefined {
  return SECRETS.find((secret) => text.includes(secret));
}

beforeAll(async () => {
  ensureHelper();
  f = await makeFixture();
  env = userEnv(f.base);
  home = env.HOME as string;
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "SSH_SECRET_key\n");
  mkdirSync(join(f.ws, "secrets", "deep"), { recursive: true });
  writeFileSync(join(f.ws, "secrets", "deep", "token"), "DEEP_SECRET\n");
  mkdirSync(join(f.ws, "node_modules", "pkg"), { recursive: true });
  writeFileSync(join(f.ws, "node_modules", "pkg", "index.js"), "visible\n");
  // the fixture hides secret.env and secrets/; the links were made by the user before any run
  linkSync(join(f.ws, "secret.env"), join(f.ws, "notes-link.txt"));
  linkSync(join(home, ".ssh", "id_rsa"), join(f.ws, "key-copy.txt"));
  linkSync(join(f.ws, "secrets", "key.txt"), join(f.ws, "node_modules", "pkg", "key.js"));
  linkSync(join(f.ws, "secrets", "deep", "token"), join(f.ws, "token.txt"));
  // a visible file with two visible names stays visible
  writeFileSync(join(f.ws, "shared.txt"), "shared\n");
  linkSync(join(f.ws, "shared.txt"), join(f.ws, "shared-too.txt"));
}, 60_000);

afterAll(async () => {
  await f?.done();
});

/** `umbra run --root WS [flags] -- sh -c SCRIPT`. */
function umbraRun(runEnv: NodeJS.ProcessEnv, script: string, flags: string[] = []) {
  return umbraAsync(runEnv, ["run", "--root", f.ws, ...flags, "--", "sh", "-c", script]);
}

const READ_ALL =
  "cat notes-link.txt key-copy.txt node_modules/pkg/key.js token.txt secret.env secrets/key.txt; " +
  "grep -r SECRET . 2>/dev/null; cat a.txt shared-too.txt node_modules/pkg/index.js; echo ran";

describe("umbra run", () => {
  it("hides the other names of a hidden file, of a file of a hidden folder and of a home credential", async () => {
    requireBuiltCli();
    for (const shadow of [[], ["--shadow"]]) {
      const r = await umbraRun(env, READ_ALL, shadow);
      expect(leaked(r.stdout + r.stderr), `${shadow.join(" ")}: ${r.stdout}${r.stderr}`).toBeUndefined();
      expect(r.stdout).toContain("ran\n");
      expect(r.stdout).toContain("hello\nshared\nvisible\n");
      expect(r.stderr).toMatch(/notes-link\.txt: Permission denied/);
      expect(r.stderr).toMatch(/key-copy\.txt: Permission denied/);
      expect(r.stderr).toMatch(/key\.js: Permission denied/);
      expect(r.stderr).toMatch(/token\.txt: Permission denied/);
    }
  }, 240_000);

  it("cannot link a hidden file during a run: the command sees a stand-in, on another filesystem", async () => {
    requireBuiltCli();
    const r = await umbraRun(
      env,
      "ln secret.env made-link.txt; ln secrets/key.txt made-key.txt; cat made-link.txt made-key.txt; echo ran",
    );
    expect(r.stdout).toBe("ran\n");
    expect(leaked(r.stdout + r.stderr)).toBeUndefined();
    expect(r.stderr).toMatch(/made-link\.txt.*(cross-device|Invalid cross-device|Permission denied)/i);
    expect(existsSync(join(f.ws, "made-link.txt"))).toBe(false);
    expect(existsSync(join(f.ws, "made-key.txt"))).toBe(false);
  }, 240_000);
});

describe("umbra run, the result kept", () => {
  it("hides a hard link made in a folder of a workspace whose walk was cached", async () => {
    requireBuiltCli();
    const own = { ...env, UMBRA_HOME: join(f.base, "kept-data") };
    mkdirSync(join(f.ws, "later"));
    writeFileSync(join(f.ws, "later", "plain.txt"), "plain\n");
    await settled(join(f.ws, "later"));
    const run = () => umbraRun(own, "cat later/*; cat notes-link.txt; echo ran");
    for (let i = 0; i < 2; i++) expect((await run()).stdout).toBe("plain\nran\n");
    linkSync(join(f.ws, "secret.env"), join(f.ws, "later", "late-link.txt"));
    await settled(join(f.ws, "later"));
    const r = await run();
    expect(leaked(r.stdout + r.stderr), r.stdout + r.stderr).toBeUndefined();
    expect(r.stdout).toBe("plain\nran\n");
    rmSync(join(f.ws, "later"), { recursive: true });
  }, 240_000);
});

describe("findHiddenLinks", () => {
  it("keeps its result while the walk finds the workspace unchanged, for the same hidden paths", () => {
    const walkFile = join(f.base, "walk.json");
    writeFileSync(walkFile, "walk 1");
    const cache = { file: join(f.base, "walk.links.json"), walkFile, unchanged: true };
    const hiddenPaths = [join(f.ws, "secret.env")];
    const first = findHiddenLinks({ workspace: f.ws, hiddenPaths, masks: [], cache });
    expect(first.searched).toBe(true);
    expect(first.paths).toContain(join(f.ws, "notes-link.txt"));
    const again = findHiddenLinks({ workspace: f.ws, hiddenPaths, masks: [], cache });
    expect(again).toEqual({ ...first, searched: false });
    // the walk listed a folder again, the walk's cache was written anew, or other paths are hidden
    const changed = findHiddenLinks({
      workspace: f.ws,
      hiddenPaths,
      masks: [],
      cache: { ...cache, unchanged: false },
    });
    expect(changed.searched).toBe(true);
    writeFileSync(walkFile, "walk 2, longer");
    expect(findHiddenLinks({ workspace: f.ws, hiddenPaths, masks: [], cache }).searched).toBe(true);
    expect(findHiddenLinks({ workspace: f.ws, hiddenPaths, masks: [], cache }).searched).toBe(false);
    const other = [join(home, ".ssh", "id_rsa")];
    const credential = findHiddenLinks({ workspace: f.ws, hiddenPaths: other, masks: [], cache });
    expect(credential.paths).toEqual([join(f.ws, "key-copy.txt")]);
  });

  it("finds the other names, and looks no further when no hidden file has one", () => {
    const hiddenPaths = [join(f.ws, "secret.env"), join(f.ws, "secrets"), join(home, ".ssh")];
    const found = findHiddenLinks({ workspace: f.ws, hiddenPaths, masks: [] });
    expect(found.paths).toEqual(
      ["key-copy.txt", "node_modules/pkg/key.js", "notes-link.txt", "token.txt"].map((rel) =>
        join(f.ws, rel),
      ),
    );
    expect(found.warnings).toEqual([]);
    const none = findHiddenLinks({ workspace: f.ws, hiddenPaths: [join(f.ws, "a.txt")], masks: [] });
    expect(none).toEqual({ paths: [], masks: [], warnings: [], searched: false });
  });

  it("finds other names among the kept entries of a masked folder, not its hidden ones", () => {
    const found = findHiddenLinks({
      workspace: f.ws,
      hiddenPaths: [],
      masks: [{ folder: f.ws, keep: ["a.txt", "node_modules", "token.txt"] }],
    });
    // secrets/ and secret.env are hidden entries of the masked root; token.txt is kept
    expect(found.paths).toEqual(["node_modules/pkg/key.js", "token.txt"].map((rel) => join(f.ws, rel)));
  });

  it("masks the folder of another name that is not UTF-8 (it cannot be named to the helper)", () => {
    const odd = join(f.base, "odd");
    mkdirSync(join(odd, "sub"), { recursive: true });
    writeFileSync(join(odd, "sub", "plain.txt"), "visible\n");
    linkSync(join(f.ws, "secret.env"), Buffer.from(`${join(odd, "sub")}/bad\xff.txt`, "latin1"));
    const found = findHiddenLinks({ workspace: odd, hiddenPaths: [join(f.ws, "secret.env")], masks: [] });
    expect(found.paths).toEqual([]);
    expect(found.masks).toEqual([{ folder: join(odd, "sub"), keep: ["plain.txt"] }]);
  });

  it("past the cap on hidden entries, warns of the files it cannot rule out", () => {
    const found = findHiddenLinks({
      workspace: f.ws,
      hiddenPaths: [join(f.ws, "secret.env"), join(f.ws, "secrets"), join(home, ".ssh")],
      masks: [],
      maxHidden: 2,
    });
    // secret.env was looked at: its other name is found; the rest are unknown
    expect(found.paths).toEqual([join(f.ws, "notes-link.txt")]);
    expect(found.warnings).toHaveLength(1);
    expect(found.warnings[0]).toMatch(/more than 2 hidden files .* 3 file\(s\) of the workspace/);
    expect(found.warnings[0]).not.toMatch(/shared/);
  });

  it("with the cap reached and no file of another name elsewhere, says nothing", () => {
    const found = findHiddenLinks({
      workspace: join(f.ws, "node_modules", "pkg"),
      hiddenPaths: [join(home, ".ssh", "id_rsa"), join(f.ws, "shared.txt")],
      masks: [],
      maxHidden: 1,
    });
    expect(found.warnings.length).toBe(1); // key.js's other name (secrets/key.txt) is outside pkg/
    const clean = findHiddenLinks({
      workspace: join(f.base, "outside"),
      hiddenPaths: [join(home, ".ssh", "id_rsa"), join(f.ws, "shared.txt")],
      masks: [],
      maxHidden: 1,
    });
    expect(clean.warnings).toEqual([]);
  });
});
