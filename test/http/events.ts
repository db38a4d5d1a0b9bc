import { type IncomingMessage, request } from "node:http";
import type { LiveEvent } from "../../src/engine/api.js";

/** An open SSE stream of GET /api/events: the events parsed as they come. */
export interface EventStream {
  status: number;
  headers: IncomingMessage["headers"];
  events: LiveEvent[];
  /** The `event:` names, in order (each must equal its data's type). */
  names: string[];
  close(): void;
}

export function openEvents(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: "GET", headers: { host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        const stream: EventStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          events: [],
          names: [],
          close: () => req.destroy(),
        };
        let buffer = "";
        res.on("data", (chunk: Buffer) => {
          buffer += chunk.toString("utf8");
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const fields = new Map<string, string>();
            for (const line of block.split("\n")) {
              const at = line.indexOf(": ");
              if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
            }
            const data = fields.get("data");
            if (data === undefined) continue;
            if (res.headers["content-type"]?.startsWith("text/event-stream")) {
              stream.events.push(JSON.parse(data) as LiveEvent);
              stream.names.push(fields.get("event") ?? "");
            }
          }
        });
        res.on("error", () => {});
        resolve(stream);
      },
    );
    req.on("error", reject);
    req.end();
  });
}
