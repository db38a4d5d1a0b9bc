import { readdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { stopEngines } from "../helpers/engine.js";
import {
  type Answer,
  approve,
  callTool,
  gitFixture,
  isolatedEnv,
  MATH_TS,
  refuse,
  TOOL_NAMES,
  testClient,
} from "../helpers/mcp.js";
import { scaled, waitUntil } from "../helpers/wait.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";

/**
 * `umbra mcp` over stdio, as a client launches it (node dist/cli/main.js mcp, its own data folder),
 * driven by the SDK's own client: what an agent does through it, and what it may not do.
 */

let home: string;
let root: string;
const open: Client[] = [];

interface Connected {
  client: Client;
  questions: string[];
  errors: Error[];
  stderr: () => string;
}

async function connect(
  options: { answer?: Answer; args?: string[]; cwd?: string; roots?: string[] } = {},
): Promise<Connected> {
  const { client, questions } = testClient(options.answer, options.roots ? { roots: {} } : {});
  const roots = options.roots;
  if (roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((path) => ({ uri: pathToFileURL(path).href })),
    }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...(options.args ?? ["--root", root])],
    env: isolatedEnv(home),
    stderr: "pipe",
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const errors: Error[] = [];
  await client.connect(transport);
  // after connect, which sets its own handler: anything on stdout that is not the protocol lands here
  const own = transport.onerror;
  transport.onerror = (error) => {
    errors.push(error);
    own?.(error);
  };
  open.push(client);
  return { client, questions, errors, stderr: () => stderr };
}

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("mcp-stdio-home");
  root = await gitFixture();
  // a test the agent's change must make pass: mul adds instead of multiplying
  await writeFile(join(root, "package.json"), '{ "type": "module" }\n');
  await writeFile(join(root, "calc.js"), "export const mul = (a, b) => a + b;\n");
  await writeFile(
    join(root, "calc.test.js"),
    'import assert from "node:assert";\nimport { mul } from "./calc.js";\nassert.equal(mul(2, 3), 6);\nconsole.log("ok");\n',
  );
});
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
  await stopEngines(isolatedEnv(home));
  await cleanup(home, join(root, ".."));
});

