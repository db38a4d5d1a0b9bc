import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { stopEngines } from "../helpers/engine.js";
import { gitFixture, isolatedEnv } from "../helpers/mcp.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, tempDir } from "../helpers/workspace.js";
import { body, raw } from "./client.js";

// `umbra serve --http` as a user starts it: the first line is the URL to open, the listener is on
// 127.0.0.1 only, and the workspace given is served.

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;
let child: ChildProcess;
let stdout = "";

beforeAll(async () => {
  requireBuiltCli();
  home = await tempDir("http-serve");
  root = await gitFixture();
  env = isolatedEnv(home);
  child = spawn(process.execPath, [CLI, "serve", "--http", "--root", root], {
    env,
    stdio: ["ignore", "pipe", "ignore"],
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await waitUntil(
    () => stdout.includes("\n") || child.exitCode !== null,
    "umbra serve --http to print its URL",
  );
});

afterAll(async () => {
  if (env) await stopEngines(env);
  await cleanup(home, root ? join(root, "..") : undefined);
});

/** The local addresses of the TCP sockets listening on `port` (IPv4 and IPv6), as /proc/net shows them. */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const found: string[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      // state 0A: LISTEN
      if (state === "0A" && local?.endsWith(`:${hexPort}`)) found.push(local);
    }
  }
  return found;
}

function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

describe("umbra serve --http", () => {
  it("prints the URL with a fresh token first, listens on 127.0.0.1 only, and serves the workspace", async () => {
    const first = stdout.split("\n")[0] ?? "";
    const match = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]{43})$/.exec(first);
    expect(match, first).not.toBeNull();
    const port = Number(match?.[1]);
    const token = match?.[2] ?? "";
    // 127.0.0.1 in /proc/net/tcp's byte order, and nothing on any other address (0.0.0.0, ::, ::1)
    expect(listeners(port)).toEqual([`0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`]);
    expect(await refused("127.0.0.2", port)).toBe(true);
    const list = await raw(port, "GET", "/api/workspaces", { authorization: `Bearer ${token}` });
    expect(list.status).toBe(200);
    expect(body<{ workspaces: { root: string }[] }>(list).workspaces.map((w) => w.root)).toEqual([root]);
    // the socket front end still serves the CLI beside it
    expect(umbraSync(env, ["serve", "--status"]).code).toBe(0);
  });

  it("refuses --port and --root without --http, and a port that is no port: exit 2, one line", () => {
    for (const [args, words] of [
      [["--port", "8080"], "--port and --root need --http"],
      [["--root", root], "--port and --root need --http"],
      [["--http", "--port", "http"], "--port must be a number from 0 to 65535, got http"],
      [["--http", "--port", "70000"], "--port must be a number from 0 to 65535, got 70000"],
    ] as const) {
      const outcome = umbraSync(env, ["serve", ...args]);
      expect(outcome.code, args.join(" ")).toBe(2);
      expect(outcome.stderr).toContain(words);
      expect(outcome.stderr.trim().split("\n")).toHaveLength(1);
      expect(outcome.stdout).toBe("");
    }
  });
});
