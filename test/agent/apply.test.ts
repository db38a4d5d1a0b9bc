/**
 * Accepting an agent session's changes (`umbra agent`'s accept: applyAndTest, through src/accept): the
 * folder is untouched until the accept, which merges three ways with what the user changed meanwhile,
 * writes nothing on a conflict, keeps binary files whole, and records the outcome in the session.
 */
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runTests } from "../../src/agent/apply.js";
import { runSession, type SessionResult } from "../../src/agent/run.js";
import { listSessions } from "../../src/agent/session.js";
import { applyAndTest } from "../../src/cli/agent-command.js";
import { listBranches } from "../../src/shadow/index.js";
import { change, file } from "../accept/helpers.js";
import { cleanup, copyExamples, fingerprint } from "../helpers/workspace.js";
import { scriptedModel, testConfig, testEnv } from "./helpers.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  ({ home, env } = await testEnv());
  root = await copyExamples();
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

/** A session that changes the food VAT rate (line 3 of billing/tax.ts) and adds a file. */
async function agentChange(): Promise<SessionResult> {
  const { model } = scriptedModel([
    {
      toolCalls: [
        { name: "edit", input: { path: "billing/tax.ts", search: "  food: 7,", replace: "  food: 5," } },
        { name: "edit", input: { path: "billing/NOTES.md", search: "", replace: "food VAT changed\n" } },
      ],
    },
    { text: "done" },
  ]);
  return runSession({ root, task: "food VAT 5%", config: testConfig(root, env), env, model, lsp: null });
}

function accept(result: SessionResult, changes = result.changes) {
  return applyAndTest(root, result, testConfig(root, env), { quiet: true, env, changes });
}

const tax = () => join(root, "billing", "tax.ts");

describe("accepting an agent's changes", () => {
  it("leaves the folder byte-identical until accepted, then writes them and drops the branch", async () => {
    const before = await fingerprint(root);
    const result = await agentChange();
    expect(await fingerprint(root)).toBe(before);
    expect(result.diff).toContain("+  food: 5,");
    expect(result.diff).not.toContain(".umbraignore");
    expect(result.changes.map((c) => c.path)).toEqual(["billing/NOTES.md", "billing/tax.ts"]);
    const { apply } = await accept(result);
    expect(apply).toMatchObject({ written: true, applied: ["billing/NOTES.md", "billing/tax.ts"] });
    expect(await readFile(tax(), "utf8")).toContain("  food: 5,");
    expect(await readFile(join(root, "billing", "NOTES.md"), "utf8")).toBe("food VAT changed\n");
    expect(await listBranches(root, { env })).toEqual([]);
  });

  it("merges three ways when the user changed other lines of the same file", async () => {
    const result = await agentChange();
    await writeFile(tax(), (await readFile(tax(), "utf8")).replace("default: 19,", "default: 20,"));
    const { apply } = await accept(result);
    expect(apply.written, apply.message).toBe(true);
    const text = await readFile(tax(), "utf8");
    expect(text).toContain("  food: 5,");
    expect(text).toContain("default: 20,");
  });

  it("reports a conflict and writes nothing when the user changed the same lines; the branch stays", async () => {
    const result = await agentChange();
    await writeFile(tax(), (await readFile(tax(), "utf8")).replace("  food: 7,", "  food: 6,"));
    const before = await fingerprint(root);
    const { apply } = await accept(result);
    expect(apply.written).toBe(false);
    expect(apply.conflicts).toEqual([
      {
        path: "billing/tax.ts",
        why: expect.stringContaining("conflicting hunk"),
        hunks: [expect.objectContaining({ yours: expect.stringContaining("food: 6") })],
        yoursSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        markers: expect.stringContaining("food: 6"),
      },
    ]);
    expect(apply.message).toMatch(/nothing was written/);
    expect(await fingerprint(root)).toBe(before);
    expect((await listBranches(root, { env })).map((b) => b.id)).toEqual([result.branch]);
  });

  it("merges inside a subfolder of a git repository whose user committed a change meanwhile", async () => {
    const top = join(root, "..");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
        cwd: top,
        stdio: "pipe",
      });
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "base");
    const result = await agentChange();
    await writeFile(tax(), (await readFile(tax(), "utf8")).replace("default: 19,", "default: 20,"));
    git("commit", "-qam", "user change");
    const { apply } = await accept(result);
    expect(apply.written, apply.message).toBe(true);
    const text = await readFile(tax(), "utf8");
    expect(text).toContain("  food: 5,");
    expect(text).toContain("default: 20,");
    expect(text).not.toContain("<<<<<<<");
  });

  it("never merges a binary file line by line: both changed it, it conflicts and keeps the user's bytes", async () => {
    const bin = join(root, "logo.bin");
    const start = Buffer.from([0, 1, 2, 3]);
    const users = Buffer.from([0, 1, 2, 3, 4]);
    await writeFile(bin, users);
    const result = await agentChange();
    const binary = change("logo.bin", file(start), file(Buffer.from([0, 9, 9])));
    const { apply } = await accept(result, [...result.changes, binary]);
    expect(await readFile(bin)).toEqual(users);
    expect(apply.written).toBe(false);
    expect(apply.conflicts).toEqual([
      {
        path: "logo.bin",
        why: "a binary file both you and the agent changed",
        hunks: [],
        yoursSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(await readFile(tax(), "utf8")).toContain("  food: 7,");
  });

  it("runs the test command sandboxed in the folder", async () => {
    const failing = await runTests(root, "python3 -B -m doctest inventory/stock.py", testConfig(root, env), {
      env,
    });
    expect(failing).toMatchObject({ passed: false, exitCode: 1 });
    expect(failing.output).toContain("Failed example");
    const passing = await runTests(root, "true", testConfig(root, env), { env });
    expect(passing.passed).toBe(true);
  });

  it("lists sessions with their status, and whether their changes were applied", async () => {
    const result = await agentChange();
    const sessions = await listSessions(root, env);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({
      id: result.session,
      task: "food VAT 5%",
      status: "done",
      toolCalls: 2,
      changedFiles: ["billing/NOTES.md", "billing/tax.ts"],
    });
    await accept(result);
    expect((await listSessions(root, env))[0]?.applied).toBe(true);
  });
});
