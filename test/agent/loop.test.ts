import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSession } from "../../src/agent/run.js";
import { cleanup, copyExamples, fingerprint } from "../helpers/workspace.js";
import { scriptedModel, testConfig, testEnv, toolOutputs } from "./helpers.js";

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

describe("agent loop", () => {
  it("reads, edits in its branch and ends with a diff; the folder is untouched", async () => {
    const before = await fingerprint(root);
    const { model, requests } = scriptedModel([
      { toolCalls: [{ name: "read_file", input: { path: "billing/tax.ts", startLine: 1, endLine: 3 } }] },
      {
        toolCalls: [
          { name: "edit", input: { path: "billing/tax.ts", search: "  food: 7,", replace: "  food: 5," } },
        ],
      },
      { text: "Lowered the food VAT rate." },
    ]);
    const result = await runSession({
      root,
      task: "lower food VAT to 5%",
      config: testConfig(root, env),
      env,
      model,
      lsp: null,
    });
    expect(result.outcome.status).toBe("done");
    expect(result.outcome.finalText).toBe("Lowered the food VAT rate.");
    expect(result.outcome.steps).toBe(3);
    expect(result.diff).toContain("-  food: 7,");
    expect(result.diff).toContain("+  food: 5,");
    expect(toolOutputs(requests[1])[0]).toContain("1| /** VAT rates");
    expect(toolOutputs(requests[2])[1]).toContain("edited billing/tax.ts");
    expect(result.outcome.usage).toMatchObject({ inputTokens: 300, outputTokens: 60, calls: 3 });
    expect(await fingerprint(root)).toBe(before);
    const transcript = (await readFile(result.transcript, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(transcript.map((r) => r.type)).toContain("tool-call");
    expect(transcript.at(-1)?.type).toBe("end");
  });
});

describe("agent loop limits", () => {
  const readCall = { name: "read_file", input: { path: "billing/tax.ts" } };

  it("stops after agent.maxSteps", async () => {
    const { model } = scriptedModel(() => ({
      toolCalls: [{ name: "list_files", input: { path: "billing" } }],
    }));
    const config = testConfig(root, env, { maxSteps: 2 });
    const result = await runSession({ root, task: "loop", config, env, model, lsp: null });
    expect(result.outcome).toMatchObject({ status: "max-steps", steps: 2 });
  });

  it("stops when the token budget is spent", async () => {
    const { model } = scriptedModel(() => ({ toolCalls: [readCall], usage: { input: 600, output: 10 } }));
    const config = testConfig(root, env, { maxTokens: 1000 });
    const result = await runSession({ root, task: "t", config, env, model, lsp: null });
    expect(result.outcome.status).toBe("max-tokens");
    expect(result.outcome.steps).toBe(2);
  });

  it("stops when the time is up", async () => {
    const { model } = scriptedModel(() => ({
      toolCalls: [{ name: "list_files", input: { path: "billing" } }],
    }));
    let clock = 0;
    const { runAgent } = await import("../../src/agent/loop.js");
    const { createToolContext } = await import("../../src/agent/context.js");
    const { fork } = await import("../../src/shadow/index.js");
    const branch = await fork(root, { env });
    try {
      const config = testConfig(root, env, { maxTimeMs: 1000 });
      const context = createToolContext({ branch, root, config, env, lsp: null });
      const outcome = await runAgent({
        task: "t",
        model,
        context,
        limits: config.agent,
        now: () => {
          clock += 400;
          return clock;
        },
      });
      expect(outcome.status).toBe("max-time");
    } finally {
      await branch.discard();
    }
  });

  it("nudges, then stops, when the same call keeps giving the same result", async () => {
    const { model, requests } = scriptedModel(() => ({ toolCalls: [readCall] }));
    const result = await runSession({
      root,
      task: "t",
      config: testConfig(root, env),
      env,
      model,
      lsp: null,
    });
    expect(result.outcome.status).toBe("stuck");
    expect(result.outcome.steps).toBe(5);
    const outputs = toolOutputs(requests[3]);
    expect(outputs[2]).toContain("you have made this exact read_file call 3 times");
    expect(outputs[1]).not.toContain("exact read_file call");
  });

  it("sends the agent back after a failing command, a bounded number of times", async () => {
    const failing = { toolCalls: [{ name: "run_command", input: { command: "exit 1" } }] };
    const { model, requests } = scriptedModel([
      failing,
      { text: "done" },
      { text: "still done" },
      { text: "really" },
    ]);
    const config = testConfig(root, env, { maxFixups: 2 });
    const result = await runSession({ root, task: "t", config, env, model, lsp: null });
    expect(result.outcome.status).toBe("unresolved");
    expect(requests).toHaveLength(4);
    expect(JSON.stringify(requests[2]?.messages.at(-1))).toContain(
      "You are not done: the last command you ran failed",
    );
    const fixed = scriptedModel([
      failing,
      { text: "done" },
      { toolCalls: [{ name: "run_command", input: { command: "true" } }] },
      { text: "now done" },
    ]);
    const second = await runSession({ root, task: "t", config, env, model: fixed.model, lsp: null });
    expect(second.outcome.status).toBe("done");
  });

  it("compacts old tool output near the context limit", async () => {
    const { model, requests } = scriptedModel((_request, n) =>
      n < 5
        ? { toolCalls: [{ name: "read_file", input: { path: "billing/invoice.ts", startLine: n + 1 } }] }
        : { text: "ok" },
    );
    const config = testConfig(root, env, { contextTokens: 2500 });
    const result = await runSession({ root, task: "t", config, env, model, lsp: null });
    expect(result.outcome.status).toBe("done");
    const last = toolOutputs(requests.at(-1));
    expect(last[0]).toContain("[output elided to save context");
    expect(last.at(-1)).not.toContain("[output elided");
  });

  it("answers unknown tools and invalid input with an error the model can read", async () => {
    const { model, requests } = scriptedModel([
      {
        toolCalls: [
          { name: "rm_rf", input: {} },
          { name: "read_file", input: { startLine: "x" } },
        ],
      },
      { text: "ok" },
    ]);
    const result = await runSession({
      root,
      task: "t",
      config: testConfig(root, env),
      env,
      model,
      lsp: null,
    });
    expect(result.outcome.status).toBe("done");
    const outputs = toolOutputs(requests[1]).join("\n");
    expect(outputs).toMatch(/no tool rm_rf|rm_rf/);
    expect(outputs).toMatch(/invalid input for read_file|path/);
  });
});
