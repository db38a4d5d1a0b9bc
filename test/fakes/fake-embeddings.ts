import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface HoldingEmbeddingServer {
  /** The base URL to configure (`index.embedder.baseUrl`, ends in /v1). */
  url: string;
  /** Whether a request is being held. */
  holding(): boolean;
  /** Answers every request from now on (the held ones stay unanswered: their client is gone). */
  release(): void;
  close(): Promise<void>;
}

/**
 * A fake OpenAI-compatible embeddings endpoint on 127.0.0.1 that answers the first `answered` requests
 * with 4-dimensional vectors and holds every later one until `release()`: an index run stopped while it
 * waits has committed its first batches and nothing after them, however fast the machine is.
 */
export async function holdingEmbeddingServer(answered: number): Promise<HoldingEmbeddingServer> {
  let requests = 0;
  let held = 0;
  let released = false;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      requests++;
      if (!released && requests > answered) {
        held++;
        return;
      }
      const { input } = JSON.parse(body) as { input: string[] };
      const data = input.map((text, index) => ({
        index,
        embedding: [text.length, text.charCodeAt(0) || 1, text.charCodeAt(text.length - 1) || 1, 1],
      }));
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    holding: () => held > 0,
    release: () => {
      released = true;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
