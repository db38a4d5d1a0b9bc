/**
 * The no-byte-lost matrix for `umbra shadow apply` (and rebase, undo), run as the user runs them: the
 * built CLI. The agent is a command in a kept shadow branch (`umbra run --shadow --keep`), the user
 * edits their folder (a git repository) meanwhile; every case checks the user's bytes after the accept.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AcceptReport } from "../../src/accept/index.js";
import { fork, openBranch, run } from "../../src/shadow/index.js";
import { type CliOutcome, keptBranch, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { waitUntil } from "../helpers/wait.js";
import { replaceLine } from "./helpers.js";
import {
  AGENT,
  AGENT_SED,
  BASE,
  BOTH,
  type Folder,
  SAVE_STYLES,
  save,
  USER,
  USER_SAME_LINE,
  userConfig,
  userFolder,
} from "./matrix.js";

let f: Folder;

beforeAll(requireBuiltCli);
beforeEach(() => {
  f = userFolder();
});
afterEach(() => rmSync(f.base, { recursive: true, force: true }));

const umbra = (...args: string[]): CliOutcome => umbraSync(f.env, args);

/** `umbra run --shadow --keep -- sh -c SCRIPT`: the agent's work in a kept branch; its id. */
function agent(script: string): string {
  const made = keptBranch(f.env, f.ws, script);
  expect(made.code, made.stderr).toBe(0);
  expect(made.id).toBeDefined();
  return made.id as string;
}

interface Applied extends CliOutcome {
  report: AcceptReport;
}

/** `umbra shadow apply ID --json FLAGS...` */
function apply(id: string, ...flags: string[]): Applied {
  const out = umbra("shadow", "apply", id, "--root", f.ws, "--json", ...flags);
  expect(out.stdout, out.stderr).not.toBe("");
  return { ...out, report: JSON.parse(out.stdout) as AcceptReport };
}

const branchIds = () =>
  (JSON.parse(umbra("shadow", "list", "--root", f.ws, "--json").stdout) as { id: string }[]).map((b) => b.id);

/** Every file of the folder but .git, path → content. */
function files(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(f.ws, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (path === ".git") continue;
      if (statSync(join(f.ws, path)).isDirectory()) walk(path);
      else out[path] = f.read(path);
    }
  };
  walk("");
  return out;
}

