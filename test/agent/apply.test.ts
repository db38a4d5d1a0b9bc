import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyDiff, runTests } from "../../src/agent/apply.js";
import { runSession, type SessionResult } from "../../src/agent/run.js";
import { listSessions } from "../../src/agent/session.js";
import { formatDiff } from "../../src/shadow/diff.js";
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

describe("applying an agent's diff", () => {
  it("leaves the folder byte-identical until applied, then applies with git apply", async () => {
    const before = await fingerprint(root);
    const result = await agentChange();
    expect(await fingerprint(root)).toBe(before);
    expect(result.diff).toContain("+  food: 5,");
    expect(result.diff).not.toContain(".umbraignore");
    const applied = await applyDiff(root, result.diff, result.files);
    expect(applied).toMatchObject({ applied: true, method: "git apply" });
    expect(await readFile(join(root, "billing", "tax.ts"), "utf8")).toContain("  food: 5,");
    expect(await readFile(join(root, "billing", "NOTES.md"), "utf8")).toBe("food VAT changed\n");
  });

  it("merges three ways when the user changed other lines of the same file", async () => {
    const result = await agentChange();
    const tax = join(root, "billing", "tax.ts");
    await writeFile(tax, (await readFile(tax, "utf8")).replace("default: 19,", "default: 20,"));
    const applied = await applyDiff(root, result.diff, result.files);
    expect(applied).toMatchObject({ applied: true, method: "3-way merge" });
    const text = await readFile(tax, "utf8");
    expect(text).toContain("  food: 5,");
    expect(text).toContain("default: 20,");
  });

  it("reports a conflict and applies nothing when the user changed the same lines", async () => {
    const result = await agentChange();
    const tax = join(root, "billing", "tax.ts");
    await writeFile(tax, (await readFile(tax, "utf8")).replace("  food: 7,", "  food: 6,"));
    const before = await fingerprint(root);
    const applied = await applyDiff(root, result.diff, result.files);
    expect(applied.applied).toBe(false);
    expect(applied.conflicts).toEqual([expect.stringMatching(/^billing\/tax\.ts: /)]);
    expect(applied.message).toMatch(/nothing was changed/);
    expect(await fingerprint(root)).toBe(before);
  });

  it("applies inside a subfolder of a git repository, and with --3way on committed changes", async () => {
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
    const tax = join(root, "billing", "tax.ts");
    await writeFile(tax, (await readFile(tax, "utf8")).replace("default: 19,", "default: 20,"));
    git("commit", "-qam", "user change");
    const applied = await applyDiff(root, result.diff, result.files);
    expect(applied.applied).toBe(true);
    expect(["git apply --3way", "3-way merge"]).toContain(applied.method);
    const text = await readFile(tax, "utf8");
    expect(text).toContain("  food: 5,");
    expect(text).toContain("default: 20,");
    expect(text).not.toContain("<<<<<<<");
  });

  it("never deletes a binary file in the 3-way fallback (it cannot merge one)", async () => {
    const bin = join(root, "logo.bin");
    const before = Buffer.from([0, 1, 2, 3]);
    await writeFile(bin, before);
    const tax = join(root, "billing", "tax.ts");
    const text = await readFile(tax, "utf8");
    const side = (content: string | Buffer) => ({
      mode: "100644" as const,
      load: async () => Buffer.from(content),
    });
    const diff = await formatDiff(
      [
        {
          path: "billing/tax.ts",
          kind: "modified",
          old: side(text),
          new: side(text.replace("  food: 7,", "  food: 5,")),
        },
        { path: "logo.bin", kind: "modified", old: side(before), new: side(Buffer.from([0, 9, 9])) },
      ],
      async () => undefined,
      { binary: true },
    );
    await writeFile(tax, text.replace("default: 19,", "default: 20,")); // the fallback runs
    const files = [
      {
        path: "billing/tax.ts",
        kind: "modified" as const,
        base: text,
        ours: text.replace("  food: 7,", "  food: 5,"),
      },
      { path: "logo.bin", kind: "modified" as const, base: before.toString("utf8"), ours: undefined },
    ];
    const applied = await applyDiff(root, diff, files, { env });
    expect(await readFile(bin)).toEqual(before);
    expect(applied.applied).toBe(false);
    expect(applied.conflicts).toEqual(["logo.bin: not a text file"]);
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

  it("lists sessions with their status", async () => {
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
  });
});
