import { z } from "zod";
import { OPERATIONS, type OperationName } from "../engine/api.js";
import { HttpError } from "./errors.js";

/**
 * The HTTP API's routes, as data: each maps a method and a path to an engine operation (or to one of
 * the front end's own answers). An operation's parameters are its engine schema less what the path
 * gives (the workspace's root, the branch), taken from the query (GET) or the JSON body; unknown
 * fields are refused. The OpenAPI description (openapi.ts) is made from this table and those schemas.
 */

export type Method = "GET" | "POST" | "DELETE";

interface RouteBase {
  method: Method;
  /** `{workspace}` and `{branch}` are path parameters. */
  path: string;
  summary: string;
}

/** An answer of the front end's own (no engine operation). */
export interface OwnRoute extends RouteBase {
  own: "csrf" | "openapi" | "workspaces" | "events";
}

export interface OperationRoute extends RouteBase {
  operation: OperationName;
  /** Only the page (the user's click, cookie + CSRF) may ask it, never a bearer client. */
  pageOnly?: true;
  /** The status of a success (default 200). */
  created?: true;
  /** Input fields (dotted paths) only the page may give: a bearer client is refused when it sends one. */
  pageOnlyFields?: readonly string[];
  /** The result is `{html}`, sent as a sandboxed HTML document (it holds untrusted text). */
  html?: true;
}

export type Route = OwnRoute | OperationRoute;

const WS = "/api/workspaces/{workspace}";
const BRANCH = `${WS}/branches/{branch}`;
const SESSION = `${WS}/sessions/{session}`;
/** What would let a bearer client point a session at another endpoint (with the user's key) or read a file. */
const SESSION_PAGE_ONLY = ["cassette", "model.baseUrl", "model.provider", "model.apiKeyEnv"] as const;

export const ROUTES: readonly Route[] = [
  { method: "GET", path: "/api/csrf", own: "csrf", summary: "the CSRF value the page sends as X-Umbra-CSRF" },
  { method: "GET", path: "/api/openapi.json", own: "openapi", summary: "this API, as OpenAPI 3.1" },
  {
    method: "GET",
    path: "/api/workspaces",
    own: "workspaces",
    summary: "the workspaces the engine has open",
  },
  {
    method: "GET",
    path: `${WS}/status`,
    operation: "status",
    summary: "index status, branches, language servers",
  },
  { method: "POST", path: `${WS}/search`, operation: "search", summary: "semantic and lexical search" },
  {
    method: "POST",
    path: `${WS}/grep`,
    operation: "grep",
    summary: "regular-expression or fixed-string search",
  },
  { method: "GET", path: `${WS}/file`, operation: "readFile", summary: "a file's lines, numbered" },
  { method: "GET", path: `${WS}/files`, operation: "listFiles", summary: "the files below a folder" },
  { method: "GET", path: `${WS}/branches`, operation: "branchList", summary: "the workspace's branches" },
  {
    method: "POST",
    path: `${WS}/branches`,
    operation: "branchCreate",
    created: true,
    summary: "a new branch (a copy-on-write fork of the folder)",
  },
  {
    method: "GET",
    path: `${BRANCH}/diff`,
    operation: "diff",
    summary: "the branch's changes against its base",
  },
  {
    method: "GET",
    path: `${BRANCH}/lints`,
    operation: "lints",
    summary:
      "the diagnostics the branch's edits introduced, awaited for its current version (cross-file included; `path`: one file)",
  },
  {
    method: "POST",
    path: `${BRANCH}/rebase`,
    operation: "rebase",
    summary: "bring the user's edits since the fork into the branch",
  },
  {
    method: "POST",
    path: `${BRANCH}/accept`,
    operation: "accept",
    summary:
      "write the branch's changes (all, the files named, or hunks of one file) into the user's folder: confirmed only when the page asks it (a bearer client gets confirmed: false)",
  },
  { method: "DELETE", path: BRANCH, operation: "branchDiscard", summary: "throw the branch away" },
  {
    method: "POST",
    path: `${WS}/undo`,
    operation: "undo",
    pageOnly: true,
    summary: "take the last accept back (the page only)",
  },
  {
    method: "GET",
    path: `${WS}/sessions`,
    operation: "sessionList",
    summary: "the workspace's agent sessions, running and past, newest first",
  },
  {
    method: "POST",
    path: `${WS}/sessions`,
    operation: "sessionStart",
    created: true,
    pageOnlyFields: SESSION_PAGE_ONLY,
    summary:
      "start an agent session on a task, in a branch of its own (cassette, model.baseUrl, model.provider and model.apiKeyEnv: the page only)",
  },
  {
    method: "GET",
    path: SESSION,
    operation: "sessionGet",
    summary: "a session's summary and what it did so far",
  },
  { method: "POST", path: `${SESSION}/stop`, operation: "sessionStop", summary: "stop a running session" },
  {
    method: "POST",
    path: `${SESSION}/resume`,
    operation: "sessionResume",
    created: true,
    pageOnlyFields: SESSION_PAGE_ONLY,
    summary: "continue a session in a new one, from its changes and a briefing of what it did",
  },
  {
    method: "GET",
    path: "/api/events",
    own: "events",
    summary:
      "live events (text/event-stream): session, tool, lint, output, usage, approval, text, notice; ?workspace=ID filters, Last-Event-ID or ?since=N replays what came after N",
  },
  {
    method: "GET",
    path: "/api/approvals",
    operation: "approvalList",
    summary: "network requests of agent sessions waiting for the user",
  },
  {
    method: "POST",
    path: "/api/approvals/{approval}",
    operation: "approvalAnswer",
    pageOnly: true,
    summary:
      "answer a waiting request: once, repository (saves the rule for the workspace) or deny (the page only)",
  },
  {
    method: "GET",
    path: "/api/rules",
    operation: "ruleList",
    summary: "the network rules saved from the queue",
  },
  {
    method: "DELETE",
    path: "/api/rules/{rule}",
    operation: "ruleDelete",
    pageOnly: true,
    summary: "remove a saved rule (the page only)",
  },
  { method: "GET", path: `${WS}/evals`, operation: "evalList", summary: "the workspace's stored eval runs" },
  {
    method: "GET",
    path: `${WS}/evals/compare`,
    operation: "evalCompare",
    summary: "the A/B comparison of two runs (McNemar's test on the paired tasks)",
  },
  {
    method: "GET",
    path: `${WS}/evals/{run}/report`,
    operation: "evalReport",
    html: true,
    summary: "a run's HTML report, as a sandboxed document (no scripts; it holds untrusted text)",
  },
];

