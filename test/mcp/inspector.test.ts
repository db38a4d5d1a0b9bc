import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli } from "../helpers/cli.js";
import { gitFixture, isolatedEnv, TOOL_NAMES } from "../helpers/mcp.js";
import { scaled } from "../helpers/wait.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";

/**
 * A client nobody here wrote: the MCP Inspector (pinned dev dependency) in CLI mode lists the tools of
 * `umbra mcp` on a small git repository and calls each of them, one Inspector (and one `umbra mcp`) a
 * call, as a user trying the server out would. It declares no elicitation: network and accepts are denied.
 */

const INSPECTOR = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "mcp-inspector");

interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

let home: string;
let root: string;

/** `mcp-inspector --cli node dist/cli/main.js mcp --root ROOT --method METHOD ...`: its JSON answer. */
function inspect(method: string, extra: string[] = []): Promise<unknown> {
  const args = [
    INSPECTOR,
    "--cli",
    process.execPath,
    CLI,
    "mcp",
    "--root",
    root,
    "--method",
    method,
    ...extra,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { env: isolatedEnv(home), encoding: "utf8", timeout: scaled(120_000), maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`mcp-inspector ${method} ${extra.join(" ")} failed: ${stderr}`));
        resolve(JSON.parse(stdout));
      },
    );
  });
}

/** tools/call of `name` with `key=value` arguments (the Inspector reads each value as JSON when it can). */
async function call(name: string, args: Record<string, string | number | boolean> = {}) {
  const pairs = Object.entries(args).map(([key, value]) => `${key}=${value}`);
  const result = (await inspect("tools/call", [
    "--tool-name",
    name,
    ...(pairs.length > 0 ? ["--tool-arg", ...pairs] : []),
  ])) as ToolResult;
  const text = result.content.map((part) => part.text ?? "").join("\n");
  return { text, data: result.structuredContent ?? {}, isError: result.isError === true };
}

beforeAll(async () => {
  requireBuiltCli();
  home = await tempDir("mcp-inspector-home");
  root = await gitFixture();
});
afterAll(async () => {
  await cleanup(home, join(root, ".."));
});

describe("umbra mcp under the MCP Inspector", () => {
  it("lists the tools with their input schemas", async () => {
    const { tools } = (await inspect("tools/list")) as {
      tools: { name: string; description: string; inputSchema: { properties?: Record<string, unknown> } }[];
    };
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(60);
      expect(tool.inputSchema.properties ?? {}).not.toHaveProperty("root");
    }
  });

  it("calls each tool on a real repository", async () => {
    const before = await fingerprint(root);
    const seen = new Set<string>();
    const tool = async (name: string, args: Record<string, string | number | boolean> = {}) => {
      seen.add(name);
      const result = await call(name, args);
      return result;
    };

    expect((await tool("read_file", { path: "math.ts" })).text).toMatch(/1\| export function add/);
    expect((await tool("list_files")).text).toMatch(/use\.ts/);
    expect((await tool("grep", { pattern: "add\\(" })).text).toMatch(/use\.ts:3:/);
    const search = await tool("search", { query: "add two numbers" });
    expect(search.isError).toBe(false);
    expect(search.text).toMatch(/math\.ts:1-3/);
    expect((await tool("status")).text).toMatch(/index: \d+ files/);
    expect((await tool("definition", { path: "use.ts", line: 3, symbol: "add" })).text).toMatch(
      /math\.ts:1:/,
    );
    expect((await tool("references", { path: "math.ts", line: 1, symbol: "add" })).text).toMatch(
      /use\.ts:3:/,
    );
    expect((await tool("hover", { path: "math.ts", line: 1, symbol: "add" })).text).toMatch(/function add/);
    expect((await tool("document_symbols", { path: "math.ts" })).text).toMatch(/function add/);

    const made = await tool("branch_create", { label: "inspector" });
    const branch = String(made.data.id);
    expect((await tool("branch_list")).text).toContain(branch);
    const edit = await tool("edit", {
      branch,
      path: "math.ts",
      search: "return a + b;",
      replace: "return a - b;",
    });
    expect(edit).toMatchObject({ isError: false, data: { changed: ["math.ts"] } });
    const written = await tool("write_file", {
      branch,
      path: "extra.ts",
      content: "export const one: number = 1;\n",
    });
    expect(written.isError).toBe(false);
    const patch =
      "--- a/extra.ts\n+++ b/extra.ts\n@@ -1 +1 @@\n-export const one: number = 1;\n+export const one: string = 1;\n";
    const patched = await tool("apply_patch", { branch, patch });
    expect(patched.isError).toBe(false);
    const lints = await tool("lints", { branch });
    expect(lints.data.errors).toBe(1);
    expect(lints.text).toMatch(/extra\.ts:1:/);
    const run = await tool("run", { branch, command: "cat math.ts" });
    expect(run.data).toMatchObject({ ran: true, exitCode: 0 });
    expect(run.text).toMatch(/return a - b;/);
    const net = await tool("run", { branch, command: "echo online", network: true, reason: "to test" });
    expect(net).toMatchObject({ isError: true, data: { ran: false } });
    expect((await tool("diff", { branch })).text).toMatch(/\+ {2}return a - b;/);
    expect((await tool("rebase", { branch })).isError).toBe(false);
    const accept = await tool("accept", { branch });
    expect(accept.data).toMatchObject({ confirmed: false, written: false });
    expect(await fingerprint(root)).toBe(before);
    expect((await tool("branch_discard", { branch })).data).toEqual({ discarded: branch });

    expect([...seen].sort()).toEqual(TOOL_NAMES);
  });
});
