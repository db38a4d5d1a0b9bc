import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, lstatSync } from "node:fs";
import { mkdir, symlink, unlink } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Caller, CallOptions, ClientHooks, Progress } from "../../src/engine/api.js";
import { openEngine } from "../../src/engine/client.js";
import { EngineError } from "../../src/engine/errors.js";
import { enginePlace, MAX_SOCKET_PATH_BYTES, privateEngineDir } from "../../src/engine/place.js";
import { type EngineCore, type EngineServer, holdServeLock, listenEngine } from "../../src/engine/server.js";
import { SocketEngine } from "../../src/engine/socket-client.js";
import { engineFailure as failure, NO_HOOKS } from "../helpers/engine.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

/**
 * A stand-in for the engine, to test the socket alone: `search` echoes its parameters and the caller's
 * name, `status` fails with the error its parameters name, `grep` throws a plain error, `run` asks the
 * client about the network and `accept` asks it to confirm, each answering what the client said.
 */
class FakeCore implements EngineCore {
  readonly startedAt = new Date().toISOString();
  readonly callers = new Map<string, Caller>();

  connect(name: string, hooks: ClientHooks): Caller {
    const caller = { id: randomUUID(), name, hooks };
    this.callers.set(caller.id, caller);
    return caller;
  }

  disconnect(caller: Caller): void {
    this.callers.delete(caller.id);
  }

  get clientCount(): number {
    return this.callers.size;
  }

  /** Agent sessions the fake runs (the tests set it), and how often the server looked. */
  sessions = 0;
  sessionChecks = 0;

  get runningSessions(): number {
    this.sessionChecks++;
    return this.sessions;
  }

  /** Calls of `rebase` waiting for their signal, and those whose signal came. */
  waiting = 0;
  aborted = 0;

  readonly call = (async (
    caller: Caller,
    name: string,
    params: unknown,
    options: CallOptions = {},
  ): Promise<unknown> => {
    const p = params as Record<string, unknown>;
    switch (name) {
      case "diff":
        options.onProgress?.({ message: "one", done: 1, total: 2 });
        options.onProgress?.({ message: "two", done: 2, total: 2 });
        return { diff: "" };
      case "rebase":
        this.waiting++;
        await new Promise((resolve) => options.signal?.addEventListener("abort", resolve));
        this.aborted++;
        throw new EngineError("CANCELLED", "the request was cancelled");
      case "search":
        return { caller: caller.name, params };
      case "status":
        throw new EngineError(p.code as "NOT_FOUND", String(p.message));
      case "grep":
        throw new Error("something broke\nwith a second line");
      case "run":
        return {
          approved: (await caller.hooks.approveNetwork({ command: "curl x", branch: "b1" })) ?? "unasked",
        };
      case "accept":
        return {
          confirmed: await caller.hooks.confirmAccept({ branch: "b1", summary: "1 file", diffstat: [] }),
        };
      default:
        throw new EngineError("BAD_REQUEST", `no operation ${name}`);
    }
  }) as unknown as EngineCore["call"];
}

let home: string;
let env: NodeJS.ProcessEnv;
let core: FakeCore;
let server: EngineServer | undefined;
let release: (() => void) | undefined;

async function serve(idleMs = 0): Promise<EngineServer> {
  const place = enginePlace(env);
  privateEngineDir(place, env, true);
  release = await holdServeLock(place);
  server = await listenEngine(core, { place, idleMs });
  return server;
}

async function client(hooks?: ClientHooks, name = "test-client"): Promise<SocketEngine> {
  const engine = await SocketEngine.connect(enginePlace(env), env, { name, ...(hooks ? { hooks } : {}) });
  if (!engine) throw new Error("no engine");
  return engine;
}

/**
 * Writes `bytes` on a raw connection; resolves with what came back once the connection closed (after
 * the engine's first answer, when `answered`: the engine keeps a well-framed connection open).
 */
function raw(bytes: string, answered = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(enginePlace(env).socket);
    let got = "";
    socket.on("data", (data) => {
      got += data.toString("utf8");
      if (answered && /\r\n\r\n\{.*\}$/s.test(got)) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(got));
    socket.write(bytes);
  });
}

