import { request } from "node:http";

/** A raw HTTP request to 127.0.0.1 (any Host, Origin, credential): its status, headers and parsed body. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** The body of an answer, as the type the test expects of it. */
export function body<T>(answer: Answer): T {
  return answer.json as T;
}

/** The error code of an answer in the API's one error shape (undefined when it is not one). */
export function errorOf(answer: Answer): { code: string; message: string } | undefined {
  return (answer.json as { error?: { code: string; message: string } } | undefined)?.error;
}

export function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  host = "127.0.0.1",
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host, port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A client of one credential: the page (cookie + CSRF header) or a program (bearer token). */
export interface ApiClient {
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
}

/**
 * Opens the printed URL as a browser does: the cookie it gets, the CSRF value, and the clients of the
 * page (cookie + CSRF header) and of a program holding the token.
 */
export async function signIn(
  port: number,
  token: string,
): Promise<{ cookie: string; csrf: string; page: ApiClient; bearer: ApiClient }> {
  const landing = await raw(port, "GET", `/?token=${token}`);
  const cookie = String(landing.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
  const csrf = body<{ csrf: string }>(await client(port, { cookie }).get("/api/csrf")).csrf;
  return {
    cookie,
    csrf,
    page: client(port, { cookie, "x-umbra-csrf": csrf }),
    bearer: client(port, { authorization: `Bearer ${token}` }),
  };
}

export function client(port: number, credential: Record<string, string>): ApiClient {
  return {
    get: (path, headers = {}) => raw(port, "GET", path, { ...credential, ...headers }),
    send: (method, path, body, headers = {}) =>
      raw(
        port,
        method,
        path,
        { "content-type": "application/json", ...credential, ...headers },
        body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      ),
  };
}