/** The parts of a path: literal segments and `{name}` parameters. */
function segments(path: string): string[] {
  return path.split("/").filter(Boolean);
}

export interface Match {
  route: Route;
  params: Record<string, string>;
}

/** The route for a request; an HttpError when no path or no method fits. */
export function matchRoute(method: string, pathname: string): Match {
  const asked = segments(pathname);
  let pathFits = false;
  for (const route of ROUTES) {
    const parts = segments(route.path);
    if (parts.length !== asked.length) continue;
    const params: Record<string, string> = {};
    const fits = parts.every((part, i) => {
      const value = asked[i] ?? "";
      if (!part.startsWith("{")) return part === value;
      try {
        params[part.slice(1, -1)] = decodeURIComponent(value);
        return true;
      } catch {
        return false;
      }
    });
    if (!fits) continue;
    pathFits = true;
    if (route.method === method) return { route, params };
  }
  if (pathFits) throw new HttpError(405, "METHOD_NOT_ALLOWED", `${method} is not allowed on ${pathname}`);
  throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${pathname} (GET /api/openapi.json lists them)`);
}

/** The path's parameter names, as input fields: `{workspace}` gives the root, the others their own name. */
export function pathFields(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => (name === "workspace" ? "root" : (name ?? "")));
}

/** What the path of `route` gives, left out of its input. */
function fromPath(route: OperationRoute): Record<string, true> {
  return Object.fromEntries(pathFields(route.path).map((field) => [field, true]));
}

/** A route's input (query or body) schema: the operation's, less what the path gives, strict. */
export function inputSchema(route: OperationRoute): z.AnyZodObject {
  const schema: z.AnyZodObject = OPERATIONS[route.operation];
  return schema.omit(fromPath(route)).strict();
}

/** Whether a route's input comes from the query string (else the JSON body). */
export function inQuery(route: OperationRoute): boolean {
  return route.method !== "POST";
}

/** The schema below optional/default/nullable wrappers. */
function inner(schema: z.ZodTypeAny): z.ZodTypeAny {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return inner(schema.unwrap());
  if (schema instanceof z.ZodDefault) return inner(schema.removeDefault());
  return schema;
}

/**
 * A query string as the input of `schema`: numbers and booleans read from their text (a text that is
 * neither stays text, and the schema refuses it); a field named twice is refused.
 */
export function queryInput(schema: z.AnyZodObject, query: URLSearchParams): Record<string, unknown> {
  // no prototype: a parameter named `__proto__` is an own key, refused as unknown like any other
  const input: Record<string, unknown> = Object.create(null);
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    if (values.length > 1) throw new HttpError(400, "BAD_REQUEST", `${key}: given more than once`);
    const value = values[0] ?? "";
    const field = Object.hasOwn(schema.shape, key) ? inner(schema.shape[key] as z.ZodTypeAny) : undefined;
    if (field instanceof z.ZodNumber && /^-?\d+(\.\d+)?$/.test(value)) input[key] = Number(value);
    else if (field instanceof z.ZodBoolean && (value === "true" || value === "false"))
      input[key] = value === "true";
    else input[key] = value;
  }
  return input;
}

/** The input checked against the route's schema; a one-line BAD_REQUEST when it does not fit. */
export function parseInput(route: OperationRoute, input: unknown): Record<string, unknown> {
  const parsed = inputSchema(route).safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join(".") || (inQuery(route) ? "query" : "body");
  throw new HttpError(400, "BAD_REQUEST", `${where}: ${issue?.message ?? "does not fit the schema"}`);
}
