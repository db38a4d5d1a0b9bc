import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import { Engine } from "../engine/engine.js";
import { EngineError } from "../engine/errors.js";
import { type EnginePlace, enginePlace, privateEngineDir } from "../engine/place.js";
import { holdServeLock, listenEngine } from "../engine/server.js";
import { SocketEngine } from "../engine/socket-client.js";
import { type HttpApi, serveHttpApi } from "../http/server.js";
import { errorCode } from "../workspace/errors.js";
import { UsageError } from "./errors.js";
import { commandRoot } from "./root.js";
import { printJson } from "./shared.js";

interface ServeFlags {
  idleMinutes?: number;
  http?: boolean;
  port?: number;
  root?: string[];
  stop?: boolean;
  status?: boolean;
  json?: boolean;
}

function parseIdleMinutes(value: string): number {
  const minutes = Number(value);
  if (value.trim() === "" || !Number.isFinite(minutes) || minutes < 0 || minutes > 1_000_000)
    throw new UsageError(`--idle-minutes must be a number from 0 to 1000000, got ${value}`);
  return minutes;
}

function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${s}s` : `${s}s`;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535, got ${value}`);
  return port;
}

/** The HTTP API, with the workspaces given open (it serves the open ones); then its URL is printed, first. */
async function startHttp(engine: Engine, port: number, roots: string[]): Promise<HttpApi> {
  const http = await serveHttpApi({
    engine,
    port,
    log: (line) => void process.stderr.write(`umbra: ${line}\n`),
  });
  const opener = engine.connect("serve --http", {
    approveNetwork: async () => false,
    confirmAccept: async () => false,
  });
  try {
    for (const root of roots) await engine.call(opener, "status", { root });
  } catch (error) {
    await http.close();
    throw error;
  } finally {
    engine.disconnect(opener);
  }
  process.stdout.write(`${http.url}\n`);
  return http;
}

interface HttpWish {
  port: number;
  roots: string[];
}

/** Runs the engine in this process until a signal, `umbra serve --stop`, or idle. */
async function serve(
  place: EnginePlace,
  env: NodeJS.ProcessEnv,
  idleMinutes: number,
  httpWish: HttpWish | undefined,
): Promise<void> {
  privateEngineDir(place, env, true);
  const release = await holdServeLock(place);
  try {
    const engine = new Engine({
      env,
      onWarning: (message) => void process.stderr.write(`umbra: ${message}\n`),
    });
    const server = await listenEngine(engine, { place, idleMs: idleMinutes * 60_000 }).catch(
      async (error: unknown) => {
        await engine.close();
        throw error;
      },
    );
    const http = httpWish
      ? await startHttp(engine, httpWish.port, httpWish.roots).catch(async (error: unknown) => {
          await server.stop("error");
          await engine.close();
          throw error;
        })
      : undefined;
    const onSignal = () => {
      void server.stop("signal");
      process.once("SIGINT", () => process.exit(130));
    };
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, onSignal);
    process.stderr.write(
      `umbra: engine ${process.pid} listening on ${place.socket}` +
        `${idleMinutes > 0 ? ` (stops after ${idleMinutes} idle minute(s))` : ""}\n`,
    );
    const reason = await server.stopped;
    await http?.close();
    await engine.close();
    process.stderr.write(`umbra: engine ${process.pid} stopped (${reason})\n`);
  } finally {
    release();
  }
}

async function status(place: EnginePlace, env: NodeJS.ProcessEnv, json: boolean): Promise<void> {
  const engine = await SocketEngine.connect(place, env);
  if (!engine) {
    if (json) printJson({ running: false, socket: place.socket });
    else process.stdout.write("no engine running\n");
    process.exitCode = 1;
    return;
  }
  try {
    const info = await engine.info();
    if (json) return printJson({ running: true, socket: place.socket, ...info });
    process.stdout.write(
      `engine running: pid ${info.pid}, ${info.clients} client(s), ${info.calls} call(s), up ${duration(info.uptimeSeconds)}` +
        `${info.idleMinutes > 0 ? `, stops after ${info.idleMinutes} idle minute(s)` : ""}\n` +
        `socket ${place.socket}\n`,
    );
  } finally {
    await engine.close();
  }
}

/** Whether `pid` still runs (an exited process its parent has not reaped yet does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return process.platform !== "linux";
  }
}

/** How long `--stop` waits for the engine to close its servers and exit (a bound for a hang). */
const STOP_TIMEOUT_MS = 120_000;

async function stop(place: EnginePlace, env: NodeJS.ProcessEnv): Promise<void> {
  const engine = await SocketEngine.connect(place, env);
  if (!engine) {
    process.stdout.write("no engine running\n");
    return;
  }
  const pid = await engine.stop().finally(() => engine.close());
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new EngineError("INTERNAL", `the engine (pid ${pid}) did not stop`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.stdout.write(`stopped the engine (pid ${pid})\n`);
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description(
      "run the engine in the foreground: it keeps indexes fresh and language servers warm for every client (the CLI, umbra mcp), over a unix socket in the data directory; stops on SIGINT/SIGTERM or when idle",
    )
    .option(
      "--idle-minutes <n>",
      "stop after N minutes with no client connected and no request (0: never; default engine.idleMinutes, 30)",
      parseIdleMinutes,
    )
    .option(
      "--http",
      "also serve the HTTP API on 127.0.0.1 (never another address); the first line printed is the URL to open, holding this start's token",
    )
    .option("--port <n>", "with --http: the port (default 0: a free one)", parsePort)
    .option(
      "--root <dir...>",
      "with --http: workspaces to open at start (default: the current one); the API serves every workspace the engine has open",
    )
    .option("--stop", "stop the running engine (waits until it has exited)")
    .option("--status", "say whether an engine runs: pid, clients, uptime (exit 1 when none runs)")
    .option(
      "--json",
      "with --status: print {running, socket, pid, startedAt, clients, uptimeSeconds, calls, idleMinutes}",
    )
    .action(async (flags: ServeFlags) => {
      if (flags.stop && flags.status) throw new UsageError("--stop and --status exclude each other");
      if (!flags.http && (flags.port !== undefined || flags.root !== undefined))
        throw new UsageError("--port and --root need --http");
      const env = process.env;
      const place = enginePlace(env);
      if (flags.status) return status(place, env, flags.json === true);
      if (flags.stop) return stop(place, env);
      // the user's own configuration: the engine serves every workspace, none of them may tune it
      const idleMinutes = flags.idleMinutes ?? loadConfig({ env }).engine.idleMinutes;
      const roots = flags.http
        ? await Promise.all((flags.root ?? [undefined]).map((dir) => commandRoot(dir, env)))
        : [];
      await serve(place, env, idleMinutes, flags.http ? { port: flags.port ?? 0, roots } : undefined);
    });
}
