import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { workspaceDir } from "../../src/config/paths.js";
import { indexLayout } from "../../src/index/layout.js";
import { CLI, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

const FILES = 600;
let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
const USER_CONFIG = () => join(home, "config", "umbra", "config.json");
/** Generous: each test indexes a workspace twice on a loaded machine. */
const RERUN_TIMEOUT_MS = 240_000;

beforeAll(requireBuiltCli);
beforeEach(async () => {
  home = await tempDir("interrupt-home");
  root = join(await tempDir("interrupt-ws"), "project");
  // Small batches (a user setting), so that the first run is many commits long.
  await mkdir(join(home, "config", "umbra"), { recursive: true });
  await writeFile(
    join(home, "config", "umbra", "config.json"),
    JSON.stringify({ index: { filesPerBatch: 3 } }),
  );
  for (let d = 0; d < FILES / 100; d++) {
    await mkdir(join(root, `pkg${d}`), { recursive: true });
    for (let i = 0; i < 100; i++) {
      const body = Array.from(
        { length: 8 },
        (_, j) => `    total_${j} = amount_${d}_${i} * rate_${j} + ${j}`,
      );
      await writeFile(
        join(root, `pkg${d}`, `mod${i}.py`),
        `def compute_${d}_${i}(amount_${d}_${i}, rate):\n${body.join("\n")}\n    return total_0\n`,
      );
    }
  }
  env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

/** Files committed to the index so far, read beside the running indexer; 0 before its store exists. */
function committedFiles(): number {
  const file = indexLayout(workspaceDir(root, env)).lexical;
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM files").get() as { n: number }).n;
  } catch {
    return 0; // created but no schema yet
  } finally {
    db.close();
  }
}

async function waitFor(condition: () => boolean, child: ChildProcess): Promise<void> {
  while (!condition()) {
    if (child.exitCode !== null) throw new Error("umbra index finished before the condition was met");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts `umbra index`, sends SIGINT once `ready` holds, and returns its exit code and stderr. */
async function interruptIndex(ready: () => boolean): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, "index", root], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (data: Buffer) => {
    stderr += data.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await waitFor(ready, child);
  child.kill("SIGINT");
  return { code: await exited, stderr };
}

const MESSAGE =
  /^umbra: indexing interrupted (?:before any file was saved \((?:the index is empty|the index holds (\d+) files?)\); the next `umbra index` starts over|after saving (\d+) of (\d+) files \(the index holds (\d+) files?\); the next `umbra index` resumes with the rest)$/m;

function status(): { files: number } {
  const out = umbraSync(env, ["status", "--root", root, "--json"]);
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as { files: number };
}

describe("Ctrl-C during umbra index", () => {
  it(
    "after some batches: says exactly how many files are saved, and the next run indexes the rest",
    async () => {
      const { code, stderr } = await interruptIndex(() => committedFiles() > 0);
      expect(code).toBe(130);
      const match = MESSAGE.exec(stderr);
      expect(match, stderr).not.toBeNull();
      const [, , saved, total, holds] = match ?? [];
      expect(Number(total)).toBe(FILES);
      expect(Number(saved)).toBeGreaterThan(0);
      expect(Number(saved)).toBeLessThan(FILES);
      expect(Number(holds)).toBe(Number(saved));
      expect(status().files).toBe(Number(saved));

      await rm(USER_CONFIG());
      const rerun = umbraSync(env, ["index", root, "--json"]);
      expect(rerun.code).toBe(0);
      const report = JSON.parse(rerun.stdout) as { files: number; changes: { added: number } };
      expect(report.files).toBe(FILES);
      expect(report.changes.added).toBe(FILES - Number(saved));
      expect(status().files).toBe(FILES);
    },
    RERUN_TIMEOUT_MS,
  );

  it(
    "as soon as it starts: what it says is what status finds, and the next run completes",
    async () => {
      const store = () => existsSync(indexLayout(workspaceDir(root, env)).lexical);
      const { code, stderr } = await interruptIndex(store);
      expect(code).toBe(130);
      const match = MESSAGE.exec(stderr);
      expect(match, stderr).not.toBeNull();
      const [, emptyHolds, saved, , holds] = match ?? [];
      expect(status().files).toBe(Number(saved ?? 0) > 0 ? Number(holds) : Number(emptyHolds ?? 0));

      await rm(USER_CONFIG());
      const rerun = umbraSync(env, ["index", root, "--json"]);
      expect(rerun.code).toBe(0);
      expect((JSON.parse(rerun.stdout) as { files: number }).files).toBe(FILES);
    },
    RERUN_TIMEOUT_MS,
  );
});
