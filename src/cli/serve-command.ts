import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import { Engine } from "../engine/engine.js";
import { EngineError } from "../engine/errors.js";
import { type EnginePlace, enginePlace, privateEngineDir } from "../engine/place.js";
import { holdServeLock, listenEngine } from "../engine/server.js";
import { SocketEngine } from "../engine/socket-client.js";
import { errorCode } from "../workspace/errors.js";
import { UsageError } from "./errors.js";
import { printJson } from "./shared.js";

interface ServeFlags {
  idleMinutes?: number;
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

/** Runs the engine in this process until a signal, `umbra serve --stop`, or idle. */
async function serve(place: EnginePlace, env: NodeJS.ProcessEnv, idleMinutes: number): Promise<void> {
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
    const onSignal = () => {
      void server.stop("signal");
      process.once("SIGINT", () => process.exit(130));
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    process.stderr.write(
      `umbra: engine ${process.pid} listening on ${place.socket}` +
        `${idleMinutes > 0 ? ` (stops after ${idleMinutes} idle minute(s))` : ""}\n`,
    );
    const reason = await server.stopped;
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
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
    .option("--stop", "stop the running engine (waits until it has exited)")
    .option("--status", "say whether an engine runs: pid, clients, uptime (exit 1 when none runs)")
    .option(
      "--json",
      "with --status: print {running, socket, pid, startedAt, clients, uptimeSeconds, calls, idleMinutes}",
    )
    .action(async (flags: ServeFlags) => {
      if (flags.stop && flags.status) throw new UsageError("--stop and --status exclude each other");
      const env = process.env;
      const place = enginePlace(env);
      if (flags.status) return status(place, env, flags.json === true);
      if (flags.stop) return stop(place, env);
      // the user's own configuration: the engine serves every workspace, none of them may tune it
      const idleMinutes = flags.idleMinutes ?? loadConfig({ env }).engine.idleMinutes;
      await serve(place, env, idleMinutes);
    });
}
