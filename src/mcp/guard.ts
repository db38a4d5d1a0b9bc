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

/** Whether `given` is `secret` (compared in constant time). */
export function secretMatches(given: string | undefined, secret: string): boolean {
  return given !== undefined && timingSafeEqual(digest(given), digest(secret));
}

/** Whether `header` is `Bearer TOKEN` for this token (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  return secretMatches(/^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1], token);
}

/** Whether a Host header names this server by a loopback name (DNS rebinding sends another name). */
export function loopbackHost(host: string | undefined, port: number): boolean {
  const name = (host ?? "").toLowerCase();
  return [...LOOPBACK_NAMES].some((loopback) => name === `${loopback}:${port}`);
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
  if (!loopbackHost(headers.host, port))
    return { status: 403, message: `Host must be 127.0.0.1:${port} or localhost:${port}` };
  const origin = headers.origin;
  if (origin !== undefined && !loopbackOrigin(origin))
    return { status: 403, message: "Origin must be absent or a page on this machine" };
  if (!bearerMatches(headers.authorization, token))
    return { status: 401, message: "a bearer token is required (Authorization: Bearer TOKEN)" };
  return undefined;
}
