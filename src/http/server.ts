import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Caller, ClientHooks, LiveEvent } from "../engine/api.js";
import type { Engine } from "../engine/engine.js";
import { HttpError, httpErrorOf } from "./errors.js";
import {
  type Credential,
  checkPlace,
  credentialOf,
  newSecrets,
  sessionCookie,
  tokenMatches,
} from "./guard.js";
import { listenLoopback } from "./listen.js";
import { openApiDocument } from "./openapi.js";
import { inputSchema, inQuery, matchRoute, type OperationRoute, parseInput, queryInput } from "./routes.js";
import { PAGE_CSP, uiFile } from "./ui.js";

/**
 * `umbra serve --http`: the engine's HTTP API, a thin front end like the socket and MCP: it checks who
 * asks (guard.ts), turns a route into an engine call (routes.ts) and the result or EngineError into
 * JSON. It listens on 127.0.0.1 only.
 *
 * The engine asks its client to confirm an accept. Here the page's request is the user's click: it
 * carries the session cookie (which only the browser that opened the printed URL holds) and the CSRF
 * value (which only a page of this origin can read), and this origin serves nothing but JSON and the
 * web UI's own files from umbra's installation (ui.ts), so no script an agent wrote runs on it. A
 * bearer client (a program the user gave the token) is untrusted like any agent: its accepts are not
 * confirmed, network is never approved, and it may not undo.
 */

export interface HttpApiOptions {
  engine: Engine;
  /** 0: a free port. */
  port: number;
  log: (line: string) => void;
}

export interface HttpApi {
  /** The URL to open: it holds this start's token. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** A request body's most: an accept naming many files, a long search query. */
const MAX_BODY = 16 * 1024 * 1024;

const COMMON_HEADERS = {
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
};

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...COMMON_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-security-policy": "default-src 'none'",
    ...headers,
  });
  res.end(JSON.stringify(body));
}

/**
 * A document made of untrusted text (an eval report): no script, no loads, its own opaque origin
 * (sandbox), shown only in a frame of this origin.
 */
const HTML_DOCUMENT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'self'";

function sendHtml(res: ServerResponse, html: string): void {
  res.writeHead(200, {
    ...COMMON_HEADERS,
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": HTML_DOCUMENT_CSP,
  });
  res.end(html);
}

/** A comment line on an idle event stream, so that proxies and the browser keep it open. */
const HEARTBEAT_MS = 15_000;

/** The last event a client saw: Last-Event-ID (a reconnecting EventSource), else ?since=, else none. */
function eventCursor(header: string | string[] | undefined, since: string | null): number {
  const given = typeof header === "string" ? header : (since ?? "0");
  if (!/^\d{1,15}$/.test(given.trim()))
    throw new HttpError(400, "BAD_REQUEST", "Last-Event-ID and since must be an event id (a whole number)");
  return Number(given.trim());
}

