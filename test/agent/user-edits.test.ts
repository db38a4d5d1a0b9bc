import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSession } from "../../src/agent/run.js";
import { removeBranch } from "../../src/shadow/index.js";
import { cleanup, copyExamples } from "../helpers/workspace.js";
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

async function text(state: { kind: string; load?: () => Promise<Buffer> } | undefined) {
  return state?.kind === "file" && state.load ? (await state.load()).toString("utf8") : undefined;
}

describe("the user edits a file while the agent works on it", () => {
  it("merges the user's edit into the agent's branch and tells the agent, once", async () => {
    const tax = join(root, "billing", "tax.ts");
    const original = readFileSync(tax, "utf8");
    const userVersion = original.replace(
      "rounded half up to whole cents",
      "rounded half up (the user's words)",
    );
    const { model, requests } = scriptedModel((_request, n) => {
      if (n === 0)
        return {
          toolCalls: [
            { name: "edit", input: { path: "billing/tax.ts", search: "  food: 7,", replace: "  food: 5," } },
          ],
        };
      if (n === 1) {
        // the user saves their own edit of another line while the agent thinks
        writeFileSync(tax, userVersion);
        return { toolCalls: [{ name: "list_files", input: { path: "billing" } }] };
      }
      if (n === 2) return { toolCalls: [{ name: "read_file", input: { path: "billing/tax.ts" } }] };
      return { text: "done" };
    });
    const result = await runSession({
      root,
      task: "food VAT 5%",
      config: testConfig(root, env),
      env,
      model,
      lsp: null,
    });
    // the note follows the tool results of the step in which the user's edit was found, and only that one
    const notes = requests.map(
      (request) => toolOutputs(request).join("\n").split("Meanwhile the user changed").length - 1,
    );
    expect(notes[2]).toBe(1);
    expect(notes[3]).toBe(1);
    expect(toolOutputs(requests[2]).join("\n")).toContain("Meanwhile the user changed billing/tax.ts");
    // reading the file again, the agent sees both edits
    expect(toolOutputs(requests[3]).at(-1)).toMatch(/food: 5,[\s\S]*the user's words/);
    // what the agent did is still only its own line, now against the user's version
    const [change] = result.changes;
    expect(change?.path).toBe("billing/tax.ts");
    expect(await text(change?.base)).toBe(userVersion);
    expect(await text(change?.branch)).toBe(userVersion.replace("  food: 7,", "  food: 5,"));
    expect(result.diff).toContain("-  food: 7,\n+  food: 5,");
    expect(result.diff).not.toContain("user's words");
    expect(readFileSync(tax, "utf8")).toBe(userVersion);
    await removeBranch(root, result.branch, { env });
  });

  it("tells the agent when the user changed the same lines, and leaves both versions where they are", async () => {
    const tax = join(root, "billing", "tax.ts");
    const original = readFileSync(tax, "utf8");
    const userVersion = original.replace("  food: 7,", "  food: 6,");
    const { model, requests } = scriptedModel((_request, n) => {
      if (n === 0)
        return {
          toolCalls: [
            { name: "edit", input: { path: "billing/tax.ts", search: "  food: 7,", replace: "  food: 5," } },
          ],
        };
      if (n === 1) {
        writeFileSync(tax, userVersion);
        return { toolCalls: [{ name: "list_files", input: { path: "billing" } }] };
      }
      return { text: "done" };
    });
    const result = await runSession({
      root,
      task: "food VAT 5%",
      config: testConfig(root, env),
      env,
      model,
      lsp: null,
    });
    expect(toolOutputs(requests[2]).at(-1)).toContain(
      "The user also changed billing/tax.ts where you did (line 3)",
    );
    const [change] = result.changes;
    expect(await text(change?.base)).toBe(original);
    expect(await text(change?.branch)).toBe(original.replace("  food: 7,", "  food: 5,"));
    expect(readFileSync(tax, "utf8")).toBe(userVersion);
    await removeBranch(root, result.branch, { env });
  });
});
