import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Command } from "commander";
import { dataDir } from "../config/paths.js";
import { clientConfig, isMcpClient, MCP_CLIENTS } from "../mcp/client-config.js";
import { serveHttp } from "../mcp/http.js";
import { McpSession } from "../mcp/session.js";
import type { RootChoice } from "../mcp/workspace.js";
import { UsageError } from "./errors.js";
import { commandRoot } from "./root.js";

interface McpFlags {
  root?: string;
  http?: boolean;
  port?: string;
  tokenFile?: string;
  printConfig?: string;
}

const log = (line: string) => void process.stderr.write(`umbra mcp: ${line}\n`);

/** Resolves on the first SIGINT or SIGTERM, or when `also` does. */
function stopped(also?: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
    also?.then(resolve);
  });
}

/**
 * Standard output for the protocol only: the transport writes to the real stdout through its own stream,
 * and anything else this process would print there (a stray warning) goes to stderr instead.
 */
function protocolOutput(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout) as (
    chunk: Buffer | string,
    done: (error?: Error | null) => void,
  ) => boolean;
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  return new Writable({
    write: (chunk: Buffer, _encoding, done) => void write(chunk, (error) => done(error ?? null)),
  });
}

async function serveStdio(root: RootChoice): Promise<void> {
  const session = new McpSession({ root, env: process.env, log });
  const input = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  await session.connect(new StdioServerTransport(process.stdin, protocolOutput()));
  await stopped(input);
  await session.close();
}

async function serveOverHttp(root: RootChoice, flags: McpFlags): Promise<void> {
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number (0 to 65535), not ${flags.port}`);
  const http = await serveHttp({
    port,
    tokenFile: flags.tokenFile ?? join(dataDir(), "mcp", "http-{port}.token"),
    newSession: () => new McpSession({ root, env: process.env, log }),
    log,
  });
  log(`listening on ${http.url}`);
  log(`token ${http.token} (send it as Authorization: Bearer TOKEN; also in ${http.tokenFile}, 0600)`);
  await stopped();
  await http.close();
}

/** This installation's command line for `umbra mcp`: node and the absolute path of the CLI's entry point. */
function launch(): { command: string; args: string[] } {
  return { command: process.execPath, args: [fileURLToPath(new URL("./main.js", import.meta.url)), "mcp"] };
}

export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description(
      "serve umbra's tools (search, grep, files, branches, edits, lints, navigation, sandboxed runs, diff, " +
        "accept) to an MCP client: over stdio (what clients launch), or with --http over Streamable HTTP on " +
        "127.0.0.1 with a bearer token. The workspace is --root, else the client's first root, else the " +
        "enclosing repository of the current folder, fixed for the session.",
    )
    .option(
      "--root <dir>",
      "workspace folder (default: the client's first root, else as every command finds it)",
    )
    .option(
      "--http",
      "serve Streamable HTTP on 127.0.0.1 (a bearer token, printed on stderr) instead of stdio",
    )
    .option("--port <n>", "the HTTP port (default: a free one, printed on stderr)")
    .option(
      "--token-file <file>",
      "where the HTTP token is written, 0600 (default: DATA/mcp/http-PORT.token)",
    )
    .option("--print-config <client>", `print the setup for ${MCP_CLIENTS.join(", ")} and exit`)
    .action(async (flags: McpFlags) => {
      if (flags.printConfig !== undefined) {
        if (!isMcpClient(flags.printConfig))
          throw new UsageError(`unknown client ${flags.printConfig}: one of ${MCP_CLIENTS.join(", ")}`);
        const config = clientConfig(flags.printConfig, launch());
        process.stderr.write(`${config.where}:\n`);
        process.stdout.write(config.text);
        return;
      }
      if (!flags.http && (flags.port !== undefined || flags.tokenFile !== undefined))
        throw new UsageError("--port and --token-file go with --http");
      // a folder the user named must exist now: a usage error at start, not one per tool call
      const root: RootChoice = {
        ...(flags.root !== undefined ? { given: await commandRoot(flags.root) } : {}),
        here: () => commandRoot(undefined),
      };
      await (flags.http ? serveOverHttp(root, flags) : serveStdio(root));
      process.exit(0);
    });
}
