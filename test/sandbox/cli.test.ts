/**
 * `umbra run` end to end (the built CLI and the real helper): network approvals that a workspace grants
 * itself are ignored, a denied socket gets the network note, full-access works on a workspace under /tmp.
 */
import { mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliOutcome, requireBuiltCli, umbraAsync } from "../helpers/cli.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { ensureHelper } from "./helpers.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

interface RunJson {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  notes: { rule: string; blocked: string; escalation: string; message: string }[];
}

function umbra(args: string[]): Promise<CliOutcome> {
  return umbraAsync(env, args);
}

beforeAll(async () => {
  requireBuiltCli();
  ensureHelper();
  home = await tempDir("sbx-cli-home");
  // Under the OS temp folder (/tmp): the sandbox's private /tmp must not hide it.
  root = await realpath(await tempDir("sbx-cli-ws"));
  await writeFile(join(root, "a.txt"), "hello\n");
  env = {
    ...process.env,
    UMBRA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    UMBRA_ADMIN_POLICY: join(home, "no-admin-policy.json"),
  };
});

afterAll(async () => {
  await cleanup(home, root);
});

describe("sandbox.network.allowCommands", () => {
  const script = ["sh", "-c", "echo ran"];

  it("is ignored, with one warning, when the workspace's own config sets it", async () => {
    await mkdir(join(root, ".umbra"), { recursive: true });
    await writeFile(
      join(root, ".umbra", "config.json"),
      JSON.stringify({ sandbox: { network: { allowCommands: ["sh", "sh *", "*"] } } }),
    );
    try {
      const run = await umbra(["run", "--root", root, "--net", "--", ...script]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/no terminal to ask on/);
      const warnings = run.stderr.split("\n").filter((line) => line.includes("is ignored"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/sandbox\.network\.allowCommands in .*\.umbra\/config\.json is ignored/);
    } finally {
      await cleanup(join(root, ".umbra"));
    }
  });

  it("approves the command when the user's own config sets it", async () => {
    const userFile = join(home, "config", "umbra", "config.json");
    await mkdir(join(home, "config", "umbra"), { recursive: true });
    await writeFile(userFile, JSON.stringify({ sandbox: { network: { allowCommands: ["sh *"] } } }));
    try {
      const run = await umbra(["run", "--root", root, "--net", "--", ...script]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe("ran\n");
      expect(run.stderr).not.toContain("is ignored");
    } finally {
      await cleanup(userFile);
    }
  });
});

describe("network off", () => {
  it("explains a refused python3 socket.socket() (AF_INET) with the network note", async () => {
    const run = await umbra([
      "run",
      "--root",
      root,
      "--json",
      "--",
      "python3",
      "-c",
      "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_STREAM)\nprint('opened')",
    ]);
    const result = JSON.parse(run.stdout) as RunJson;
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).not.toContain("opened");
    expect(result.stderr).toMatch(/PermissionError|Operation not permitted/);
    const note = result.notes.find((n) => n.rule === "network");
    expect(note?.blocked).toMatch(/AF_INET/);
    expect(note?.message).toMatch(/blocks network access.*umbra run --net/);
  });
});

describe("--full-access", () => {
  it("runs in and writes a workspace under /tmp", async () => {
    const run = await umbra([
      "run",
      "--root",
      root,
      "--full-access",
      "--",
      "sh",
      "-c",
      "pwd; cat a.txt; echo made > made.txt",
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${root}\nhello\n`);
    expect(await readFile(join(root, "made.txt"), "utf8")).toBe("made\n");
    await cleanup(join(root, "made.txt"));
  });
});
