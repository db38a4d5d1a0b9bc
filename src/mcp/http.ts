import { randomUUID } from "node:crypto";
import { chmod, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { dirname } from "node:path";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { listenLoopback } from "../http/listen.js";
import { newToken, refusal } from "./guard.js";
import type { McpSession } from "./session.js";

/**
 * `umbra mcp --http`: MCP over Streamable HTTP on 127.0.0.1. Stateful: each client's initialize makes
 * a session (its Mcp-Session-Id), with an McpSession of its own (its own engine connection); a session
 * that ends (DELETE, or its transport closes) releases its connection. Every request first passes the
 * guard (Host, Origin, bearer token; guard.ts). The SDK's own Host/Origin options are deprecated in
 * favour of a check in front of the transport, which this is.
 */

export interface HttpOptions {
  /** 0: a free port. */
  port: number;
  /** Where the token is written (0600); `{port}` is replaced by the port. */
  tokenFile: string;
  newSession: () => McpSession;
  log: (line: string) => void;
}

export interface HttpServer {
  url: string;
  port: number;
  token: string;
  tokenFile: string;
  /** Ends every session and stops listening; the token file is removed. */
  close(): Promise<void>;
}

const ENDPOINT = "/mcp";
/** A request's most: a write_file of the engine's largest content (64 MiB), escaped as JSON. */
const MAX_BODY = 160 * 1024 * 1024;

function reply(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function writeToken(path: string, token: string): Promise<void> {
  await privateDir(dirname(path));
  await writeFile(path, `${token}\n`, { mode: PRIVATE_FILE });
  await chmod(path, PRIVATE_FILE);
}

export async function serveHttp(options: HttpOptions): Promise<HttpServer> {
  const token = newToken();
  const sessions = new Map<string, { session: McpSession; transport: StreamableHTTPServerTransport }>();
  let port = 0;

  const startSession = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const session = options.newSession();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      maxRequestBodySize: MAX_BODY,
      onsessioninitialized: (id) => void sessions.set(id, { session, transport }),
    });
    // set before connect: the server chains its own close handler after this one
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void session.close();
    };
    await session.connect(transport);
    await transport.handleRequest(req, res);
    // anything but an initialize makes no session (the transport answered it with an error)
    if (transport.sessionId === undefined) await session.close();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused = refusal(req.headers, port, token);
    if (refused)
      return reply(
        res,
        refused.status,
        refused.message,
        refused.status === 401 ? { "www-authenticate": "Bearer" } : {},
      );
    if (new URL(req.url ?? "/", "http://127.0.0.1").pathname !== ENDPOINT)
      return reply(res, 404, `not found: the MCP endpoint is ${ENDPOINT}`);
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const known = sessions.get(id);
      if (!known)
        return reply(res, 404, "no such session (it ended, or the server restarted): initialize again");
      return known.transport.handleRequest(req, res);
    }
    if (req.method !== "POST")
      return reply(res, 400, "no session: initialize first (POST without Mcp-Session-Id)");
    return startSession(req, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) reply(res, 500, "internal error");
      else res.end();
    });
  });
  port = await listenLoopback(server, options.port);
  const tokenFile = options.tokenFile.replace("{port}", String(port));
  try {
    await writeToken(tokenFile, token);
  } catch (error) {
    server.close();
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}${ENDPOINT}`,
    port,
    token,
    tokenFile,
    close: () => {
      closing ??= (async () => {
        await Promise.all([...sessions.values()].map(({ session }) => session.close()));
        sessions.clear();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await rm(tokenFile, { force: true });
      })();
      return closing;
    },
  };
}
