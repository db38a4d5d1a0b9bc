/**
 * The no-byte-lost matrix for `umbra agent`'s accept: a session (runSession with a scripted model, the
 * real tools, branch and sandbox) changes the user's file while the user edits it, before or during
 * the session; then the accept of `umbra agent` (applyAndTest, with the review's pick where it says so)
 * or, for a session declined earlier, `umbra sessions apply` through the built CLI.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { undoLastAccept } from "../../src/accept/index.js";
import { runSession, type SessionResult } from "../../src/agent/run.js";
import { listSessions } from "../../src/agent/session.js";
import { applyAndTest } from "../../src/cli/agent-command.js";
import { pickChanges } from "../../src/cli/pick.js";
import { listBranches } from "../../src/shadow/index.js";
import { scriptedModel, testConfig } from "../agent/helpers.js";
import { type FakeAction, startFakeOpenAI } from "../fakes/fake-openai.js";
import { requireBuiltCli, umbraAsync, umbraSync } from "../helpers/cli.js";
import { replaceLine } from "./helpers.js";
import {
  AGENT,
  BASE,
  BOTH,
  type Folder,
  SAVE_STYLES,
  save,
  USER,
  USER_SAME_LINE,
  userFolder,
} from "./matrix.js";

let f: Folder;

beforeAll(requireBuiltCli);
beforeEach(() => {
  f = userFolder();
});
afterEach(() => rmSync(f.base, { recursive: true, force: true }));

/** The edit tool call that changes line `n` ("n") of f.txt into `by` (its neighbours make it unique). */
function editLine(n: number, by: string, path = "f.txt"): FakeAction {
  const around = (mid: string) => `${n - 1}\n${mid}\n${n + 1}\n`;
  return { toolCalls: [{ name: "edit", input: { path, search: around(String(n)), replace: around(by) } }] };
}

const READ: FakeAction = { toolCalls: [{ name: "read_file", input: { path: "f.txt" } }] };

/**
 * A session whose model answers `turns` in order, then "done"; `between[n]` runs (as the user) right
 * before the n-th answer, i.e. while the agent works.
 */
async function session(
  turns: FakeAction[],
  between: Record<number, () => void> = {},
  agent: Record<string, string> = {},
): Promise<SessionResult> {
  const script = [...turns, { text: "done" }];
  const { model } = scriptedModel((_request, n) => {
    between[n]?.();
    return script[n] ?? { text: "(no more answers)" };
  });
  const config = testConfig(f.ws, f.env, agent);
  const result = await runSession({ root: f.ws, task: "the task", config, env: f.env, model, lsp: null });
  expect(result.outcome.status, result.outcome.message).toBe("done");
  return result;
}

function accept(result: SessionResult, changes = result.changes, agent: Record<string, string> = {}) {
  return applyAndTest(f.ws, result, testConfig(f.ws, f.env, agent), { quiet: true, env: f.env, changes });
}

const read = (path = "f.txt") => readFileSync(join(f.ws, path), "utf8");