describe("umbra mcp over stdio", () => {
  it("refuses at start a --root that does not exist", () => {
    const missing = umbraSync(isolatedEnv(home), ["mcp", "--root", join(root, "missing")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^umbra: workspace folder does not exist: .*missing\n$/);
    expect(missing.stdout).toBe("");
  });

  it("serves the 20 tools, and nothing but the protocol on stdout", async () => {
    const { client, errors, stderr } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOL_NAMES);
    expect(client.getInstructions()).toMatch(/never written except by an accept/);
    const status = await callTool(client, "status");
    expect(status.data.root).toBe(root);
    expect(errors).toEqual([]);
    expect(stderr()).toMatch(/workspace /);
  });

  it("does what an agent does: search, read, branch, edit, run, diff, accept; the folder changes only at the accept", async () => {
    const before = await fingerprint(root);
    const { client, questions } = await connect({ answer: approve });

    const found = await callTool(client, "search", { query: "mul multiply numbers" });
    expect(found.isError).toBe(false);
    expect((found.data.hits as { path: string }[]).map((hit) => hit.path)).toContain("calc.js");
    expect(found.data.intent).toBe("question");
    expect(found.text).toContain("query read as a question");
    expect((await callTool(client, "read_file", { path: "calc.js" })).text).toMatch(/1\| export const mul/);

    const made = await callTool(client, "branch_create", { label: "fix mul" });
    const branch = String(made.data.id);
    expect(made.text).toContain(branch);
    expect((await callTool(client, "branch_list")).text).toContain(branch);

    // an edit that breaks a caller's types: its lints say so
    const typed = await callTool(client, "edit", {
      branch,
      path: "math.ts",
      search: "export function add(a: number, b: number): number {",
      replace: "export function add(a: number, b: number): string {",
    });
    expect(typed.isError).toBe(false);
    expect(typed.data.changed).toEqual(["math.ts"]);
    expect(typed.text).toMatch(/error/i);
    const lints = await callTool(client, "lints", { branch });
    expect(lints.data.errors).toBeGreaterThan(0);
    expect(lints.text).toMatch(/math\.ts|use\.ts/);
    await callTool(client, "write_file", { branch, path: "math.ts", content: MATH_TS });
    expect((await callTool(client, "lints", { branch })).data.errors).toBe(0);

    const failing = await callTool(client, "run", { branch, command: "node calc.test.js" });
    expect(failing.data).toMatchObject({ ran: true, network: false });
    expect(failing.data.exitCode).not.toBe(0);
    await callTool(client, "edit", { branch, path: "calc.js", search: "a + b", replace: "a * b" });
    const passing = await callTool(client, "run", { branch, command: "node calc.test.js" });
    expect(passing.data).toMatchObject({ ran: true, exitCode: 0 });
    expect(passing.text).toMatch(/ok/);

    const diff = await callTool(client, "diff", { branch });
    expect(diff.text).toMatch(
      /-export const mul = \(a, b\) => a \+ b;\n\+export const mul = \(a, b\) => a \* b;/,
    );
    expect(diff.data.files).toEqual([{ path: "calc.js", kind: expect.any(String) }]);
    expect(await fingerprint(root)).toBe(before);

    const accepted = await callTool(client, "accept", { branch });
    expect(accepted.data).toMatchObject({ confirmed: true, written: true, applied: ["calc.js"] });
    expect(questions.at(-1)).toMatch(/calc\.js/);
    expect(await readFile(join(root, "calc.js"), "utf8")).toBe("export const mul = (a, b) => a * b;\n");
    expect(await readFile(join(root, "math.ts"), "utf8")).toBe(MATH_TS);
  });

  /** In a new branch with a change: a command that asks for network, then an accept. */
  async function askBoth(client: Client) {
    const branch = String((await callTool(client, "branch_create")).data.id);
    await callTool(client, "write_file", {
      branch,
      path: "calc.js",
      content: "export const mul = () => 0;\n",
    });
    const net = await callTool(client, "run", {
      branch,
      command: "echo fetched",
      network: true,
      reason: "download the packages",
    });
    return { branch, net, accept: await callTool(client, "accept", { branch }) };
  }

  it("asks the user for network and accepts, and takes no for an answer", async () => {
    const before = await fingerprint(root);
    const { client, questions } = await connect({ answer: refuse });
    const { net, accept } = await askBoth(client);
    expect(net).toMatchObject({ isError: true, data: { ran: false } });
    expect(questions[0]).toMatch(/echo fetched/);
    expect(questions[0]).toMatch(/download the packages/);
    expect(accept.data).toMatchObject({ confirmed: false, written: false });
    expect(questions).toHaveLength(2);
    expect(await fingerprint(root)).toBe(before);
  });

  it("denies network and accepts with a clear note when the client cannot ask", async () => {
    const before = await fingerprint(root);
    const { client } = await connect();
    const { branch, net, accept } = await askBoth(client);
    expect(net).toMatchObject({ isError: true, data: { ran: false } });
    expect(net.text).toMatch(/network/i);
    expect(accept.data).toMatchObject({ confirmed: false, written: false });
    expect(accept.text).toMatch(/^not accepted: /);
    // without network, the command runs (sandboxed, in the branch)
    const offline = await callTool(client, "run", { branch, command: "cat calc.js" });
    expect(offline.data).toMatchObject({ ran: true, exitCode: 0, stdout: "export const mul = () => 0;\n" });
    expect(await fingerprint(root)).toBe(before);
  });

  it("keeps hidden files from the agent and protected files read-only", async () => {
    const { client } = await connect();
    const secret = await callTool(client, "read_file", { path: ".env" });
    expect(secret.isError).toBe(true);
    expect(secret.text).not.toMatch(/hunter2/);
    expect((await callTool(client, "list_files")).text).not.toMatch(/\.env\b/);
    expect((await callTool(client, "grep", { pattern: "hunter2" })).data.matches).toEqual([]);
    const branch = String((await callTool(client, "branch_create")).data.id);
    const cat = await callTool(client, "run", { branch, command: "cat .env" });
    expect(cat.data.exitCode).not.toBe(0);
    expect(cat.text).not.toMatch(/hunter2/);
    const hook = await callTool(client, "write_file", {
      branch,
      path: ".git/hooks/pre-commit",
      content: "x",
    });
    expect(hook.isError).toBe(true);
    // what a branch does stays in it until discarded
    await callTool(client, "run", { branch, command: "touch made.txt" });
    expect((await callTool(client, "list_files", { branch })).text).toMatch(/made\.txt/);
    expect((await callTool(client, "list_files")).text).not.toMatch(/made\.txt/);
    expect((await callTool(client, "branch_discard", { branch })).data).toEqual({ discarded: branch });
    expect((await callTool(client, "branch_list")).data.branches).toEqual([]);
  });

  it("kills a command whose tool call the client cancels: the branch answers the next call", async () => {
    const { client } = await connect();
    const branch = String((await callTool(client, "branch_create")).data.id);
    const controller = new AbortController();
    const sleeping = client.callTool(
      { name: "run", arguments: { branch, command: "touch started; sleep 100000" } },
      undefined,
      { signal: controller.signal, timeout: scaled(600_000) },
    );
    // the branch answers nothing while the command runs: see its write in the branch's layer on disk
    const started = async () =>
      (await readdir(join(home, "data"), { recursive: true })).some(
        (path) => path.includes(branch) && basename(path) === "started",
      );
    await waitUntil(started, "the command to start", 120_000);
    controller.abort();
    await expect(sleeping).rejects.toThrow();
    // requests in one branch run one after the other: this one is answered only once the sleep is gone
    const next = await callTool(client, "run", { branch, command: "echo next" });
    expect(next.data).toMatchObject({ ran: true, exitCode: 0, stdout: "next\n" });
  });

  it("works in the client's root when no --root is given, and never in the home folder", async () => {
    const elsewhere = await tempDir("mcp-elsewhere");
    try {
      const { client } = await connect({ args: [], cwd: elsewhere, roots: [root] });
      expect((await callTool(client, "status")).data.root).toBe(root);
      const home = await connect({ args: [], cwd: elsewhere, roots: [process.env.HOME ?? "/"] });
      // the home folder is passed over: the current folder is the workspace
      expect((await callTool(home.client, "status")).data.root).not.toBe(process.env.HOME);
      expect(home.stderr()).toMatch(/client root passed over/);
    } finally {
      await cleanup(elsewhere);
    }
  });
});
