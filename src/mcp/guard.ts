import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/**
 * Who may talk to `umbra mcp --http`: it listens on 127.0.0.1 only, and every request must carry the
 * bearer token of this start and come to a loopback name. The Host check defeats DNS rebinding (a web
 * page whose name resolves to 127.0.0.1 sends its own name as Host); the Origin check refuses a request
 * a browser sends on behalf of a page that is not on this machine. Pure: headers in, a refusal out.
 */

/** A fresh token for one start: 256 random bits. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

export interface Refusal {
  status: 401 | 403;
  message: string;
}

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost"]);

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Whether `header` is `Bearer TOKEN` for this token (compared in constant time). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), digest(token));
}

/** Whether an Origin header names a page of this machine (http or https on a loopback name, any port). */
function loopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_NAMES.has(url.hostname);
  } catch {
    return false;
  }
}

/** Why a request to the server on `port` is refused; undefined when it may pass. */
export function refusal(headers: IncomingHttpHeaders, port: number, token: string): Refusal | undefined {
  const host = (headers.host ?? "").toLowerCase();
  if (![...LOOPBACK_NAMES].some((name) => host === `${name}:${port}`))
    return { status: 403, message: `Host must be 127.0.0.1:${port} or localhost:${port}` };
  const origin = headers.origin;
  if (origin !== undefined && !loopbackOrigin(origin))
    return { status: 403, message: "Origin must be absent or a page on this machine" };
  if (!bearerMatches(headers.authorization, token))
    return { status: 401, message: "a bearer token is required (Authorization: Bearer TOKEN)" };
  return undefined;
}
