import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { embedCached } from "../../../src/index/embed/batch.js";
import { EmbeddingCache } from "../../../src/index/embed/cache.js";
import { EmbeddingError } from "../../../src/index/embed/embedder.js";
import { OpenAICompatibleEmbedder } from "../../../src/index/embed/openai.js";

interface Received {
  url: string;
  headers: IncomingMessage["headers"];
  body: { model: string; input: string[] };
}

type Handler = (request: Received, response: ServerResponse) => void;

const servers: Server[] = [];

/** A fake OpenAI-compatible server on 127.0.0.1 and a random port. */
async function fakeServer(handler: Handler): Promise<{ baseUrl: string; requests: Received[] }> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (chunk: Buffer) => {
      data += chunk.toString();
    });
    req.on("end", () => {
      const received: Received = { url: req.url ?? "", headers: req.headers, body: JSON.parse(data) };
      requests.push(received);
      handler(received, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** The embedding the fake server gives a text: [length, first char code, 1]. */
function fakeEmbedding(text: string): number[] {
  return [text.length, text.charCodeAt(0) || 0, 1];
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}

/** Answers with embeddings listed in reverse order, as servers are allowed to. */
const reversed: Handler = (req, res) => {
  const data = req.body.input.map((text, index) => ({
    object: "embedding",
    index,
    embedding: fakeEmbedding(text),
  }));
  json(res, 200, {
    object: "list",
    data: data.reverse(),
    model: req.body.model,
    usage: { prompt_tokens: 1 },
  });
};

describe("OpenAICompatibleEmbedder", () => {
  it("posts {model, input} to /embeddings and orders vectors by index", async () => {
    const { baseUrl, requests } = await fakeServer(reversed);
    const embedder = new OpenAICompatibleEmbedder({
      baseUrl: `${baseUrl}/`,
      model: "nomic-embed-text",
      apiKey: "sk-test",
    });
    expect(embedder.id).toBe(`openai:${baseUrl}:nomic-embed-text`);
    const vectors = await embedder.embed(["a", "bb", "ccc"]);
    expect(vectors).toEqual([
      Float32Array.from([1, 97, 1]),
      Float32Array.from([2, 98, 1]),
      Float32Array.from([3, 99, 1]),
    ]);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.url).toBe("/v1/embeddings");
    expect(requests[0]?.body).toEqual({ model: "nomic-embed-text", input: ["a", "bb", "ccc"] });
    expect(requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(embedder.dimensions).toBe(3);
  });

  it("discovers the dimensions with a single probe", async () => {
    const { baseUrl, requests } = await fakeServer(reversed);
    const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m" });
    expect(embedder.dimensions).toBe(0);
    const [first, second] = await Promise.all([embedder.init(), embedder.init()]);
    expect(first).toBe(3);
    expect(second).toBe(3);
    await embedder.init();
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers.authorization).toBeUndefined();
  });

  it("rejects vectors whose length differs from the configured dimensions", async () => {
    const { baseUrl, requests } = await fakeServer(reversed);
    const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m", dimensions: 768 });
    expect(await embedder.init()).toBe(768);
    expect(requests).toHaveLength(0);
    await expect(embedder.embed(["x"])).rejects.toThrow(/3-dimensional embeddings, expected 768/);
  });

  it("turns HTTP 500 into a retryable error with the status and the body", async () => {
    const { baseUrl } = await fakeServer((_req, res) =>
      json(res, 500, { error: { message: "model runner crashed" } }),
    );
    const error = await new OpenAICompatibleEmbedder({ baseUrl, model: "m" })
      .embed(["x"])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect((error as Error).message).toMatch(/HTTP 500/);
    expect((error as Error).message).toContain("model runner crashed");
  });

  it("marks 429 retryable and 400 not", async () => {
    let status = 429;
    const { baseUrl } = await fakeServer((_req, res) => json(res, status, "slow down"));
    const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m" });
    await expect(embedder.embed(["x"])).rejects.toMatchObject({ retryable: true, status: 429 });
    status = 400;
    await expect(embedder.embed(["x"])).rejects.toMatchObject({ retryable: false, status: 400 });
  });

  it("rejects malformed bodies clearly", async () => {
    let body: string = "<html>gateway</html>";
    const { baseUrl } = await fakeServer((_req, res) => json(res, 200, body));
    const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m" });
    await expect(embedder.embed(["x"])).rejects.toThrow(/not JSON.*gateway/);
    body = JSON.stringify({ data: [{ index: 0, embedding: ["a"] }] });
    await expect(embedder.embed(["x"])).rejects.toThrow(/malformed.*data\.0\.embedding\.0/);
    body = JSON.stringify({ embeddings: [] });
    await expect(embedder.embed(["x"])).rejects.toThrow(/malformed/);
    body = JSON.stringify({ data: [{ index: 0, embedding: [1] }] });
    await expect(embedder.embed(["x", "y"])).rejects.toThrow(/1 embeddings for 2 inputs/);
    body = JSON.stringify({
      data: [
        { index: 0, embedding: [1] },
        { index: 0, embedding: [2] },
      ],
    });
    await expect(embedder.embed(["x", "y"])).rejects.toThrow(/repeated embedding index 0/);
    await expect(embedder.embed(["x", "y"])).rejects.toMatchObject({ retryable: false });
  });

  it("times out on a server that never answers", async () => {
    const { baseUrl } = await fakeServer(() => {});
    const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m", timeoutMs: 150 });
    const error = await embedder.embed(["x"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).message).toMatch(/timed out after 150 ms/);
  });

  it("passes the caller's abort through as an AbortError, not as a failure", async () => {
    const { baseUrl } = await fakeServer(() => {});
    const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(embedder.embed(["x"], controller.signal)).rejects.toMatchObject({ name: "AbortError" });
  });

  it("reports a refused connection as retryable", async () => {
    const { baseUrl } = await fakeServer(reversed);
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    const error = await new OpenAICompatibleEmbedder({ baseUrl, model: "m" })
      .embed(["x"])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it("recovers through embedCached from a server error", async () => {
    let calls = 0;
    const { baseUrl } = await fakeServer((req, res) => {
      calls++;
      if (calls === 1) json(res, 503, "warming up");
      else reversed(req, res);
    });
    const dir = mkdtempSync(join(tmpdir(), "umbra-openai-"));
    const cache = new EmbeddingCache({ dir });
    try {
      const embedder = new OpenAICompatibleEmbedder({ baseUrl, model: "m" });
      const items = ["one", "two", "three"].map((text) => ({ hash: text, text }));
      const result = await embedCached(embedder, cache, items, { retryDelayMs: 1 });
      expect(result.embedded).toBe(3);
      expect(result.vectors.get("two")).toEqual(Float32Array.from([3, 116, 1]));
      expect(calls).toBe(2);
      expect(cache.count(embedder.id)).toBe(3);
    } finally {
      cache.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
