import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentContext, createToolContext } from "../../src/agent/context.js";
import {
  applyPatchTool,
  definitionTool,
  editTool,
  lintsTool,
  listFilesTool,
  readFileTool,
  referencesTool,
  runCommandTool,
  searchCodeTool,
} from "../../src/agent/tools/index.js";
import { type AgentTool, cleanPath, type ToolResult } from "../../src/agent/tools/types.js";
import { alwaysApprove } from "../../src/sandbox/index.js";
import { type Branch, fork } from "../../src/shadow/index.js";
import { cleanup, copyExamples, fingerprint } from "../helpers/workspace.js";
import { testConfig, testEnv } from "./helpers.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
let branch: Branch;
let context: AgentContext;
let before: string;

async function call(tool: AgentTool, input: unknown, ctx: AgentContext = context): Promise<ToolResult> {
  return tool.run(tool.schema.parse(input), ctx);
}

beforeAll(async () => {
  ({ home, env } = await testEnv());
  root = await copyExamples();
  before = await fingerprint(root);
  branch = await fork(root, { env });
  context = createToolContext({ branch, root, config: testConfig(root, env), env });
});
afterAll(async () => {
  await context.close();
  await branch.discard();
  expect(await fingerprint(root)).toBe(before);
  await cleanup(home, join(root, ".."));
});

