import type { z } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";
import { RESULT_SCHEMAS } from "../engine/api.js";
import { ENGINE_STATUS } from "./errors.js";
import { CSRF_HEADER } from "./guard.js";
import { inputSchema, inQuery, ROUTES, type Route } from "./routes.js";

/**
 * The OpenAPI 3.1 description of the HTTP API, made from the route table and the engine's zod schemas
 * at start: what a request may hold cannot drift from what the engine checks. Results are described by
 * their schema where api.ts has one (RESULT_SCHEMAS), else as JSON objects (the result types of api.ts).
 */

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodTypeAny): Json {
  const { $schema: _, ...rest } = zodToJsonSchema(schema, { $refStrategy: "none" }) as Json;
  return rest;
}

const ERROR_RESPONSE = { $ref: "#/components/responses/Error" };

/** The event stream's: which workspace, and where a reconnecting page left off. */
const EVENT_PARAMETERS = [
  {
    name: "workspace",
    in: "query",
    required: false,
    schema: { type: "string" },
    description: "only this workspace's events",
  },
  {
    name: "since",
    in: "query",
    required: false,
    schema: { type: "integer", minimum: 0 },
    description:
      "replay the kept events after this id (an id past the engine's last is an earlier engine's: all kept ones are replayed)",
  },
  {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    schema: { type: "integer", minimum: 0 },
    description: "as since (an EventSource that reconnects sends it)",
  },
];

/** What a success carries: JSON, an event stream, or an HTML document. */
function resultContent(route: Route): Json {
  if ("own" in route && route.own === "events")
    return { "text/event-stream": { schema: { type: "string" } } };
  if ("html" in route) return { "text/html": { schema: { type: "string" } } };
  const result = "operation" in route ? RESULT_SCHEMAS[route.operation] : undefined;
  return { "application/json": { schema: result ? jsonSchema(result) : { type: "object" } } };
}

function operation(route: Route): Json {
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
    description: name === "workspace" ? "a workspace id (GET /api/workspaces)" : `a ${name} id`,
  }));
  const op: Json = {
    summary: route.summary,
    operationId: "operation" in route ? route.operation : route.own,
    parameters: pathParams,
    responses: {
      [`${"created" in route ? 201 : 200}`]: {
        description: "the result",
        content: resultContent(route),
      },
      default: ERROR_RESPONSE,
    },
  };
  if ("own" in route && route.own === "events") op.parameters = EVENT_PARAMETERS;
  if (!("operation" in route)) return op;
  const input = jsonSchema(inputSchema(route));
  if (inQuery(route)) {
    const properties = (input.properties ?? {}) as Record<string, Json>;
    const required = new Set((input.required ?? []) as string[]);
    op.parameters = [
      ...pathParams,
      ...Object.entries(properties).map(([name, schema]) => ({
        name,
        in: "query",
        required: required.has(name),
        schema,
      })),
    ];
  } else op.requestBody = { required: true, content: { "application/json": { schema: input } } };
  return op;
}

export function openApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    (paths[route.path] as Json)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "umbra engine HTTP API",
      version: "1",
      description: `Served by \`umbra serve --http\` on 127.0.0.1. Send Authorization: Bearer TOKEN, or the session cookie the printed URL gives a browser plus the ${CSRF_HEADER} header on every POST and DELETE. Errors are {error: {code, message}}; engine codes map to statuses: ${Object.entries(
        ENGINE_STATUS,
      )
        .map(([code, status]) => `${code} ${status}`)
        .join(", ")}.`,
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        session: { type: "apiKey", in: "cookie", name: "umbra_session_PORT" },
      },
      responses: {
        Error: {
          description: "a failure, with a one-line message",
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["error"],
                properties: {
                  error: {
                    type: "object",
                    required: ["code", "message"],
                    properties: { code: { type: "string" }, message: { type: "string" } },
                  },
                },
              },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }, { session: [] }],
    paths,
  };
}
