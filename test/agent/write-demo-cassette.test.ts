import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../fakes/fake-openai.js";
import { cleanup, copyExamples, EXAMPLES } from "../helpers/workspace.js";
import { EXAMPLES_TEST_COMMAND, FIX_RESERVE_SCRIPT, FIX_RESERVE_TASK } from "./fix-reserve-script.js";
import { testEnv } from "./helpers.js";

/**
 * Regenerates examples/cassettes/fix-reserve.snap, the cassette `umbra demo` replays: the built CLI runs
 * the hand-written FIX_RESERVE_SCRIPT against the fake server with --record, and the header is marked as
 * hand-written. Run with UMBRA_WRITE_DEMO_CASSETTE=1 after changing examples/ or the agent's prompts.
 */
const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
export const DEMO_CASSETTE = join(EXAMPLES, "cassettes", "fix-reserve.snap");
export const DEMO_NOTE =
  "hand-written, not a recording of a real model: the model's answers were written by hand (test/agent/fix-reserve-script.ts) and recorded from umbra's fake OpenAI-compatible server";

describe.skipIf(!process.env.UMBRA_WRITE_DEMO_CASSETTE)("demo cassette", () => {
  it("is regenerated", async () => {
    const server = await startFakeOpenAI(FIX_RESERVE_SCRIPT);
    const { home, env } = await testEnv();
    const root = await copyExamples();
    await cleanup(join(root, "cassettes"));
    try {
      const child = await new Promise<number | null>((resolve) => {
        const run = spawn(
          process.execPath,
          [
            CLI,
            "agent",
            FIX_RESERVE_TASK,
            "--root",
            root,
            "--json",
            "--test-command",
            EXAMPLES_TEST_COMMAND,
            "--record",
            DEMO_CASSETTE,
          ],
          { env: { ...env, UMBRA_MODEL_BASE_URL: server.url, UMBRA_MODEL: "fake-model" }, stdio: "inherit" },
        );
        run.on("close", resolve);
      });
      expect(child).toBe(0);
      const lines = readFileSync(DEMO_CASSETTE, "utf8").trim().split("\n");
      const header = JSON.parse(lines[0] ?? "{}") as Record<string, unknown>;
      const marked = { ...header, note: DEMO_NOTE, baseUrl: "http://127.0.0.1/v1", recordedAt: undefined };
      writeFileSync(DEMO_CASSETTE, `${[JSON.stringify(marked), ...lines.slice(1)].join("\n")}\n`);
    } finally {
      await server.close();
      await cleanup(home, join(root, ".."));
    }
  }, 90_000);
});
