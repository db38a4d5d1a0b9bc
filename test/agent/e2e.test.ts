import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { confirmTestCommand } from "../../src/config/trust.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/fake-openai.js";
import { cleanup, copyExamples, EXAMPLES, fingerprint } from "../helpers/workspace.js";

import { EXAMPLES_TEST_COMMAND, FIX_RESERVE_SCRIPT, FIX_RESERVE_TASK } from "./fix-reserve-script.js";
import { testEnv, toolOutputs } from "./helpers.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
let server: FakeOpenAI | undefined;

/** Runs the built CLI asynchronously (the fake server lives in this process). */
function umbra(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error("dist/ is missing: run `npm run build` first");
});
beforeEach(async () => {
  ({ home, env } = await testEnv());
  root = await copyExamples();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanup(home, join(root, ".."));
});

describe("umbra agent (built CLI, fake OpenAI-compatible server)", () => {
  it("fixes a bug end to end: search, read, failing test, lint feedback, fix, passing test, diff, apply, tests", async () => {
    server = await startFakeOpenAI(FIX_RESERVE_SCRIPT);
    env = { ...env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model", UMBRA_MODEL_API_KEY: "k" };
    const before = await fingerprint(root);
    const cassette = join(home, "run.jsonl");
    const run = await umbra([
      "agent",
      FIX_RESERVE_TASK,
      "--root",
      root,
      "--yes",
      "--json",
      "--test-command",
      EXAMPLES_TEST_COMMAND,
      "--record",
      cassette,
    ]);
    expect(run.stderr).toMatch(
      /✓ search_code "reserve stock OutOfStock on hand" — 3 hits, first inventory\/stock\.py/,
    );
    expect(run.stderr).toMatch(/✗ run_command python3 -B -m doctest inventory\/stock\.py — .*exit status 1/);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as {
      session: string;
      diff: string;
      applied: boolean;
      tests: { passed: boolean };
      usage: { inputTokens: number; outputTokens: number };
    };
    expect(out.applied).toBe(true);
    expect(out.tests.passed).toBe(true);
    expect(out.usage).toMatchObject({ inputTokens: 13_300, outputTokens: 290 });
    expect(out.diff).toContain("-        if self.available(sku) <= quantity:");
    expect(out.diff).toContain("+        if self.available(sku) < quantity:");

    // what the model was told along the way
    const outputs = toolOutputs(server.requests.at(-1));
    expect(outputs[0]).toMatch(/^inventory\/stock\.py:\d+-\d+/);
    expect(outputs[1]).toContain("if self.available(sku) <= quantity:");
    expect(outputs[2]).toContain("exit status 1");
    expect(outputs[2]).toContain('File "inventory/stock.py"');
    expect(outputs[3]).toMatch(/Lints: problems introduced.*\n.*inventory\/stock\.py:\d+:\d+: error.*wanted/);
    expect(outputs[4]).toContain("Lints: no new problems");
    expect(outputs[5]).toContain("exit status 0");
    expect(outputs.join("\n")).not.toContain(root);

    // applied to the folder, and only that change
    const after = await readFile(join(root, "inventory", "stock.py"), "utf8");
    expect(after).toContain("if self.available(sku) < quantity:");
    expect(await fingerprint(root)).not.toBe(before);

    // the transcript, listed by umbra sessions
    const sessions = await umbra(["sessions", "--root", root, "--json"]);
    const listed = JSON.parse(sessions.stdout) as {
      id: string;
      status: string;
      applied: boolean;
      toolCalls: number;
    }[];
    expect(listed[0]).toMatchObject({ id: out.session, status: "done", applied: true, toolCalls: 6 });

    // the cassette replays with no model, strictly, to the same diff
    await server.close();
    server = undefined;
    const fresh = await copyExamples();
    try {
      const replay = await umbra([
        "agent",
        FIX_RESERVE_TASK,
        "--root",
        fresh,
        "--json",
        "--test-command",
        EXAMPLES_TEST_COMMAND,
        "--replay",
        cassette,
        "--strict",
      ]);
      expect(replay.code, replay.stderr).toBe(0);
      const replayed = JSON.parse(replay.stdout) as { diff: string; applied: boolean };
      expect(replayed.applied).toBe(false);
      expect(replayed.diff).toBe(out.diff);
    } finally {
      await cleanup(join(fresh, ".."));
    }
  });
});

describe("a repository's own test command", () => {
  it("runs in the user's folder after an accept only once the user confirmed it for this repository", async () => {
    const marker = "ran-by-repo";
    await mkdir(join(root, ".umbra"), { recursive: true });
    await writeFile(
      join(root, ".umbra", "config.json"),
      JSON.stringify({ agent: { testCommand: `touch ${marker}` } }),
    );
    const agentRun = async () => {
      server = await startFakeOpenAI(FIX_RESERVE_SCRIPT);
      env = { ...env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model", UMBRA_MODEL_API_KEY: "k" };
      const run = await umbra(["agent", FIX_RESERVE_TASK, "--root", root, "--yes"]);
      await server.close();
      server = undefined;
      return run;
    };
    const unconfirmed = await agentRun();
    expect(unconfirmed.code, unconfirmed.stderr).toBe(0);
    expect(unconfirmed.stderr).toMatch(/not running the repository's test command "touch ran-by-repo"/);
    expect(existsSync(join(root, marker))).toBe(false);
    // the user confirms it once (as on a terminal); the next accept in this repository runs it
    await writeFile(
      join(root, "inventory", "stock.py"),
      await readFile(join(EXAMPLES, "inventory", "stock.py")),
    );
    confirmTestCommand(await realpath(root), `touch ${marker}`, env);
    const confirmed = await agentRun();
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(existsSync(join(root, marker))).toBe(true);
  }, 180_000);
});

describe("umbra agent --parallel and usage errors", () => {
  it("runs N agents, each in its own branch, prints each diff and applies nothing", async () => {
    server = await startFakeOpenAI((request) =>
      request.messages.some((m) => m.role === "tool")
        ? { text: "done" }
        : {
            toolCalls: [
              {
                name: "edit",
                input: { path: "billing/tax.ts", search: "  books: 7,", replace: "  books: 5," },
              },
            ],
          },
    );
    env = { ...env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model" };
    const before = await fingerprint(root);
    const run = await umbra(["agent", "books VAT 5%", "--root", root, "--parallel", "2", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { sessions: { session: string; diff: string }[]; applied: boolean };
    expect(out.sessions).toHaveLength(2);
    expect(new Set(out.sessions.map((s) => s.session)).size).toBe(2);
    for (const s of out.sessions) expect(s.diff).toContain("+  books: 5,");
    expect(out.applied).toBe(false);
    expect(await fingerprint(root)).toBe(before);
  });

  it("accepts parallel agents one after the other: two edits of the same line give a conflict, never the last one's", async () => {
    let calls = 0;
    server = await startFakeOpenAI((request) => {
      if (request.messages.some((m) => m.role === "tool")) return { text: "done" };
      calls++;
      const replace = calls === 1 ? "  books: 5," : "  books: 6,";
      return {
        toolCalls: [{ name: "edit", input: { path: "billing/tax.ts", search: "  books: 7,", replace } }],
      };
    });
    env = { ...env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model" };
    const run = await umbra(["agent", "books VAT", "--root", root, "--parallel", "2", "--yes", "--json"]);
    // the second accept conflicts: the command says so
    expect(run.code, run.stderr).toBe(1);
    const out = JSON.parse(run.stdout) as {
      sessions: { applied: boolean; conflicts: { path: string }[] }[];
    };
    const [first, second] = out.sessions;
    expect(first?.applied).toBe(true);
    expect(second?.applied).toBe(false);
    expect(second?.conflicts.map((c) => c.path)).toEqual(["billing/tax.ts"]);
    const text = await readFile(join(root, "billing", "tax.ts"), "utf8");
    // exactly the first agent's edit, and no conflict markers
    expect([text.includes("  books: 5,"), text.includes("  books: 6,")].filter(Boolean)).toHaveLength(1);
    expect(text).not.toContain("<<<<<<<");
  });

  it("rejects bad usage with exit status 2", async () => {
    expect((await umbra(["agent", "x", "--root", root, "--record", "a", "--replay", "b"])).code).toBe(2);
    expect((await umbra(["agent", "x", "--root", root, "--parallel", "0"])).code).toBe(2);
    expect((await umbra(["agent", "--root", root])).code).toBe(2);
    const noSession = await umbra(["agent", "--root", root, "--resume", "no-such-session"]);
    expect(noSession.code).toBe(2);
    expect(noSession.stderr).toMatch(/no session no-such-session/);
    const unconfigured = await umbra(["agent", "x", "--root", root]);
    expect(unconfigured.code).toBe(2);
    expect(unconfigured.stderr).toMatch(/no model configured/);
    const none = await umbra(["sessions", "--root", root]);
    expect(none.stdout).toMatch(/no agent sessions/);
  });
});