/** One message, framed as the protocol frames it. */
function frame(body: string): string {
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const exchange = (body: string) => raw(frame(body), true);

beforeEach(async () => {
  home = await tempDir("engine-home");
  env = { ...process.env, UMBRA_HOME: join(home, "data") };
  core = new FakeCore();
});
afterEach(async () => {
  await server?.stop("test over");
  release?.();
  server = undefined;
  release = undefined;
  await cleanup(home);
});

describe("the engine's socket", () => {
  it("is 0600 in a 0700 folder, and a client that said hello calls operations as itself", async () => {
    await serve();
    const place = enginePlace(env);
    expect(lstatSync(place.socket).mode & 0o777).toBe(0o600);
    expect(lstatSync(place.dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(place.lock).mode & 0o777).toBe(0o600);

    const engine = await client(undefined, "claude-code");
    await waitUntil(() => core.clientCount === 1, "the client to be connected");
    expect(await engine.call("search", { root: "/w", query: "q" })).toEqual({
      caller: "claude-code",
      params: { root: "/w", query: "q" },
    });
    const info = await engine.info();
    expect(info).toMatchObject({ pid: process.pid, clients: 1, calls: 1, startedAt: core.startedAt });
    await engine.close();
    await waitUntil(() => core.clientCount === 0, "the engine to let the client go");
  });

  it("carries the engine's errors as they are, and anything else as INTERNAL with its first line", async () => {
    await serve();
    const engine = await client();
    for (const code of ["NOT_FOUND", "REFUSED", "UNAVAILABLE", "BUSY", "BAD_REQUEST"] as const) {
      const error = await failure(
        engine.call("status", { code, message: `it is ${code}` } as unknown as { root: string }),
      );
      expect([error.code, error.message]).toEqual([code, `it is ${code}`]);
    }
    const internal = await failure(engine.call("grep", { root: "/w", pattern: "x" }));
    expect([internal.code, internal.message]).toEqual(["INTERNAL", "something broke"]);
    await engine.close();
    const closed = await failure(engine.call("search", { root: "/w", query: "q" }));
    expect(closed.code).toBe("NO_ENGINE");
  });

  it("asks the client that called back through its hooks; a client without hooks answers no", async () => {
    await serve();
    const asked: string[] = [];
    const yes: ClientHooks = {
      approveNetwork: async (question) => {
        asked.push(`network ${question.command}`);
        return true;
      },
      confirmAccept: async (question) => {
        asked.push(`accept ${question.branch}`);
        return true;
      },
    };
    const withHooks = await client(yes);
    const without = await client();
    expect(await withHooks.call("run", { root: "/w", branch: "b1", command: "curl x" })).toEqual({
      approved: true,
    });
    expect(await withHooks.call("accept", { root: "/w", branch: "b1" })).toEqual({ confirmed: true });
    expect(asked).toEqual(["network curl x", "accept b1"]);
    expect(await without.call("run", { root: "/w", branch: "b1", command: "curl x" })).toEqual({
      approved: false,
    });
    expect(await without.call("accept", { root: "/w", branch: "b1" })).toEqual({ confirmed: false });
    // a client that cannot ask its user says so, and the engine hears it (it may ask on the page)
    const mute = await client({ approveNetwork: async () => undefined, confirmAccept: async () => false });
    expect(await mute.call("run", { root: "/w", branch: "b1", command: "curl x" })).toEqual({
      approved: "unasked",
    });
    await withHooks.close();
    await without.close();
    await mute.close();
  });

  it("carries a call's progress back to its caller, and its cancellation to the engine", async () => {
    await serve();
    const engine = await client();
    const seen: Progress[] = [];
    expect(
      await engine.call("diff", { root: "/w", branch: "b" }, { onProgress: (p) => seen.push(p) }),
    ).toEqual({
      diff: "",
    });
    expect(seen.map((p) => `${p.message} ${p.done}/${p.total}`)).toEqual(["one 1/2", "two 2/2"]);

    const controller = new AbortController();
    const cancelled = failure(
      engine.call("rebase", { root: "/w", branch: "b" }, { signal: controller.signal }),
    );
    await waitUntil(() => core.waiting === 1, "the call to run");
    controller.abort();
    expect((await cancelled).code).toBe("CANCELLED");

    // a client that goes away stops what it was waiting for
    void engine.call("rebase", { root: "/w", branch: "b" }).catch(() => undefined);
    await waitUntil(() => core.waiting === 2, "the second call to run");
    await engine.close();
    await waitUntil(() => core.aborted === 2, "the engine to stop the call of a client gone");
  });

  it("drops a connection that breaks the framing, answers bad requests with errors, and goes on serving", async () => {
    await serve();
    // no Content-Length, a length that is no number, a header without end, a body over the limit
    expect(await raw("Hello: there\r\n\r\n{}")).toBe("");
    expect(await raw("Content-Length: many\r\n\r\n{}")).toBe("");
    expect(await raw(`X-Pad: ${"x".repeat(20_000)}`)).toBe("");
    expect(await raw("Content-Length: 99999999999\r\n\r\n{")).toBe("");
    expect(await raw("Content-Length: 1\r\nContent-Length: 2\r\n\r\n{}")).toBe("");
    expect(await raw("not a header at all\r\n\r\n")).toBe("");
    // framed, but no JSON, or JSON that is no message
    expect(await raw(frame("{not json"))).toBe("");
    const answers = [
      await exchange(
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "umbra/call", params: { name: "search" } }),
      ),
      await exchange(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "umbra/hello", params: { name: 7 } })),
      await exchange(
        JSON.stringify({ jsonrpc: "2.0", id: 3, method: "umbra/hello", params: { name: "x", protocol: 99 } }),
      ),
      await exchange(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "umbra/frobnicate" })),
      await exchange(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 5,
          method: "umbra/hello",
          params: [{ name: "x", protocol: 1 }, 2],
        }),
      ),
      await exchange(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "umbra/info" })),
    ];
    expect(answers[0]).toMatch(/say hello first/);
    expect(answers[1]).toMatch(/hello: expected \{name, protocol\}/);
    expect(answers[2]).toMatch(/this engine speaks protocol 1, the client 99/);
    expect(answers[3]).toMatch(/Unhandled method umbra\/frobnicate/);
    expect(answers[4]).toMatch(/the parameters must be one object/);
    expect(answers[5]).toMatch(/the parameters must be one object/);
    for (const body of ["null", "5", "[]", '{"jsonrpc":"2.0"}', '{"id":{"x":1},"method":7}']) {
      const socket = connect(enginePlace(env).socket);
      socket.write(frame(body));
      socket.end();
    }
    const engine = await client();
    expect(await engine.call("search", { root: "/w", query: "still here" })).toMatchObject({
      params: { query: "still here" },
    });
    // a call whose parameters are not {name, params}
    const bad = await failure(engine.call("" as "search", { root: "/w", query: "q" }));
    expect(bad.code).toBe("BAD_REQUEST");
    await engine.close();
    await waitUntil(() => core.clientCount === 0, "the engine to let the client go");
  });

  it("refuses a socket path longer than the kernel's 107 bytes with one line, on both sides", async () => {
    env = { ...process.env, UMBRA_HOME: join(home, "d".repeat(60), "e".repeat(60)) };
    const place = enginePlace(env);
    expect(Buffer.byteLength(place.socket)).toBeGreaterThan(MAX_SOCKET_PATH_BYTES);
    const why = `the engine's socket path ${place.socket} is longer than the 107 bytes a unix socket may have: set UMBRA_HOME to a shorter folder`;
    const listening = await failure(serve());
    expect([listening.code, listening.message]).toEqual(["UNAVAILABLE", why]);
    expect(existsSync(place.socket)).toBe(false);
    const connecting = await failure(client());
    expect([connecting.code, connecting.message]).toEqual(["NO_ENGINE", why]);
    const starting = await failure(openEngine({ name: "test", hooks: NO_HOOKS, env }));
    expect([starting.code, starting.message]).toEqual(["NO_ENGINE", why]);
  });

  it("refuses an engine folder that is a link or open to others, on both sides", async () => {
    const place = enginePlace(env);
    const elsewhere = join(home, "elsewhere");
    await mkdir(elsewhere, { mode: 0o700 });
    await mkdir(join(home, "data"), { mode: 0o700 });
    await symlink(elsewhere, place.dir);
    expect(() => privateEngineDir(place, env, true)).toThrow(/is not a folder/);
    expect(() => privateEngineDir(place, env, false)).toThrow(EngineError);

    // a socket that is there, in a folder others may enter: the client does not use it
    await unlink(place.dir);
    await serve();
    chmodSync(place.dir, 0o755);
    const error = await failure(client());
    expect([error.code, error.message]).toEqual([
      "NO_ENGINE",
      `${place.dir} is open to other users; umbra does not use it`,
    ]);
    chmodSync(place.dir, 0o700);
  });

  it("allows one server at a time, and stops when idle once its last client is gone", async () => {
    const running = await serve(100);
    await expect(holdServeLock(enginePlace(env))).rejects.toThrow(/an engine already runs \(pid \d+\)/);
    const engine = await client();
    await engine.call("search", { root: "/w", query: "q" });
    await engine.close();
    expect(await running.stopped).toBe("idle");
    expect(existsSync(enginePlace(env).socket)).toBe(false);
    expect(await SocketEngine.connect(enginePlace(env), env)).toBeUndefined();
  });

  it("does not stop for idleness while an agent session runs; the idle time counts from its end", async () => {
    core.sessions = 1;
    const running = await serve(100);
    let stopped = false;
    void running.stopped.then(() => {
      stopped = true;
    });
    // a check every 50 ms: twenty of them span ten idle times (no client, no request, but a session runs)
    await waitUntil(() => core.sessionChecks >= 20, "twenty idle checks");
    expect(stopped).toBe(false);
    core.sessions = 0;
    expect(await running.stopped).toBe("idle");
  });

  it("stops once its socket is gone (its data folder deleted): nobody could reach it any more", async () => {
    const running = await serve();
    await unlink(enginePlace(env).socket);
    expect(await running.stopped).toBe("its socket was removed");
  });

  it("stops when a client asks, and a client of a stopped engine gets NO_ENGINE", async () => {
    const running = await serve();
    const engine = await client();
    const other = await client();
    expect(await other.stop()).toBe(process.pid);
    expect(await running.stopped).toBe("asked");
    await waitUntil(async () => {
      const error = await failure(engine.call("search", { root: "/w", query: "q" }));
      return error.code === "NO_ENGINE";
    }, "the client to see the engine gone");
    await engine.close();
    await other.close();
  });
});