describe("umbra shadow apply: the user edits while the agent works", () => {
  it("the issue's scenario: the agent changes line 2, the user line 19 (sed -i), the accept keeps both", () => {
    const id = agent(AGENT_SED);
    execFileSync("sed", ["-i", "s/^19$/nineteen-by-user/", join(f.ws, "f.txt")]);
    // the agent's diff is what it did: line 2, not a revert of the user's line 19
    const diff = umbra("shadow", "diff", id, "--root", f.ws).stdout;
    expect(diff).toContain("-2\n+two-by-agent\n");
    expect(diff).not.toContain("nineteen");
    const out = umbra("shadow", "apply", id, "--root", f.ws);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("applied 1 file(s)");
    expect(f.read("f.txt")).toBe(BOTH);
    // applied in full: the branch is gone
    expect(branchIds()).toEqual([]);
  });

  it.each(SAVE_STYLES)("the user saves other lines (%s): merged, both kept", (style) => {
    const id = agent(`${AGENT_SED}; printf 'new\\n' > added.txt`);
    save(f, "f.txt", USER, style);
    const { code, report } = apply(id);
    expect(code).toBe(0);
    expect(report).toMatchObject({ written: true, applied: ["added.txt", "f.txt"], conflicts: [] });
    expect(files()).toEqual({ "added.txt": "new\n", "f.txt": BOTH });
  });

  it.each(SAVE_STYLES)("the user saves the same line (%s): conflict, exit 1, nothing written", (style) => {
    const id = agent(`${AGENT_SED}; printf 'new\\n' > added.txt`);
    save(f, "f.txt", USER_SAME_LINE, style);
    const out = umbra("shadow", "apply", id, "--root", f.ws);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/conflict: f\.txt: .*conflicting hunk.* \(line 2\)/);
    expect(out.stderr).toContain("nothing was written");
    // all or nothing: the clean file is not written either; the branch stays to be settled
    expect(files()).toEqual({ "f.txt": USER_SAME_LINE });
    expect(branchIds()).toEqual([id]);
  });

  it("a file without a final newline and with CRLF lines keeps the user's bytes exactly", () => {
    const crlf = (text: string) => text.replace(/\n/g, "\r\n").replace(/\r\n$/, "");
    writeFileSync(join(f.ws, "w.txt"), crlf(BASE));
    f.git("add", "-A");
    f.git("commit", "-qm", "crlf");
    const id = agent("sed -i 's/^2\\r$/two-by-agent\\r/' w.txt");
    save(f, "w.txt", crlf(BASE).replace(/20$/, "twenty-by-user"), "atomic rename");
    expect(apply(id).code).toBe(0);
    expect(f.read("w.txt")).toBe(crlf(AGENT).replace(/20$/, "twenty-by-user"));
  });

  it("the user's permission bits stay (an executable script the agent edits)", () => {
    execFileSync("chmod", ["750", join(f.ws, "f.txt")]);
    const id = agent(AGENT_SED);
    save(f, "f.txt", USER, "in place");
    expect(apply(id).code).toBe(0);
    expect(f.read("f.txt")).toBe(BOTH);
    expect(statSync(join(f.ws, "f.txt")).mode & 0o777).toBe(0o750);
  });

  it("the user deletes the file the agent changed: conflict, the file is not brought back", () => {
    const id = agent(AGENT_SED);
    rmSync(join(f.ws, "f.txt"));
    const out = apply(id);
    expect(out.code).toBe(1);
    expect(out.report.conflicts).toEqual([
      {
        path: "f.txt",
        why: "you deleted or renamed it and the agent changed it",
        hunks: [],
        yoursSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(files()).toEqual({});
  });

  it("the user renames the file the agent changed: conflict; --theirs f.txt writes the agent's beside it", () => {
    const id = agent(AGENT_SED);
    renameSync(join(f.ws, "f.txt"), join(f.ws, "g.txt"));
    save(f, "g.txt", USER, "in place");
    expect(apply(id).code).toBe(1);
    expect(files()).toEqual({ "g.txt": USER });
    const chosen = apply(id, "--theirs", "f.txt");
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(files()).toEqual({ "f.txt": AGENT, "g.txt": USER });
  });

  it("the agent deletes a file the user edited meanwhile: conflict, the user's file stays", () => {
    const id = agent("rm f.txt");
    save(f, "f.txt", USER, "atomic rename");
    expect(apply(id).report.conflicts.map((c) => c.why)).toEqual(["the agent deleted it and you changed it"]);
    expect(files()).toEqual({ "f.txt": USER });
  });

  it("the agent renames a file the user did not touch: the rename is accepted, undo puts it back", () => {
    const id = agent("mv f.txt g.txt");
    const out = apply(id);
    expect(out.code, out.stderr).toBe(0);
    expect(out.report.refused).toEqual([]);
    expect(files()).toEqual({ "g.txt": BASE });
    expect(umbra("undo", "--root", f.ws).code).toBe(0);
    expect(files()).toEqual({ "f.txt": BASE });
  });

  it("the agent renames the file the user edited meanwhile: nothing written, the user's file stays", () => {
    const id = agent("mv f.txt g.txt");
    save(f, "f.txt", USER, "in place");
    const out = apply(id);
    expect(out.code).toBe(1);
    expect(out.report.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    // all or nothing: g.txt (the rename's other half) is not written without its deletion
    expect(files()).toEqual({ "f.txt": USER });
  });

  it("the user replaces the file by a symbolic link: conflict, the link stays and its target is untouched", () => {
    writeFileSync(join(f.ws, "real.txt"), USER);
    const id = agent(AGENT_SED);
    rmSync(join(f.ws, "f.txt"));
    symlinkSync("real.txt", join(f.ws, "f.txt"));
    const out = apply(id);
    expect(out.code).toBe(1);
    expect(out.report.conflicts.map((c) => c.why)).toEqual([
      "a symbolic link both you and the agent changed",
    ]);
    expect(readlinkSync(join(f.ws, "f.txt"))).toBe("real.txt");
    expect(f.read("real.txt")).toBe(USER);
  });

  it("the user creates the path the agent created: the same content is fine, a different one conflicts", () => {
    const same = agent("printf 'same\\n' > new.txt");
    const other = agent("printf 'the agent\\n' > other.txt");
    writeFileSync(join(f.ws, "new.txt"), "same\n");
    writeFileSync(join(f.ws, "other.txt"), "the user\n");
    const fine = apply(same);
    expect(fine.code).toBe(0);
    expect(fine.report).toMatchObject({ written: false, unchanged: ["new.txt"], conflicts: [] });
    const clash = apply(other);
    expect(clash.code).toBe(1);
    expect(clash.report.conflicts[0]?.why).toMatch(/you and the agent both created it/);
    expect(files()).toEqual({ "f.txt": BASE, "new.txt": "same\n", "other.txt": "the user\n" });
  });

  it("the user already made the agent's change, or made and undid an edit: nothing to lose either way", () => {
    const id = agent(AGENT_SED);
    save(f, "f.txt", AGENT, "in place");
    const already = apply(id, "--keep");
    expect(already.code).toBe(0);
    expect(already.report.unchanged).toEqual(["f.txt"]);
    save(f, "f.txt", USER, "in place");
    save(f, "f.txt", BASE, "atomic rename");
    expect(apply(id).code).toBe(0);
    expect(f.read("f.txt")).toBe(AGENT);
  });

  it("the user saves while the agent's command is changing the same file: conflict, the user's bytes kept", async () => {
    const branch = await fork(f.ws, { env: f.env });
    const started = join(f.base, "started");
    const go = join(f.base, "go");
    const running = run(branch, "sh", [
      "-c",
      `touch ${started}; while [ ! -e ${go} ]; do sleep 0.05; done; ${AGENT_SED}; printf 'x\\n' > g.txt`,
    ]);
    await waitUntil(() => existsSync(started), "the agent's command to start");
    save(f, "f.txt", USER, "atomic rename");
    writeFileSync(go, "");
    expect((await running).exitCode).toBe(0);
    await branch.close();
    const out = apply(branch.id);
    // umbra cannot know which of the user's versions the command started from: it never guesses
    expect(out.code).toBe(1);
    expect(out.report.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    expect(files()).toEqual({ "f.txt": USER });
    // the user settles it: their lines
    expect(apply(branch.id, "--ours", "f.txt").code).toBe(0);
    expect(files()).toEqual({ "f.txt": USER, "g.txt": "x\n" });
  });

  it("the user saves another file while the agent's command runs: merged, the user's file not reverted", async () => {
    writeFileSync(join(f.ws, "mine.txt"), "old\n");
    const branch = await fork(f.ws, { env: f.env });
    const started = join(f.base, "started");
    const go = join(f.base, "go");
    const running = run(branch, "sh", [
      "-c",
      `touch ${started}; while [ ! -e ${go} ]; do sleep 0.05; done; ${AGENT_SED}; cat mine.txt > seen.txt`,
    ]);
    await waitUntil(() => existsSync(started), "the agent's command to start");
    save(f, "mine.txt", "the user's new text\n", "atomic rename");
    writeFileSync(go, "");
    expect((await running).exitCode).toBe(0);
    await branch.close();
    const out = apply(branch.id);
    expect(out.code, out.stderr).toBe(0);
    expect(out.report.applied).not.toContain("mine.txt");
    expect(f.read("mine.txt")).toBe("the user's new text\n");
    expect(f.read("f.txt")).toBe(AGENT);
  });
});

describe("umbra shadow apply: the user's folder is a git repository the user works in", () => {
  it("git checkout of another branch meanwhile: the agent's change lands on what the user has checked out", () => {
    f.commitOnOther(() => {
      writeFileSync(join(f.ws, "f.txt"), USER);
      writeFileSync(join(f.ws, "only-other.txt"), "other\n");
    });
    const id = agent(AGENT_SED);
    f.git("checkout", "-q", "other");
    expect(apply(id).code).toBe(0);
    expect(files()).toEqual({ "f.txt": BOTH, "only-other.txt": "other\n" });
    // the user's git state: still on their branch, whose commit is untouched; the change is uncommitted
    expect(f.git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("other");
    expect(f.git("show", "other:f.txt")).toBe(USER);
    expect(f.git("status", "--porcelain")).toBe(" M f.txt\n");
  });

  it("git checkout of a branch without the file: conflict, the checked-out tree stays as it is", () => {
    f.commitOnOther(() => {
      f.git("rm", "-q", "f.txt");
      writeFileSync(join(f.ws, "g.txt"), "g\n");
    });
    const id = agent(AGENT_SED);
    f.git("checkout", "-q", "other");
    expect(apply(id).code).toBe(1);
    expect(files()).toEqual({ "g.txt": "g\n" });
    expect(f.git("status", "--porcelain")).toBe("");
  });

  it("git stash meanwhile: the accept writes the agent's change, git stash pop brings the user's back", () => {
    save(f, "f.txt", USER, "in place");
    const id = agent(AGENT_SED);
    f.git("stash", "-q");
    expect(f.read("f.txt")).toBe(BASE);
    expect(apply(id).code).toBe(0);
    expect(f.read("f.txt")).toBe(AGENT);
    // the user's bytes wait in the stash: git itself brings them back over the agent's (committed) change
    f.git("commit", "-qam", "the agent's change");
    f.git("stash", "pop", "-q");
    expect(f.read("f.txt")).toBe(BOTH);
  });

  it("git stash of the very lines the agent changed: conflict, nothing written; the stash pops clean", () => {
    save(f, "f.txt", USER_SAME_LINE, "in place");
    // the agent works on the user's uncommitted line
    const id = agent(`sed -i "s/^two-by-user$/two-by-agent/" f.txt`);
    f.git("stash", "-q");
    const out = apply(id);
    // the user's folder went back to line 2 = "2", the agent changed "two-by-user": both changed it
    expect(out.code).toBe(1);
    expect(out.report.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    expect(f.read("f.txt")).toBe(BASE);
    f.git("stash", "pop", "-q");
    expect(f.read("f.txt")).toBe(USER_SAME_LINE);
    // and now the branch's change applies over the user's line, as it was made
    expect(apply(id).code).toBe(0);
    expect(f.read("f.txt")).toBe(AGENT);
  });

  it("never writes the repository's metadata: HEAD, index and refs are the user's", () => {
    const id = agent(
      `${AGENT_SED}; git add f.txt; git -c user.name=a -c user.email=a@a commit -qm agent || true`,
    );
    const head = f.git("rev-parse", "HEAD");
    save(f, "f.txt", USER, "in place");
    expect(apply(id).code).toBe(0);
    expect(f.git("rev-parse", "HEAD")).toBe(head);
    expect(f.git("log", "--oneline").trim().split("\n")).toHaveLength(1);
    expect(f.read("f.txt")).toBe(BOTH);
  });
});

describe("umbra shadow apply: two agents change one file", () => {
  it("changes apart: both merged, applied one after the other", () => {
    const first = agent(AGENT_SED);
    const second = agent(`sed -i "s/^10$/ten-by-agent-2/" f.txt`);
    save(f, "f.txt", USER, "atomic rename");
    expect(apply(first).code).toBe(0);
    expect(apply(second).code).toBe(0);
    expect(f.read("f.txt")).toBe(replaceLine(BOTH, 10, "ten-by-agent-2"));
  });

  it("the same lines: the second conflicts, the first agent's and the user's lines stay (never last writer wins)", () => {
    const first = agent(AGENT_SED);
    const second = agent(`sed -i "s/^2$/two-by-agent-2/" f.txt`);
    save(f, "f.txt", USER, "in place");
    expect(apply(first).code).toBe(0);
    const out = apply(second);
    expect(out.code).toBe(1);
    expect(out.report.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    expect(f.read("f.txt")).toBe(BOTH);
    // settled with markers, every side's line is in the file
    expect(apply(second, "--markers", "f.txt").code).toBe(0);
    const text = f.read("f.txt");
    for (const line of ["two-by-agent\n", "two-by-agent-2\n", "nineteen-by-user\n", "<<<<<<< yours"])
      expect(text).toContain(line);
  });
});

describe("umbra undo, partial accepts and conflict choices", () => {
  it("umbra undo after an accept restores the user's bytes, the agent's new file goes", () => {
    const id = agent(`${AGENT_SED}; mkdir -p deep; printf 'n\\n' > deep/new.txt`);
    save(f, "f.txt", USER, "atomic rename");
    expect(apply(id).code).toBe(0);
    expect(files()).toEqual({ "deep/new.txt": "n\n", "f.txt": BOTH });
    const undo = umbra("undo", "--root", f.ws);
    expect(undo.code, undo.stderr).toBe(0);
    expect(files()).toEqual({ "f.txt": USER });
    expect(existsSync(join(f.ws, "deep"))).toBe(false);
  });

  it("umbra undo undoes the last accept only: an earlier agent's accepted change stays", () => {
    const first = agent(AGENT_SED);
    const second = agent(`sed -i "s/^10$/ten-by-agent/" f.txt`);
    save(f, "f.txt", USER, "in place");
    expect(apply(first).code).toBe(0);
    expect(apply(second).code).toBe(0);
    expect(umbra("undo", "--root", f.ws).code).toBe(0);
    expect(f.read("f.txt")).toBe(BOTH);
    const again = umbra("undo", "--root", f.ws);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing to undo");
    expect(f.read("f.txt")).toBe(BOTH);
  });

  it("umbra undo leaves a file the user changed after the accept", () => {
    const id = agent(`${AGENT_SED}; printf 'n\\n' > new.txt`);
    expect(apply(id).code).toBe(0);
    save(f, "f.txt", "mine after the accept\n", "in place");
    const undo = umbra("undo", "--root", f.ws);
    expect(undo.code).toBe(1);
    expect(files()).toEqual({ "f.txt": "mine after the accept\n" });
  });

  it("--file and --hunk accept part of a branch; the rest stays in the branch", () => {
    const id = agent(
      `sed -i -e "s/^2$/two-by-agent/" -e "s/^18$/eighteen-by-agent/" f.txt; printf 'n\\n' > new.txt`,
    );
    save(f, "f.txt", replaceLine(BASE, 10, "ten-by-user"), "in place");
    const hunk = apply(id, "--file", "f.txt", "--hunk", "2");
    expect(hunk.code, hunk.stderr).toBe(0);
    expect(files()).toEqual({
      "f.txt": replaceLine(replaceLine(BASE, 10, "ten-by-user"), 18, "eighteen-by-agent"),
    });
    expect(branchIds()).toEqual([id]);
    expect(umbra("shadow", "apply", id, "--root", f.ws, "--file", "f.txt", "--hunk", "3").code).toBe(2);
    expect(umbra("shadow", "apply", id, "--root", f.ws, "--hunk", "1").code).toBe(2);
    expect(umbra("shadow", "apply", id, "--root", f.ws, "--file", "nope.txt").code).toBe(2);
    expect(apply(id, "--file", "new.txt").code).toBe(0);
    expect(f.read("new.txt")).toBe("n\n");
    // the whole branch now: hunk 1 is what is left to bring in
    expect(apply(id).code).toBe(0);
    expect(f.read("f.txt")).toBe(
      replaceLine(
        replaceLine(replaceLine(BASE, 2, "two-by-agent"), 10, "ten-by-user"),
        18,
        "eighteen-by-agent",
      ),
    );
  });

  it("--ours, --theirs and --markers settle a conflicting file; the agent's clean hunks still merge", () => {
    const script = `sed -i -e "s/^2$/two-by-agent/" -e "s/^10$/ten-by-agent/" f.txt`;
    const user = replaceLine(USER_SAME_LINE, 19, "nineteen-by-user");
    const agentSide = replaceLine(AGENT, 10, "ten-by-agent");
    const cases: [string, (text: string) => void][] = [
      ["--ours", (text) => expect(text).toBe(replaceLine(user, 10, "ten-by-agent"))],
      ["--theirs", (text) => expect(text).toBe(replaceLine(agentSide, 19, "nineteen-by-user"))],
      [
        "--markers",
        (text) => {
          expect(text).toMatch(
            /<<<<<<< yours\ntwo-by-user\n\|\|\|\|\|\|\| base\n2\n=======\ntwo-by-agent\n>>>>>>> agent\n/,
          );
          expect(text).toContain("ten-by-agent\n");
          expect(text).toContain("nineteen-by-user\n");
        },
      ],
    ];
    for (const [flag, check] of cases) {
      save(f, "f.txt", BASE, "in place");
      const id = agent(script);
      save(f, "f.txt", user, "in place");
      expect(apply(id).code).toBe(1);
      expect(f.read("f.txt")).toBe(user);
      const out = apply(id, flag, "f.txt");
      expect(out.code, `${flag}: ${out.stderr}`).toBe(0);
      check(f.read("f.txt"));
    }
    const id = agent(script);
    const both = umbra("shadow", "apply", id, "--root", f.ws, "--ours", "f.txt", "--theirs", "f.txt");
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/more than one of --ours, --theirs, --markers/);
  });

  it("--partial writes the files that merge and leaves the conflicting one, which stays in the branch", () => {
    const id = agent(`${AGENT_SED}; printf 'n\\n' > new.txt`);
    save(f, "f.txt", USER_SAME_LINE, "atomic rename");
    const out = apply(id, "--partial");
    expect(out.code).toBe(1);
    expect(files()).toEqual({ "f.txt": USER_SAME_LINE, "new.txt": "n\n" });
    expect(branchIds()).toEqual([id]);
  });

  it("--verify refuses when the test command fails in the merged result, and passes otherwise", () => {
    const id = agent(AGENT_SED);
    save(f, "f.txt", USER, "in place");
    userConfig(f, {
      agent: { testCommand: "grep -q two-by-agent f.txt && ! grep -q nineteen-by-user f.txt" },
    });
    const refused = umbra("shadow", "apply", id, "--root", f.ws, "--verify");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/verify: tests failed/);
    expect(files()).toEqual({ "f.txt": USER });
    // the test command sees the merged result (both lines) in a fresh branch, not the user's folder
    userConfig(f, { agent: { testCommand: "grep -q two-by-agent f.txt && grep -q nineteen-by-user f.txt" } });
    const passed = umbra("shadow", "apply", id, "--root", f.ws, "--verify");
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stderr).toContain("verified in a fresh branch");
    expect(files()).toEqual({ "f.txt": BOTH });
  });

  it("applying a branch a second time is bad input and changes nothing", () => {
    const id = agent(AGENT_SED);
    expect(apply(id).code).toBe(0);
    save(f, "f.txt", USER, "in place");
    expect(umbra("shadow", "apply", id, "--root", f.ws).code).toBe(2);
    expect(files()).toEqual({ "f.txt": USER });
  });
});

describe("umbra shadow rebase", () => {
  it("brings the user's edit into the branch; the accept then has nothing of the user's to merge", async () => {
    const id = agent(AGENT_SED);
    save(f, "f.txt", USER, "atomic rename");
    const out = umbra("shadow", "rebase", id, "--root", f.ws);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain("1 file(s) merged");
    const branch = await openBranch(f.ws, id, { env: f.env });
    try {
      expect(await branch.readText("f.txt")).toBe(BOTH);
      // the agent's work is still line 2 only: its base is now the user's file
      const [change] = await branch.recordedChanges();
      expect(change?.base.kind === "file" ? (await change.base.load()).toString() : undefined).toBe(USER);
    } finally {
      await branch.close();
    }
    expect(files()).toEqual({ "f.txt": USER });
    expect(apply(id).code).toBe(0);
    expect(f.read("f.txt")).toBe(BOTH);
  });

  it("a conflicting rebase changes neither the branch nor the user's file", async () => {
    const id = agent(AGENT_SED);
    save(f, "f.txt", USER_SAME_LINE, "in place");
    const out = umbra("shadow", "rebase", id, "--root", f.ws);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/conflict: f\.txt: .*\(line 2\)/);
    const branch = await openBranch(f.ws, id, { env: f.env });
    try {
      expect(await branch.readText("f.txt")).toBe(AGENT);
    } finally {
      await branch.close();
    }
    expect(files()).toEqual({ "f.txt": USER_SAME_LINE });
  });
});