describe("agent tools (on a branch of examples/)", () => {
  it("list_files lists the tree, folders marked, without generated folders", async () => {
    const result = await call(listFilesTool, {});
    expect(result.output.split("\n")).toEqual(
      expect.arrayContaining(["billing/", "billing/money.ts", "inventory/stock.py", "server/main.go"]),
    );
    const shallow = await call(listFilesTool, { path: "billing", depth: 1 });
    expect(shallow.output).toBe("billing/invoice.ts\nbilling/money.ts\nbilling/tax.ts");
    expect((await call(listFilesTool, { path: "../etc" })).ok).toBe(false);
  });

  it("search_code indexes the workspace on first use and finds code", async () => {
    const result = await call(searchCodeTool, { query: "parse a money amount from a string", limit: 3 });
    expect(result.ok).toBe(true);
    expect(result.output.split("\n")[0]).toMatch(/^billing\/money\.ts:\d+-\d+/);
  });

  it("read_file numbers lines, reads ranges and says how to read the rest", async () => {
    const range = await call(readFileTool, { path: "billing/tax.ts", startLine: 2, endLine: 3 });
    expect(range.output).toBe(
      "billing/tax.ts (15 lines), lines 2-3:\n2| export const VAT_RATES: Record<string, number> = {\n3|   food: 7,",
    );
    branch.write("big.txt", Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n"));
    const big = await call(readFileTool, { path: "big.txt" });
    expect(big.output).toContain(" 400| line 400");
    expect(big.output).toContain("call read_file with startLine 401");
    branch.remove("big.txt");
    expect((await call(readFileTool, { path: "nope.ts" })).output).toContain("does not exist");
  });

  it("edit changes the branch only, reports the stage and lints; a miss returns the message", async () => {
    const edited = await call(editTool, {
      path: "billing/money.ts",
      search: "export function formatMoney(",
      replace: "export function renderMoney(",
    });
    expect(edited.ok).toBe(true);
    expect(edited.output).toMatch(/edited billing\/money\.ts lines \d+-\d+ \(match: \w+/);
    expect(edited.output).toMatch(/billing\/invoice\.ts:1:\d+: error .*formatMoney/);
    expect(edited.lintErrors).toBeGreaterThan(0);
    const lints = await call(lintsTool, {});
    expect(lints.output).toContain("formatMoney");
    const back = await call(editTool, {
      path: "billing/money.ts",
      search: "export function renderMoney(",
      replace: "export function formatMoney(",
    });
    expect(back.output).toContain("Lints: no new problems");
    const miss = await call(editTool, {
      path: "billing/money.ts",
      search: "function doesNotExist() {}",
      replace: "x",
    });
    expect(miss.ok).toBe(false);
    expect(miss.output).toContain("not-found");
    const created = await call(editTool, { path: "notes/new.md", search: "", replace: "# new\n" });
    expect(created.output).toContain("created notes/new.md");
    expect(await branch.readText("notes/new.md")).toBe("# new\n");
    branch.remove("notes");
  });

  it("apply_patch applies a unified diff all or nothing", async () => {
    const patch = [
      "--- a/billing/tax.ts",
      "+++ b/billing/tax.ts",
      "@@ -3,3 +3,3 @@",
      "   food: 7,",
      "-  books: 7,",
      "+  books: 5,",
      "   default: 19,",
      "",
    ].join("\n");
    const ok = await call(applyPatchTool, { patch });
    expect(ok.ok, ok.output).toBe(true);
    expect(await branch.readText("billing/tax.ts")).toContain("books: 5,");
    const bad = await call(applyPatchTool, {
      patch: `${patch.replace("books: 5", "books: 9").replace("-  books: 7,", "-  books: 8,")}--- a/billing/money.ts\n+++ b/billing/money.ts\n@@ -1,1 +1,1 @@\n-/** An amount of money in minor units (cents), never a float. */\n+/** Money. */\n`,
    });
    expect(bad.ok).toBe(false);
    expect(bad.output).toContain("nothing changed");
    expect(await branch.readText("billing/money.ts")).toContain("never a float");
    branch.revert("billing/tax.ts");
  });

  it("run_command runs sandboxed in the branch (sees edits, writes stay there); network needs approval", async () => {
    branch.write("inventory/extra.txt", "from the branch\n");
    const result = await call(runCommandTool, {
      command: "cat inventory/extra.txt && echo made > made.txt && pwd",
    });
    expect(result.ok).toBe(true);
    expect(result.output).toContain("from the branch");
    expect(result.output).toContain("exit status 0");
    expect(result.output).not.toContain(root);
    expect(await branch.readText("made.txt")).toBe("made\n");
    const failing = await call(runCommandTool, { command: "echo nope >&2; exit 3" });
    expect(failing).toMatchObject({ ok: false, commandFailed: true });
    expect(failing.output).toContain("exit status 3");
    const denied = await call(runCommandTool, { command: "true", network: true, reason: "download" });
    expect(denied.output).toContain("not approved");
    const protectedWrite = await call(runCommandTool, { command: "echo x >> .gitignore" });
    expect(protectedWrite.ok).toBe(false);
    expect(protectedWrite.output).toMatch(/sandbox: .*\.gitignore/);
    branch.remove("made.txt");
    branch.remove("inventory/extra.txt");
  });

  it("run_command with an approver gets the network flag through", async () => {
    const approving = createToolContext({
      branch,
      root,
      config: testConfig(root, env),
      env,
      approver: alwaysApprove(),
      lsp: null,
    });
    const result = await call(runCommandTool, { command: "true", network: true }, approving);
    expect(result.ok).toBe(true);
  });

  it("definition and references come from the language server", async () => {
    const definition = await call(definitionTool, {
      path: "billing/invoice.ts",
      line: 1,
      symbol: "formatMoney",
    });
    expect(definition.output).toMatch(/^billing\/money\.ts:\d+:\d+ +export function formatMoney/);
    const references = await call(referencesTool, {
      path: "billing/money.ts",
      line: 26,
      symbol: "formatMoney",
    });
    expect(references.output).toContain("billing/invoice.ts");
    const missing = await call(definitionTool, {
      path: "billing/invoice.ts",
      line: 1,
      symbol: "nothingHere",
    });
    expect(missing.ok).toBe(false);
  });
});

describe("cleanPath", () => {
  it("normalizes the model's paths, a hostile one at once", () => {
    expect(cleanPath("./src//a.ts", "/ws")).toBe("src//a.ts");
    expect(cleanPath("/ws/src/", "/ws")).toBe("src");
    expect(cleanPath("src///", "/ws")).toBe("src");
    expect(cleanPath("./", "/ws")).toBe("");
    expect(cleanPath("../x", "/ws")).toBeUndefined();
    // Trailing slashes were looked for from every slash of a long run inside the path: seconds.
    const path = `a${"/".repeat(200_000)}b`;
    expect(cleanPath(path, "/ws")).toBe(path);
  }, 10_000);
});
