import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { runningEngine } from "../../src/engine/client.js";
import { type CliOutcome, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { startServe, stopEngines } from "../helpers/engine.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

// Each lint may wait up to two minutes for a language server on a loaded machine.
vi.setConfig({ testTimeout: 900_000 });

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

interface Case {
  args: string[];
  input?: string;
  /** The engine's API does not take these parameters: the command does the work itself. */
  direct?: boolean;
}

/** `umbra ARGS` with the engine forced off, and as it runs by default (through the engine when one runs). */
function both(c: Case, normalize: (outcome: CliOutcome) => CliOutcome = (o) => o) {
  const direct = umbraSync({ ...env, UMBRA_ENGINE: "off" }, c.args, c.input);
  const served = umbraSync(env, c.args, c.input);
  return { direct: normalize(direct), served: normalize(served) };
}

function calls(): number {
  const status = umbraSync(env, ["serve", "--status", "--json"]);
  return (JSON.parse(status.stdout) as { calls: number }).calls;
}

/** ripgrep prints the files it searched in parallel in any order: the same lines, in order. */
const sortedLines = (o: CliOutcome): CliOutcome => ({
  ...o,
  stdout: o.stdout.startsWith("[")
    ? JSON.stringify(
        (JSON.parse(o.stdout) as { path: string; line: number }[]).sort(
          (a, b) => a.path.localeCompare(b.path) || a.line - b.line,
        ),
      )
    : o.stdout.split("\n").sort().join("\n"),
});

/** How long a lint took is all that may differ (a warm server answers sooner). */
const withoutTimes = (o: CliOutcome): CliOutcome => ({
  ...o,
  stdout: o.stdout.replace(/, \d+ ms\)/g, ", N ms)").replace(/"elapsedMs": [\d.]+/g, '"elapsedMs": N'),
});

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("engine-cli-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await stopEngines(env);
  await cleanup(home, join(root, ".."));
});

describe("the CLI with a running engine", () => {
  it("searches, greps and reports status as it does without one: the same output and exit statuses", async () => {
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    const bare = await tempDir("bare");
    await writeFile(join(bare, "a.ts"), "export const a = 1;\n");
    await startServe(env);
    // the engine opens the index on its first search and syncs it once: after that it holds still
    const warm = await runningEngine({ name: "test", env });
    await warm?.call("search", { root, query: "invoice" });
    await waitUntil(async () => (await warm?.call("status", { root }))?.index.syncing === false, "the sync");
    await warm?.close();
    const before = calls();

    const cases: Case[] = [
      { args: ["search", "--root", root, "parse", "money", "amount"] },
      { args: ["search", "--root", root, "--json", "--limit", "3", "total"] },
      { args: ["search", "--root", root, "--json", "--lang", "python", "total"] },
      { args: ["search", "--root", root, "--path", "billing/**", "total"] },
      { args: ["search", "-", "--root", root], input: 'File "inventory/stock.py", line 27, in reserve\n' },
      { args: ["search", "--root", root, "--limit", "500", "total"], direct: true },
      { args: ["search", "--root", bare, "anything"] },
      { args: ["status", "--root", root] },
      { args: ["status", "--root", root, "--json"] },
      { args: ["status", "--root", bare, "--json"] },
    ];
    const grepCases: Case[] = [
      { args: ["grep", "OutOfStock", "--root", root] },
      { args: ["grep", "-i", "--json", "outofstock", "--root", root] },
      { args: ["grep", "-F", "(", "--root", root] },
      { args: ["grep", "no-such-text-anywhere", "--root", root] },
      { args: ["grep", "(", "--root", root] },
    ];
    const outcomes = [...cases.map((c) => both(c)), ...grepCases.map((c) => both(c, sortedLines))];
    for (const { direct, served } of outcomes) expect(served).toEqual(direct);
    expect(outcomes.map(({ served }) => served.code)).toEqual([0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1, 1]);
    expect(outcomes[6]?.served.stderr).toMatch(/no index yet/);
    // every case went through the engine, but the one its API does not take
    const served = [...cases, ...grepCases].filter((c) => !c.direct).length;
    expect(calls() - before).toBe(served);
    await cleanup(bare);
  });

  it("lints as it does without one: the same diagnostics, marks and exit statuses", async () => {
    // a loaded machine may take far longer than the defaults to settle a lint
    await mkdir(join(home, "config", "umbra"), { recursive: true });
    await writeFile(
      join(home, "config", "umbra", "config.json"),
      JSON.stringify({ lsp: { requestTimeoutMs: 90_000, lintTimeoutMs: 100_000 } }),
    );
    const original = await readFile(join(root, "billing", "invoice.ts"), "utf8");
    const edited = original.replace(
      "return item.unitPrice.cents * item.quantity;",
      'return "x" + item.unitPrice.cents * item.quantity;',
    );
    expect(edited).not.toBe(original);
    await writeFile(join(root, ".umbraignore"), "secret.ts\n");
    await writeFile(join(root, "secret.ts"), "const token: number = 'TOKEN-VALUE';\n");
    await startServe(env);
    const before = calls();

    const cases: Case[] = [
      { args: ["lint", "billing/invoice.ts", "--root", root] },
      { args: ["lint", "billing/invoice.ts", "--root", root, "--content", "-"], input: edited },
      { args: ["lint", "billing/invoice.ts", "--root", root, "--content", "-", "--json"], input: edited },
      { args: ["lint", "README.md", "--root", root] },
      { args: ["lint", "secret.ts", "--root", root] },
    ];
    const outcomes = cases.map((c) => both(c, withoutTimes));
    for (const { direct, served } of outcomes) expect(served).toEqual(direct);
    expect(outcomes.map(({ served }) => served.code)).toEqual([0, 1, 1, 2, 2]);
    expect(outcomes[1]?.served.stdout).toMatch(/\[introduced\]/);
    expect(calls() - before).toBe(cases.length);
    // a file that is not there is the command's own error: the engine is not asked
    const missing = both({ args: ["lint", "billing/nothing.ts", "--root", root] });
    expect(missing.served).toEqual(missing.direct);
    expect(missing.served.code).toBe(2);
    expect(calls() - before).toBe(cases.length);
  });
});
