/**
 * Ten MCP clients at once (ten `umbra mcp` processes, one engine), each in its own branch of one
 * workspace, edit, lint and run in a loop for UMBRA_MCP_SOAK_SECONDS (default 15): each writes a marker
 * of its own (MARK_<client>_<round>) into a shared file and a file of its own. No answer — read_file,
 * lints, run output, diff — may carry another client's marker; every call is answered; the engine is
 * alive at the end; every client's branch is still listed after its client disconnected; the user's
 * folder never changes. No timing is asserted: the loop runs at least one round per client, however
 * slow the machine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli } from "../helpers/cli.js";
import { scaled } from "../helpers/wait.js";
import { cleanup } from "../helpers/workspace.js";
import { writeTree } from "../lsp/helpers.js";
import { alive, fingerprintTree, McpClient, openAll, stopEngine, testPlace } from "./helpers.js";

const CLIENTS = 10;
const SOAK_SECONDS = Number(process.env.UMBRA_MCP_SOAK_SECONDS ?? "15");

let base: string;
let root: string;
let env: NodeJS.ProcessEnv;
const clients: McpClient[] = [];

beforeAll(async () => {
  requireBuiltCli();
  if (!Number.isFinite(SOAK_SECONDS) || SOAK_SECONDS < 0) throw new Error("UMBRA_MCP_SOAK_SECONDS: a number");
  ({ base, root, env } = await testPlace("mcp-concurrent"));
  const tsconfig = {
    compilerOptions: { strict: true, noEmit: true, target: "ES2022" },
    include: ["src", "own"],
  };
  await writeTree(root, {
    "tsconfig.json": `${JSON.stringify(tsconfig)}\n`,
    "src/shared.ts": 'export const shared: string = "BASE";\n',
    "own/README.md": "each client's own file lives here\n",
  });
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await stopEngine(env);
  await cleanup(base);
});

/** The clients whose markers `text` carries. */
function markersIn(text: string): Set<number> {
  return new Set([...text.matchAll(/MARK_(\d+)_\d+/g)].map((match) => Number(match[1])));
}

interface Tally {
  rounds: number;
  calls: number;
}

/** One client's loop; throws on the first answer that is missing, an error, or carries another's marker. */
async function work(client: McpClient, n: number, branch: string, until: number): Promise<Tally> {
  const tally: Tally = { rounds: 0, calls: 0 };
  const answer = async <T extends Parameters<McpClient["ok"]>[0]>(tool: T, args: Record<string, unknown>) => {
    tally.calls++;
    return client.ok(tool, { branch, ...args });
  };
  const onlyMine = (what: string, text: string, marker: string) => {
    const others = [...markersIn(text)].filter((other) => other !== n);
    expect(others, `client ${n}, ${what} carries the markers of clients ${others}: ${text}`).toEqual([]);
    expect(text, `client ${n}, ${what}: not this round's version`).toContain(marker);
  };
  do {
    const marker = `MARK_${n}_${tally.rounds}`;
    const shared = `export const shared: string = "${marker}";\n`;
    if (tally.rounds === 0) {
      const edited = await answer("edit", {
        path: "src/shared.ts",
        search: '"BASE"',
        replace: `"${marker}"`,
      });
      expect(edited.ok, edited.text).toBe(true);
    } else expect((await answer("write_file", { path: "src/shared.ts", content: shared })).ok).toBe(true);
    // an undefined name: tsc's message quotes it, so the lints show which version they linted
    const own = `export const mine: number = ${marker};\n`;
    expect((await answer("write_file", { path: `own/client-${n}.ts`, content: own })).ok).toBe(true);

    onlyMine("read_file", (await answer("read_file", { path: "src/shared.ts" })).text, marker);
    const lints = await answer("lints", {});
    onlyMine("lints", `${lints.text}\n${JSON.stringify(lints.introduced)}`, marker);
    const run = await answer("run", { command: "cat src/shared.ts own/*.ts; ls own" });
    expect(run.exitCode, run.text).toBe(0);
    onlyMine("run", run.stdout + run.stderr, marker);
    onlyMine("diff", (await answer("diff", {})).diff, marker);
    tally.rounds++;
  } while (Date.now() < until);
  return tally;
}

describe("ten MCP clients at once", () => {
  it(
    `each in its own branch, for ${SOAK_SECONDS} s: no answer carries another client's edits`,
    async () => {
      const before = await fingerprintTree(root);
      clients.push(
        ...(await openAll(Array.from({ length: CLIENTS }, (_, n) => ({ root, env, name: `agent-${n}` })))),
      );
      const branches = await Promise.all(
        clients.map(async (client, n) => (await client.ok("branch_create", { label: `agent-${n}` })).id),
      );
      expect(new Set(branches).size).toBe(CLIENTS);

      const until = Date.now() + SOAK_SECONDS * 1000;
      const started = Date.now();
      const outcomes = await Promise.allSettled(
        clients.map((client, n) => work(client, n, branches[n] ?? "", until)),
      );
      const seconds = (Date.now() - started) / 1000;
      const failures = outcomes.flatMap((outcome, n) =>
        outcome.status === "rejected"
          ? [`client ${n}: ${String(outcome.reason)}\n${clients[n]?.stderr}`]
          : [],
      );
      expect(failures).toEqual([]);

      const status = await clients[0]?.ok("status");
      expect(alive(status?.engine.pid)).toBe(true);
      for (const client of clients) expect(alive(client.pid)).toBe(true);
      const tallies = outcomes.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : undefined));
      const calls = tallies.reduce((sum, tally) => sum + (tally?.calls ?? 0), 0);
      const rounds = tallies.map((tally) => tally?.rounds ?? 0);
      console.log(
        `mcp soak: ${CLIENTS} clients, ${seconds.toFixed(1)} s, ${calls} calls answered (${(calls / seconds).toFixed(1)}/s), rounds per client ${rounds.join(" ")}, engine pid ${status?.engine.pid} rss ${Math.round((status?.engine.rssBytes ?? 0) / 2 ** 20)} MiB, clients seen by the engine ${status?.engine.clients}`,
      );

      // every client goes; their branches stay, listed to the next client
      await Promise.all(clients.splice(0).map((client) => client.close()));
      const later = await McpClient.open({ root, env, name: "later" });
      clients.push(later);
      const listed = (await later.ok("branch_list")).branches.map((branch) => branch.id);
      for (const branch of branches) expect(listed).toContain(branch);
      const one = branches[3] ?? "";
      expect((await later.ok("read_file", { branch: one, path: "own/client-3.ts" })).text).toMatch(/MARK_3_/);
      expect(await fingerprintTree(root)).toEqual(before);
    },
    scaled(900_000) + SOAK_SECONDS * 1000,
  );
});
