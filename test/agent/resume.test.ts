import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSession } from "../../src/agent/run.js";
import { SessionNotFoundError, SessionWriter, sessionsDir } from "../../src/agent/session.js";
import { fork, listBranches } from "../../src/shadow/index.js";
import type { ChatRequest } from "../fakes/fake-openai.js";
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

/** The user message the model got first in a session. */
function firstUserText(requests: readonly ChatRequest[]): string {
  const message = requests[0]?.messages.find((m) => m.role === "user");
  return typeof message?.content === "string" ? message.content : JSON.stringify(message?.content);
}

describe("resuming a session", () => {
  it("continues from the changes a finished session ended with, with a briefing of what it did", async () => {
    const before = await fingerprint(root);
    const first = scriptedModel([
      {
        toolCalls: [
          { name: "edit", input: { path: "billing/tax.ts", search: "  food: 7,", replace: "  food: 5," } },
        ],
      },
      { toolCalls: [{ name: "list_files", input: { path: "billing" } }] },
    ]);
    const stopped = await runSession({
      root,
      task: "lower food VAT to 5% and books to 0%",
      config: testConfig(root, env, { maxSteps: 2 }),
      env,
      model: first.model,
      lsp: null,
    });
    expect(stopped.outcome.status).toBe("max-steps");

    const second = scriptedModel([
      {
        toolCalls: [
          { name: "edit", input: { path: "billing/tax.ts", search: "  books: 7,", replace: "  books: 0," } },
        ],
      },
      { text: "Food is at 5% and books at 0%." },
    ]);
    const resumed = await runSession({
      root,
      task: "",
      config: testConfig(root, env),
      env,
      model: second.model,
      lsp: null,
      resume: stopped.session,
    });
    expect(resumed.outcome.status).toBe("done");
    const briefing = firstUserText(second.requests);
    expect(briefing).toContain("lower food VAT to 5% and books to 0%");
    expect(briefing).toContain(`continues session ${stopped.session}`);
    expect(briefing).toContain('It stopped with status "max-steps"');
    expect(briefing).toMatch(/edit .*billing\/tax\.ts.* -> ok/);
    // Both sessions' edits are in the final diff; the user's folder is still untouched.
    expect(resumed.diff).toContain("+  food: 5,");
    expect(resumed.diff).toContain("+  books: 0,");
    expect(await fingerprint(root)).toBe(before);
  });

  it("reopens the branch a crashed session left on disk, with what its processes wrote", async () => {
    const before = await fingerprint(root);
    const branch = await fork(root, { env });
    branch.write("billing/tax.ts", "export const RATES = { standard: 19 };\n");
    await branch.materialize();
    await branch.close();
    const id = "20261130-000000Z-abcdef";
    new SessionWriter(id, sessionsDir(root, env)).write({
      type: "session",
      id,
      task: "simplify the VAT table",
      root,
      model: "scripted",
      startedAt: new Date().toISOString(),
      branch: branch.id,
    });
    const { model, requests } = scriptedModel([{ text: "The table is simplified." }]);
    const resumed = await runSession({
      root,
      task: "",
      config: testConfig(root, env),
      env,
      model,
      lsp: null,
      resume: id,
    });
    expect(firstUserText(requests)).toContain("It was interrupted before it finished.");
    expect(resumed.diff).toContain("+export const RATES = { standard: 19 };");
    // the resumed session continued in that very branch, and keeps it for the accept
    expect(resumed.branch).toBe(branch.id);
    expect((await listBranches(root, { env })).map((info) => info.id)).toEqual([branch.id]);
    expect(await fingerprint(root)).toBe(before);
  });

  it("says clearly when there is no such session", async () => {
    const { model } = scriptedModel([{ text: "unused" }]);
    await expect(
      runSession({ root, task: "", config: testConfig(root, env), env, model, lsp: null, resume: "nope" }),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});
