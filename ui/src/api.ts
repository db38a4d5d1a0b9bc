/**
 * The page's client of the engine's HTTP API (same origin: the session cookie goes along by itself).
 * Every state-changing request carries the CSRF value of GET /api/csrf. A failure is the API's one
 * error shape, thrown as ApiError with its one-line message.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf: Promise<string> | undefined;

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? "HTTP",
      error?.message ?? `${response.status} ${response.statusText}`,
    );
  }
  return json as T;
}

export async function get<T>(
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<T> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const search = params.toString();
  return answer<T>(await fetch(search ? `${path}?${search}` : path, { credentials: "same-origin" }));
}

export async function send<T>(method: "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  csrf ??= get<{ csrf: string }>("/api/csrf").then((got) => got.csrf);
  const headers: Record<string, string> = { "x-umbra-csrf": await csrf };
  if (body !== undefined) headers["content-type"] = "application/json";
  return answer<T>(
    await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
}

/** A path below a workspace: `/api/workspaces/ID/...`, each segment encoded. */
export function wsPath(workspace: string, ...parts: string[]): string {
  return ["/api/workspaces", workspace, ...parts]
    .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
    .join("/");
}
