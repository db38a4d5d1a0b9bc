import type { IncomingHttpHeaders } from "node:http";
import { bearerMatches, loopbackHost, newToken, secretMatches } from "../mcp/guard.js";
import { HttpError } from "./errors.js";

/**
 * Who may use the HTTP API (`umbra serve --http`). It listens on 127.0.0.1 only. Three secrets, fresh
 * for every start and never written to disk:
 *
 * - the token, in the URL printed to the user's terminal: a program sends it as `Authorization:
 *   Bearer TOKEN`; a browser that opens the URL gets
 * - the session cookie in exchange (HttpOnly, SameSite=Strict, Path=/): the page's credential, which
 *   its scripts cannot read and other sites' requests do not carry;
 * - the CSRF value, which the page reads from GET /api/csrf and sends as X-Umbra-CSRF with every
 *   state-changing request. A page of another origin can neither read it (no CORS) nor set a custom
 *   header (that needs a preflight this server never grants).
 *
 * Every request must name this server by a loopback name in Host (a DNS-rebinding page sends its own
 * name) and, when it sends an Origin, come from this very origin. Pure: headers in, a credential out.
 */

export const CSRF_HEADER = "x-umbra-csrf";

export interface Secrets {
  token: string;
  session: string;
  csrf: string;
}

export function newSecrets(): Secrets {
  return { token: newToken(), session: newToken(), csrf: newToken() };
}

/** Which credential a request carried: the page's cookie, or a program's bearer token. */
export type Credential = "page" | "bearer";

/** The session cookie's name: one per port, so that two engines on this machine do not overwrite each other's. */
export function cookieName(port: number): string {
  return `umbra_session_${port}`;
}

/** The Set-Cookie header that gives a browser the session. */
export function sessionCookie(port: number, secrets: Secrets): string {
  return `${cookieName(port)}=${secrets.session}; HttpOnly; SameSite=Strict; Path=/`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/** Refuses a request that does not come to this server by a loopback name, or comes from another origin. */
export function checkPlace(headers: IncomingHttpHeaders, port: number): void {
  if (!loopbackHost(headers.host, port))
    throw new HttpError(403, "FORBIDDEN", `Host must be 127.0.0.1:${port} or localhost:${port}`);
  const origin = headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${(headers.host ?? "").toLowerCase()}`)
    throw new HttpError(403, "FORBIDDEN", "Origin must be absent or this server's own origin");
}

/**
 * The credential of a request to the server on `port`; an HttpError when it has none, a wrong one, or
 * (with the cookie) sends a state-changing request without the CSRF value. A bearer header, when sent,
 * decides alone: a wrong one is refused even with a good cookie.
 */
export function credentialOf(
  method: string,
  headers: IncomingHttpHeaders,
  port: number,
  secrets: Secrets,
): Credential {
  checkPlace(headers, port);
  if (headers.authorization !== undefined) {
    if (bearerMatches(headers.authorization, secrets.token)) return "bearer";
    throw new HttpError(401, "UNAUTHORIZED", "wrong token (Authorization: Bearer TOKEN)");
  }
  if (!secretMatches(cookieValue(headers.cookie, cookieName(port)), secrets.session))
    throw new HttpError(
      401,
      "UNAUTHORIZED",
      "no session: open the URL umbra serve --http printed, or send Authorization: Bearer TOKEN",
    );
  const csrf = headers[CSRF_HEADER];
  if (!SAFE_METHODS.has(method) && !secretMatches(typeof csrf === "string" ? csrf : undefined, secrets.csrf))
    throw new HttpError(
      403,
      "FORBIDDEN",
      `a state-changing request needs the ${CSRF_HEADER} header (GET /api/csrf)`,
    );
  return "page";
}

/** Whether a `?token=` in a URL is this start's token. */
export function tokenMatches(given: string | null, secrets: Secrets): boolean {
  return secretMatches(given ?? undefined, secrets.token);
}
