/**
 * The judge's scenario: what an agent does over MCP, scripted through a real `umbra mcp` process (the
 * SDK's client over stdio): search → read_file → branch_create → edit (lints reported, by the real
 * `tsc --lsp`) → run the tests (they fail) → edit → run (they pass) → diff → accept, confirmed by the
 * user through elicitation. The user's folder is byte-identical (every file, mode, link and mtime) until
 * the accept, except for the edit the user makes to another line of the same file during the session;
 * after the accept it holds exactly the three-way merge of the two.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup } from "../helpers/workspace.js";
import { REAL_SERVER_TEST_TIMEOUTS, writeTree } from "../lsp/helpers.js";
import { fingerprintTree, McpClient, stopEngine, testPlace } from "./helpers.js";

const CALC = `// @ts-check
// calc: small arithmetic helpers
export const VERSION = "1.0.0";

/**
 * The sum of the values.
 * @param {number[]} values
 * @returns {number}
 */
export function total(values) {
  let sum = 0;
  for (const value of values) sum += value;
  return sum - 1;
}
`;

const TEST = `import assert from "node:assert";
import { total } from "../src/calc.js";

assert.strictEqual(total([1, 2, 3]), 6);
console.log("calc tests ok");
`;

let base: string;
let root: string;
let env: NodeJS.ProcessEnv;
let mcp: McpClient | undefined;

beforeAll(async () => {
  requireBuiltCli();
  ({ base, root, env } = await testPlace("mcp-session"));
  const tsconfig = {
    compilerOptions: {
      strict: true,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
    },
    include: ["src", "test"],
  };
  await writeTree(root, {
    "package.json": `${JSON.stringify({ name: "calc", type: "module", private: true })}\n`,
    "tsconfig.json": `${JSON.stringify(tsconfig)}\n`,
    "src/calc.js": CALC,
    "test/calc.test.mjs": TEST,
    "README.md": "# calc\n\n`total(values)` sums numbers.\n",
  });
  const indexed = umbraSync(env, ["index", root]);
  expect(indexed.code, indexed.stderr).toBe(0);
});

afterAll(async () => {
  await mcp?.close();
  await stopEngine(env);
  await cleanup(base);
});

describe("a scripted agent session over MCP", () => {
  it(
    "search → read → branch → edit (lints) → run (fails) → edit → run (passes) → diff → accept",
    async () => {
      const before = await fingerprintTree(root);
      const agent = await McpClient.open({ root, env, elicit: "accept", name: "scripted-agent" });
      mcp = agent;
      const unchanged = async (expected: string[], step: string) =>
        expect(await fingerprintTree(root), `the user's folder changed at: ${step}`).toEqual(expected);

      const search = await agent.ok("search", { query: "sum of the values total", limit: 5 });
      expect(search.hits.map((hit) => hit.path)).toContain("src/calc.js");
      await unchanged(before, "search");

      const read = await agent.ok("read_file", { path: "src/calc.js" });
      expect(read.text).toContain("return sum - 1;");
      expect(read.text).toContain('VERSION = "1.0.0"');

      const branch = await agent.ok("branch_create", { label: "fix total" });
      expect(branch.id).toMatch(/\S/);
      expect((await agent.ok("branch_list")).branches.map((b) => b.id)).toContain(branch.id);

      const edit = (search: string, replace: string) =>
        agent.ok("edit", { branch: branch.id, path: "src/calc.js", search, replace });
      // a wrong first attempt: a name that does not exist (tsc: 2304), and the test still fails
      const wrong = await edit("  return sum - 1;", "  return sum - offset();");
      expect(wrong.ok, wrong.text).toBe(true);
      expect(wrong.changed).toEqual(["src/calc.js"]);
      // the edit's own answer reports the lints it introduced
      expect(wrong.lintErrors ?? 0, wrong.text).toBeGreaterThan(0);
      expect(wrong.text).toContain("offset");
      const lints = await agent.ok("lints", { branch: branch.id });
      expect(lints.introduced.map((d) => [d.path, d.line, d.code])).toEqual([["src/calc.js", 13, "2304"]]);
      expect(lints.errors).toBe(1);
      await unchanged(before, "edit and lints");

      const failing = await agent.ok("run", { branch: branch.id, command: "node test/calc.test.mjs" });
      expect(failing.ran).toBe(true);
      expect(failing.exitCode, failing.text).not.toBe(0);
      expect(failing.stderr).toMatch(/offset is not defined/);
      await unchanged(before, "the failing test run");

      // the user edits another line of the same file meanwhile, in their own folder
      const userCalc = CALC.replace('VERSION = "1.0.0"', 'VERSION = "1.1.0"');
      writeFileSync(join(root, "src", "calc.js"), userCalc);
      const withUserEdit = await fingerprintTree(root);

      const fixed = await edit("  return sum - offset();", "  return sum;");
      expect(fixed.ok, fixed.text).toBe(true);
      expect(fixed.lintErrors ?? 0, fixed.text).toBe(0);
      const clean = await agent.ok("lints", { branch: branch.id });
      expect(clean.introduced).toEqual([]);
      expect(clean.errors).toBe(0);

      const passing = await agent.ok("run", { branch: branch.id, command: "node test/calc.test.mjs" });
      expect(passing.exitCode, passing.text).toBe(0);
      expect(passing.stdout).toContain("calc tests ok");
      await unchanged(withUserEdit, "the passing test run");

      const diff = await agent.ok("diff", { branch: branch.id });
      expect(diff.files).toEqual([{ path: "src/calc.js", kind: expect.any(String) }]);
      expect(diff.diff).toContain("-  return sum - 1;");
      expect(diff.diff).toContain("+  return sum;");
      expect(diff.diff).not.toContain("offset");
      // base → branch: the user's own edit is not the agent's
      expect(diff.diff).not.toContain("1.1.0");
      expect(diff.unknownBases).toEqual([]);
      await unchanged(withUserEdit, "diff");
      expect(agent.elicitations).toEqual([]);

      const accepted = await agent.ok("accept", { branch: branch.id });
      expect(accepted.confirmed).toBe(true);
      expect(accepted.written).toBe(true);
      expect(accepted.applied).toEqual(["src/calc.js"]);
      expect(accepted.conflicts).toEqual([]);
      expect(accepted.refused).toEqual([]);
      // the user was asked once, and shown what would be written
      expect(agent.elicitations).toHaveLength(1);
      expect(JSON.stringify(agent.elicitations[0])).toContain("src/calc.js");

      // exactly the merge: the user's line and the agent's fix; nothing else changed, nothing added
      expect(readFileSync(join(root, "src", "calc.js"), "utf8")).toBe(
        userCalc.replace("  return sum - 1;", "  return sum;"),
      );
      const after = await fingerprintTree(root);
      const isCalc = (line: string) => line.startsWith("f src/calc.js ");
      expect(after.filter((line) => !isCalc(line))).toEqual(withUserEdit.filter((line) => !isCalc(line)));
      // the merged file keeps its mode and is one file (kind, path, mode, link count)
      const head = (lines: string[]) => lines.filter(isCalc).map((line) => line.split(" ").slice(0, 4));
      expect(head(after)).toEqual(head(withUserEdit));
      if (accepted.discarded)
        expect((await agent.ok("branch_list")).branches.map((b) => b.id)).not.toContain(branch.id);
    },
    REAL_SERVER_TEST_TIMEOUTS.testTimeout,
  );
});
