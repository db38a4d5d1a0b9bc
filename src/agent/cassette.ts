import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import type { FetchFunction, ModelSpec } from "./providers.js";

/**
 * Cassettes: every model exchange of a session (the request body and the streamed response, as sent)
 * in JSON lines. `recordingFetch` writes one while the session talks to the real endpoint;
 * `replayFetch` answers from one with no model at all. Both are `fetch` functions given to the provider,
 * so everything above the HTTP layer (the AI SDK, the loop, the tools) runs exactly as it does live.
 *
 * Line 1: `{"type":"cassette","version":1,"note":…,"provider":…,"model":…,"baseUrl":…}`.
 * Then one `{"type":"exchange","n":…,"request":{method,path,body},"response":{status,headers,body}}` per call.
 */

export interface CassetteHeader {
  type: "cassette";
  version: 1;
  note?: string;
  provider: ModelSpec["provider"];
  model: string;
  baseUrl?: string;
  recordedAt?: string;
}

export interface CassetteExchange {
  type: "exchange";
  n: number;
  request: { method: string; path: string; body: unknown };
  response: { status: number; headers: Record<string, string>; body: string };
}

/** A replay that cannot go on: a request drifted (strict mode) or the cassette has no more answers. */
export class CassetteError extends Error {
  override name = "CassetteError";
}

function bodyText(body: unknown): string {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString("utf8");
  return String(body);
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname;
  } catch {
    return url;
  }
}

function urlOf(input: Parameters<FetchFunction>[0]): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/** Response headers worth keeping (content type, retry-after). */
function keptHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ["content-type", "retry-after"]) {
    const value = headers.get(name);
    if (value !== null) kept[name] = value;
  }
  return kept;
}

/**
 * A fetch that forwards to `base` and appends every exchange to `file` (created with `header`). The
 * response is streamed to the caller as it arrives; the exchange is written when the stream ends.
 */
export function recordingFetch(
  file: string,
  header: CassetteHeader,
  base: FetchFunction = fetch,
): FetchFunction {
  writeFileSync(file, `${JSON.stringify({ ...header, recordedAt: new Date().toISOString() })}\n`);
  let n = 0;
  const record: FetchFunction = async (input, init) => {
    const index = n++;
    const requestText = bodyText(init?.body);
    const response = await base(input, init);
    const request = {
      method: init?.method ?? "GET",
      path: pathOf(urlOf(input)),
      body: parseBody(requestText),
    };
    const write = (body: string) => {
      const exchange: CassetteExchange = {
        type: "exchange",
        n: index,
        request,
        response: { status: response.status, headers: keptHeaders(response.headers), body },
      };
      appendFileSync(file, `${JSON.stringify(exchange)}\n`);
    };
    if (!response.body) {
      write("");
      return response;
    }
    const [mine, theirs] = response.body.tee();
    void new Response(mine)
      .text()
      .then(write)
      .catch(() => undefined);
    return new Response(theirs, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return record;
}

export interface Cassette {
  header: CassetteHeader;
  exchanges: CassetteExchange[];
}

/** Reads a cassette file; a malformed one is a CassetteError naming the line. */
export function readCassette(file: string): Cassette {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new CassetteError(
      `cannot read the cassette ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  let header: CassetteHeader | undefined;
  const exchanges: CassetteExchange[] = [];
  lines.forEach((line, i) => {
    let value: { type?: string };
    try {
      value = JSON.parse(line) as { type?: string };
    } catch {
      throw new CassetteError(`${file}:${i + 1} is not JSON`);
    }
    if (value.type === "cassette") header = value as CassetteHeader;
    else if (value.type === "exchange") exchanges.push(value as CassetteExchange);
  });
  if (!header) throw new CassetteError(`${file} has no cassette header line`);
  return { header, exchanges };
}

/** The first place where two JSON values differ, as a path (`messages[3].content`), or undefined. */
export function firstDifference(a: unknown, b: unknown, path = ""): string | undefined {
  if (a === b) return undefined;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return path || "(root)";
  if (Array.isArray(a) !== Array.isArray(b)) return path || "(root)";
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const found = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  // own keys only: `left.__proto__` of an object without that key is Object.prototype, not undefined
  const own = (object: Record<string, unknown>, key: string) =>
    Object.hasOwn(object, key) ? object[key] : undefined;
  for (const key of keys) {
    const found = firstDifference(own(left, key), own(right, key), path ? `${path}.${key}` : key);
    if (found) return found;
  }
  return undefined;
}

export interface ReplayOptions {
  /** Fail on any request that differs from the recorded one (default: warn and answer in order). */
  strict?: boolean;
  onWarning?: (message: string) => void;
}

export interface Replay {
  fetch: FetchFunction;
  header: CassetteHeader;
  /** Requests answered so far. */
  readonly used: number;
  /** Requests that differed from the recording. */
  readonly drifts: string[];
}

/**
 * A fetch that answers the n-th request with the n-th recorded response, comparing the request with
 * the recorded one: in strict mode a difference is a CassetteError, otherwise a warning.
 */
export function replayFetch(cassette: Cassette, options: ReplayOptions = {}): Replay {
  let used = 0;
  const drifts: string[] = [];
  const replay: FetchFunction = async (input, init) => {
    const exchange = cassette.exchanges[used];
    if (!exchange) {
      throw new CassetteError(
        `the cassette has no answer for request ${used + 1} (it holds ${cassette.exchanges.length}): the session went further than the recording`,
      );
    }
    const body = parseBody(bodyText(init?.body));
    const path = pathOf(urlOf(input));
    const where = path !== exchange.request.path ? "path" : firstDifference(exchange.request.body, body);
    if (where) {
      const message = `request ${used + 1} differs from the recording at ${where}`;
      drifts.push(message);
      if (options.strict) throw new CassetteError(`${message} (strict replay)`);
      options.onWarning?.(`${message}; answering in order anyway`);
    }
    used++;
    return new Response(exchange.response.body, {
      status: exchange.response.status,
      headers: exchange.response.headers,
    });
  };
  return {
    fetch: replay,
    header: cassette.header,
    get used() {
      return used;
    },
    drifts,
  };
}
