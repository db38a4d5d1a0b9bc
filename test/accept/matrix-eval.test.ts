/**
 * The no-byte-lost matrix for `umbra eval` grading (gradeChanges): the agent works on a task's folder
 * (a real session, scripted model), the folder is then edited before grading, as by a user working in
 * the same checkout. Grading merges the agent's recorded changes three ways into a fresh branch of the
 * folder, so (1) the folder itself is never written: every byte edited there stays, and (2) the tests
 * see the agent's change on top of the folder's current content: edits elsewhere in the file are kept,
 * and where both changed the same lines the agent's side is graded (grade.ts: what is graded is the
 * agent's work). The eval runner's own runTask makes a private folder per task that nobody edits, so
 * this case is reachable only through gradeChanges, which is what it calls.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSession, type SessionResult } from "../../src/agent/run.js";
import { loadConfig } from "../../src/config/config.js";
import { gradeChanges } from "../../src/eval/index.js";
import type { EvalTask } from "../../src/eval/task.js";
import { listBranches } from "../../src/shadow/index.js";
import { scriptedModel, testConfig } from "../agent/helpers.js";
import { BASE, type Folder, save, USER, USER_SAME_LINE, userFolder } from "./matrix.js";

let f: Folder;

beforeEach(() => {
  f = userFolder();
  writeFileSync(join(f.ws, "test.sh"), "grep -qx two-by-agent f.txt\n");
});
afterEach(() => rmSync(f.base, { recursive: true, force: true }));

function task(visible: string, hidden = "true"): EvalTask {
  return {
    id: "matrix",
    category: "accept",
    instruction: "change line 2",
    source: { kind: "dir", dir: f.ws },
    extraFiles: {},
    visible: { command: visible, files: ["test.sh"] },
    hidden: { command: hidden, files: {} },
    budget: { maxSteps: 5, timeoutMs: 60_000 },
  };
}

/** The agent's session on the task folder: line 2 of f.txt, and (optionally) an edit of the test. */
async function agentRun(editTest = false): Promise<SessionResult> {
  const calls = [
    { name: "edit", input: { path: "f.txt", search: "1\n2\n3\n", replace: "1\ntwo-by-agent\n3\n" } },
    ...(editTest
      ? [{ name: "edit", input: { path: "test.sh", search: "grep -qx two-by-agent f.txt", replace: "true" } }]
      : []),
  ];
  const { model } = scriptedModel([{ toolCalls: calls }, { text: "done" }]);
  return runSession({
    root: f.ws,
    task: "change line 2",
    config: testConfig(f.ws, f.env),
    env: f.env,
    model,
    lsp: null,
  });
}

function grade(result: SessionResult, visible: string, hidden?: string) {
  return gradeChanges(task(visible, hidden), f.ws, result.changes, {
    config: loadConfig({ workspaceRoot: f.ws, env: f.env }),
    env: f.env,
  });
}

const read = (path = "f.txt") => readFileSync(join(f.ws, path), "utf8");

describe("umbra eval grading: the task's folder is edited after the agent ran", () => {
  it("other lines edited: the tests see both, the folder keeps its bytes", async () => {
    const result = await agentRun();
    save(f, "f.txt", USER, "atomic rename");
    const graded = await grade(
      result,
      "grep -qx two-by-agent f.txt && grep -qx nineteen-by-user f.txt",
      "cat f.txt",
    );
    expect(graded.visible.passed, graded.visible.tail).toBe(true);
    expect(graded.hidden.tail).toContain("two-by-agent\n");
    expect(graded.hidden.tail).toContain("nineteen-by-user\n");
    expect(read()).toBe(USER);
    // the grading branch is gone; the agent's is still there for its owner
    expect((await listBranches(f.ws, { env: f.env })).map((b) => b.id)).toEqual([result.branch]);
  });

  it("the same line edited: the agent's line is graded, the folder keeps the user's line", async () => {
    const result = await agentRun();
    save(f, "f.txt", USER_SAME_LINE, "in place");
    const graded = await grade(result, "sh test.sh && ! grep -q two-by-user f.txt");
    expect(graded.visible.passed, graded.visible.tail).toBe(true);
    expect(read()).toBe(USER_SAME_LINE);
  });

  it("the file deleted: the agent's file is graded, the folder stays without it", async () => {
    const result = await agentRun();
    rmSync(join(f.ws, "f.txt"));
    const graded = await grade(result, "sh test.sh");
    expect(graded.visible.passed, graded.visible.tail).toBe(true);
    expect(existsSync(join(f.ws, "f.txt"))).toBe(false);
  });

  it("a test file the agent edited is graded as the folder has it now, and neither is written", async () => {
    const result = await agentRun(true);
    writeFileSync(join(f.ws, "test.sh"), "grep -qx two-by-agent f.txt && echo the users test ran\n");
    const graded = await grade(result, "sh test.sh");
    expect(graded.testsEdited).toEqual(["test.sh"]);
    expect(graded.visible.passed, graded.visible.tail).toBe(true);
    expect(graded.visible.tail).toContain("the users test ran");
    expect(read("test.sh")).toBe("grep -qx two-by-agent f.txt && echo the users test ran\n");
    expect(read()).toBe(BASE);
  });
});