/** The value at a dotted path of an input object. */
function fieldOf(input: Record<string, unknown>, path: string): unknown {
  let value: unknown = input;
  for (const key of path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** A workspace's id in URLs: a digest of its root, stable for as long as the folder is where it is. */
export function workspaceId(root: string): string {
  return createHash("sha256").update(root).digest("hex").slice(0, 16);
}

/** A POST's JSON body; an empty one is `{}` (a rebase or an undo needs none). */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, "TOO_LARGE", `the body is over ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json")
    throw new HttpError(
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      "the body must be JSON (Content-Type: application/json)",
    );
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "BAD_REQUEST", "the body is not valid JSON");
  }
}

/** An API client's hooks: it cannot ask its user (a network request goes to the page's queue), nor accept. */
const NO: ClientHooks = { approveNetwork: async () => undefined, confirmAccept: async () => false };
/** The page's hooks: an accept it sends is the user's click; network approval is not asked here yet. */
const PAGE_HOOKS: ClientHooks = { approveNetwork: async () => false, confirmAccept: async () => true };

export async function serveHttpApi(options: HttpApiOptions): Promise<HttpApi> {
  const { engine } = options;
  const secrets = newSecrets();
  const callers: Record<Credential, Caller> = {
    page: engine.connect("web page", PAGE_HOOKS),
    bearer: engine.connect("http api", NO),
  };
  const openapi = openApiDocument();
  let port = 0;

  const rootOf = (id: string): string => {
    const root = engine.workspaces().find((candidate) => workspaceId(candidate) === id);
    if (!root)
      throw new HttpError(404, "NOT_FOUND", `no open workspace ${id} (GET /api/workspaces lists them)`);
    return root;
  };

  const callOperation = async (
    route: OperationRoute,
    params: Record<string, string>,
    credential: Credential,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    if (route.pageOnly && credential !== "page")
      throw new HttpError(
        403,
        "FORBIDDEN",
        `${route.path}: only the user's page may ask this, not a bearer client`,
      );
    const fromPath: Record<string, string> = {};
    for (const [name, value] of Object.entries(params))
      if (name === "workspace") fromPath.root = rootOf(value);
      else fromPath[name] = value;
    const input = parseInput(
      route,
      inQuery(route) ? queryInput(inputSchema(route), url.searchParams) : await readBody(req),
    );
    if (credential !== "page") {
      const refused = (route.pageOnlyFields ?? []).find((field) => fieldOf(input, field) !== undefined);
      if (refused)
        throw new HttpError(
          403,
          "FORBIDDEN",
          `${refused}: only the user's page may set this, not a bearer client`,
        );
    }
    const stop = new AbortController();
    res.once("close", () => stop.abort());
    const result = await engine.call(
      callers[credential],
      route.operation,
      { ...input, ...fromPath },
      { signal: stop.signal },
    );
    if (route.html) return sendHtml(res, (result as { html: string }).html);
    send(res, route.created ? 201 : 200, result);
  };

  const streamEvents = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const workspace = url.searchParams.get("workspace") ?? undefined;
    if (workspace !== undefined) rootOf(workspace);
    const after = eventCursor(req.headers["last-event-id"], url.searchParams.get("since"));
    res.writeHead(200, {
      ...COMMON_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      "content-security-policy": "default-src 'none'",
      connection: "keep-alive",
    });
    res.socket?.setNoDelay(true);
    res.write("retry: 1000\n\n");
    const write = (event: LiveEvent) => {
      if (workspace !== undefined && event.workspace !== workspace) return;
      res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    // the replay and the subscription in one turn: no event falls between them
    for (const event of engine.events.since(after)) write(event);
    const unsubscribe = engine.events.subscribe(write);
    const beat = setInterval(() => res.write(": keep-alive\n\n"), HEARTBEAT_MS);
    beat.unref();
    res.once("close", () => {
      clearInterval(beat);
      unsubscribe();
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (method === "GET" && url.searchParams.has("token")) {
      checkPlace(req.headers, port);
      if (!tokenMatches(url.searchParams.get("token"), secrets))
        throw new HttpError(401, "UNAUTHORIZED", "wrong token: open the URL umbra serve --http printed");
      url.searchParams.delete("token");
      res.writeHead(303, {
        ...COMMON_HEADERS,
        "set-cookie": sessionCookie(port, secrets),
        location: `${url.pathname}${url.search}`,
      });
      return void res.end();
    }
    const credential = credentialOf(method, req.headers, port, secrets);
    const file = method === "GET" ? await uiFile(url.pathname) : undefined;
    if (file) {
      res.writeHead(200, {
        ...COMMON_HEADERS,
        "content-type": file.type,
        "content-security-policy": PAGE_CSP,
      });
      return void res.end(file.body);
    }
    const { route, params } = matchRoute(method, url.pathname);
    if (!("own" in route)) return callOperation(route, params, credential, url, req, res);
    if (route.own === "events") return streamEvents(req, res, url);
    if (route.own === "csrf") return send(res, 200, { csrf: secrets.csrf });
    if (route.own === "openapi") return send(res, 200, openapi);
    send(res, 200, { workspaces: engine.workspaces().map((root) => ({ id: workspaceId(root), root })) });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure = httpErrorOf(error);
      if (failure.code === "INTERNAL")
        options.log(`http: ${req.method} ${req.url?.split("?")[0]}: ${failure.message}`);
      // a body left unread (over the bound) ends the connection: the client must not send on it
      const close: Record<string, string> = failure.status === 413 ? { connection: "close" } : {};
      if (!res.headersSent) send(res, failure.status, failure.toBody(), close);
      else res.end();
    });
  });
  port = await listenLoopback(server, options.port);
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/?token=${secrets.token}`,
    port,
    token: secrets.token,
    close: () => {
      closing ??= (async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        engine.disconnect(callers.page);
        engine.disconnect(callers.bearer);
      })();
      return closing;
    },
  };
}
