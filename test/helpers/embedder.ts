import { createHash } from "node:crypto";
import type { Embedder } from "../../src/index/embed/index.js";
import { codeTokens } from "../../src/index/tokenize.js";

/**
 * A deterministic test embedder (hashed bag of tokens) that counts how many texts it embedded, so tests
 * can assert what the cache saved. Tests only; the product uses real models.
 */
export class CountingEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions = 32;
  texts = 0;
  calls = 0;

  constructor(name = "counting") {
    this.id = `test-${name}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    this.texts += texts.length;
    return texts.map((text) => {
      const vector = new Float32Array(this.dimensions);
      for (const token of codeTokens(text)) {
        const bucket = createHash("md5").update(token).digest().readUInt32LE(0) % this.dimensions;
        vector[bucket] = (vector[bucket] ?? 0) + 1;
      }
      const norm = Math.hypot(...vector) || 1;
      return vector.map((x) => x / norm);
    });
  }
}