describe("umbra agent accept: the user edits while the agent works", () => {
  it.each(SAVE_STYLES)("the user saves other lines after the session (%s): both kept", async (style) => {
    const result = await session([READ, editLine(2, "two-by-agent")]);
    expect(read()).toBe(BASE);
    save(f, "f.txt", USER, style);
    const { apply } = await accept(result);
    expect(apply.written, apply.message).toBe(true);
    expect(read()).toBe(BOTH);
    expect(await listBranches(f.ws, { env: f.env })).toEqual([]);
  });

  it.each(SAVE_STYLES)(
    "the user saves other lines during the session (%s), after the agent read the file: both kept",
    async (style) => {
      const result = await session([READ, editLine(2, "two-by-agent")], {
        1: () => save(f, "f.txt", USER, style),
      });
      // what the agent did is line 2: the user's line 19 is no change of the agent's to undo
      expect(result.diff).toContain("+two-by-agent");
      expect(result.diff).not.toMatch(/^-nineteen/m);
      const { apply } = await accept(result);
      expect(apply.written, apply.message).toBe(true);
      expect(read()).toBe(BOTH);
    },
  );

  it("the user saves the agent's line during the session: conflict, nothing written, the user's bytes kept", async () => {
    const mine = replaceLine(USER, 2, "two-by-user");
    const result = await session([READ, editLine(2, "two-by-agent"), { text: "checking" }], {
      2: () => save(f, "f.txt", mine, "atomic rename"),
    });
    const { apply } = await accept(result);
    expect(apply.written).toBe(false);
    expect(apply.conflicts).toEqual([
      expect.objectContaining({ path: "f.txt", hunks: [expect.objectContaining({ line: 2 })] }),
    ]);
    expect(read()).toBe(mine);
    // kept for a later accept
    expect((await listBranches(f.ws, { env: f.env })).map((b) => b.id)).toEqual([result.branch]);
  });

  it("the user deletes, or renames, the file the agent changed: conflict, nothing brought back", async () => {
    const result = await session([editLine(2, "two-by-agent")]);
    rmSync(join(f.ws, "f.txt"));
    writeFileSync(join(f.ws, "g.txt"), USER);
    const { apply } = await accept(result);
    expect(apply.conflicts.map((c) => c.why)).toEqual(["you deleted or renamed it and the agent changed it"]);
    expect(() => read()).toThrow();
    expect(read("g.txt")).toBe(USER);
  });

  it("the user creates the file the agent created: the same content is fine, a different one conflicts", async () => {
    const create = (path: string, text: string): FakeAction => ({
      toolCalls: [{ name: "edit", input: { path, search: "", replace: text } }],
    });
    const result = await session([create("same.txt", "same\n"), create("other.txt", "the agent's\n")]);
    writeFileSync(join(f.ws, "same.txt"), "same\n");
    writeFileSync(join(f.ws, "other.txt"), "the user's\n");
    const { apply } = await accept(result);
    expect(apply.unchanged).toEqual(["same.txt"]);
    expect(apply.conflicts.map((c) => c.path)).toEqual(["other.txt"]);
    expect(read("other.txt")).toBe("the user's\n");
  });

  it("git checkout of another branch during the session: the agent's line lands on the user's branch", async () => {
    f.commitOnOther(() => save(f, "f.txt", USER, "in place"));
    const result = await session([READ, editLine(2, "two-by-agent")], {
      2: () => f.git("checkout", "-q", "other"),
    });
    const { apply } = await accept(result);
    expect(apply.written, apply.message).toBe(true);
    expect(read()).toBe(BOTH);
    expect(f.git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("other");
  });

  it("git stash during the session: the accept merges, the stash gives the user's lines back", async () => {
    save(f, "f.txt", USER, "in place");
    const result = await session([READ, editLine(2, "two-by-agent")], { 2: () => f.git("stash", "-q") });
    expect(read()).toBe(BASE);
    const { apply } = await accept(result);
    expect(apply.written, apply.message).toBe(true);
    expect(read()).toBe(AGENT);
    f.git("commit", "-qam", "agent");
    f.git("stash", "pop", "-q");
    expect(read()).toBe(BOTH);
  });

  it("the test command after the accept runs on the merged file in the user's folder", async () => {
    const agent = { testCommand: "grep -q two-by-agent f.txt && grep -q nineteen-by-user f.txt" };
    const result = await session([editLine(2, "two-by-agent")], {}, agent);
    save(f, "f.txt", USER, "atomic rename");
    const { apply, tests } = await accept(result, result.changes, agent);
    expect(apply.written).toBe(true);
    expect(tests).toMatchObject({ passed: true });
  });
});

describe("umbra agent accept: two agents change one file", () => {
  it("apart: both merged in turn; the same lines: the second conflicts, never last writer wins", async () => {
    const [first, apart, clash] = await Promise.all([
      session([editLine(2, "two-by-agent")]),
      session([editLine(10, "ten-by-agent-2")]),
      session([editLine(2, "two-by-agent-3")]),
    ]);
    save(f, "f.txt", USER, "in place");
    expect((await accept(first)).apply.written).toBe(true);
    expect((await accept(apart)).apply.written).toBe(true);
    const merged = replaceLine(BOTH, 10, "ten-by-agent-2");
    expect(read()).toBe(merged);
    const third = await accept(clash);
    expect(third.apply.written).toBe(false);
    expect(third.apply.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    expect(read()).toBe(merged);
  });
});

describe("umbra agent --parallel --yes (the built CLI, a fake model server): two agents, one file", () => {
  /** Runs two agents whose first answers edit line 2 into `first` and line `n` into `second`. */
  async function parallel(first: FakeAction, second: FakeAction) {
    const answers = [first, second];
    const server = await startFakeOpenAI((request) => {
      if (!request.messages.some((m) => m.role === "tool")) return answers.shift() ?? { text: "?" };
      // the user saves line 19 while the agents work (once both have made their edit)
      if (answers.length === 0 && read() === BASE) save(f, "f.txt", USER, "atomic rename");
      return { text: "done" };
    });
    try {
      const env = { ...f.env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model" };
      const out = await umbraAsync(env, [
        "agent",
        "the task",
        "--root",
        f.ws,
        "--parallel",
        "2",
        "--yes",
        "--json",
      ]);
      expect(out.stdout, out.stderr).not.toBe("");
      return {
        code: out.code,
        ...(JSON.parse(out.stdout) as { sessions: { applied: boolean; conflicts: { path: string }[] }[] }),
      };
    } finally {
      await server.close();
    }
  }

  it("apart: both merged with the user's line", async () => {
    const out = await parallel(editLine(2, "two-by-agent"), editLine(10, "ten-by-agent"));
    expect(out.code).toBe(0);
    expect(out.sessions.map((s) => s.applied)).toEqual([true, true]);
    expect(read()).toBe(replaceLine(BOTH, 10, "ten-by-agent"));
  });

  it("the same line: one is applied, the other is a conflict; the user's line stays", async () => {
    const out = await parallel(editLine(2, "two-by-agent-1"), editLine(2, "two-by-agent-2"));
    expect(out.code).toBe(1);
    expect(out.sessions.map((s) => s.applied)).toEqual([true, false]);
    expect(out.sessions[1]?.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    const text = read();
    // whichever agent came first, the second never overwrote it
    expect([replaceLine(USER, 2, "two-by-agent-1"), replaceLine(USER, 2, "two-by-agent-2")]).toContain(text);
  });
});

describe("umbra agent accept: undo, review picks, apply later", () => {
  it("undo after the accept restores the user's bytes", async () => {
    const result = await session([editLine(2, "two-by-agent")]);
    save(f, "f.txt", USER, "atomic rename");
    await accept(result);
    expect(read()).toBe(BOTH);
    expect(await undoLastAccept(f.ws, { env: f.env })).toMatchObject({ found: true, restored: ["f.txt"] });
    expect(read()).toBe(USER);
  });

  it("the review's pick takes one hunk; the rest is accepted later with umbra sessions apply", async () => {
    const result = await session([editLine(2, "two-by-agent"), editLine(14, "fourteen-by-agent")]);
    save(f, "f.txt", USER, "in place");
    const answers = ["h", "n", "y"];
    const picked = await pickChanges(
      result.changes,
      async () => answers.shift(),
      () => {},
    );
    expect(answers).toEqual([]);
    const { apply } = await accept(result, picked);
    expect(apply.written, apply.message).toBe(true);
    expect(read()).toBe(replaceLine(USER, 14, "fourteen-by-agent"));
    // picked in part: the branch stays, and the rest comes later without the model
    const later = umbraSync(f.env, ["sessions", "apply", result.session, "--root", f.ws]);
    expect(later.code, later.stderr).toBe(0);
    expect(read()).toBe(replaceLine(BOTH, 14, "fourteen-by-agent"));
  });

  it("umbra agent declines without a terminal; umbra sessions apply accepts later, without the model", async () => {
    const server = await startFakeOpenAI([editLine(2, "two-by-agent"), { text: "done" }]);
    const env = { ...f.env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model" };
    const run = await umbraAsync(env, ["agent", "the task", "--root", f.ws]).finally(() => server.close());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("not applied; accept it later with: umbra sessions apply");
    const id = /umbra sessions apply (\S+)/.exec(run.stderr)?.[1] ?? "";
    expect(read()).toBe(BASE);
    save(f, "f.txt", USER, "atomic rename");
    const [summary] = await listSessions(f.ws, f.env);
    expect(summary).toMatchObject({ id, applied: undefined });
    const transcript = readFileSync(summary?.file ?? "", "utf8");
    // the model's server is gone and no model is configured: applying later cannot call one
    const later = umbraSync(f.env, ["sessions", "apply", id, "--root", f.ws]);
    expect(later.code, later.stderr).toBe(0);
    expect(read()).toBe(BOTH);
    const added = readFileSync(summary?.file ?? "", "utf8")
      .slice(transcript.length)
      .trim()
      .split("\n");
    expect(added.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(["apply"]);
    expect((await listSessions(f.ws, f.env))[0]).toMatchObject({ id, applied: true });
    // applied in full: its branch is gone, and a second apply is bad input that changes nothing
    expect(umbraSync(f.env, ["sessions", "apply", id, "--root", f.ws]).code).toBe(2);
    expect(read()).toBe(BOTH);
  });

  it("umbra sessions apply of a declined session whose lines the user changed too: exit 1, the user's bytes kept", async () => {
    const result = await session([editLine(2, "two-by-agent")]);
    save(f, "f.txt", USER_SAME_LINE, "in place");
    const later = umbraSync(f.env, ["sessions", "apply", result.session, "--root", f.ws]);
    expect(later.code).toBe(1);
    expect(later.stderr).toMatch(/conflict: f\.txt/);
    expect(read()).toBe(USER_SAME_LINE);
    expect((await listSessions(f.ws, f.env))[0]).toMatchObject({ id: result.session, applied: false });
  });
});
