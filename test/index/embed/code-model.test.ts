import { describe, expect, it } from "vitest";
import {
  type CodeModel,
  CodeModelEmbedder,
  deserializeCodeModel,
  serializeCodeModel,
  trainCodeModel,
} from "../../../src/index/embed/code-model.js";
import { EmbeddingError } from "../../../src/index/embed/embedder.js";
import { codeTokens, identifiers } from "../../../src/index/tokenize.js";
import { syntheticCodeCorpus } from "./synthetic.js";

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

const NETWORK = [
  "socket",
  "packet",
  "connect",
  "send",
  "receive",
  "port",
  "tcp",
  "buffer",
  "stream",
  "address",
];
const MATH = [
  "matrix",
  "vector",
  "multiply",
  "transpose",
  "determinant",
  "inverse",
  "row",
  "column",
  "scalar",
  "eigen",
];
const FILLER = ["const", "return", "function", "value", "result", "data", "item", "index", "count", "list"];

/** Chunks that each talk about one topic, with shared filler words. */
function topicCorpus(chunks: number, seed = 3): string[] {
  const random = prng(seed);
  const pick = (words: string[]) => words[Math.floor(random() * words.length)] as string;
  const out: string[] = [];
  for (let c = 0; c < chunks; c++) {
    const topic = c % 2 === 0 ? NETWORK : MATH;
    const words: string[] = [];
    for (let w = 0; w < 40; w++) words.push(random() < 0.6 ? pick(topic) : pick(FILLER));
    out.push(`function f${c}() { ${words.join(" ")} }`);
  }
  return out;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
}

function shuffled<T>(list: readonly T[], seed: number): T[] {
  const random = prng(seed);
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const corpus = topicCorpus(400);
const model = trainCodeModel(corpus, { dimensions: 16 });

describe("trainCodeModel", () => {
  it("gives a bit-identical model for the same documents in any order", () => {
    const again = trainCodeModel(shuffled(corpus, 11), { dimensions: 16 });
    expect(again.hash).toBe(model.hash);
    expect(again.vocabulary).toEqual(model.vocabulary);
    expect(Buffer.from(again.vectors.buffer).equals(Buffer.from(model.vectors.buffer))).toBe(true);
    expect(Buffer.from(again.idf.buffer).equals(Buffer.from(model.idf.buffer))).toBe(true);
  });

  it("is deterministic on a larger, realistic corpus read once from a generator", () => {
    const docs = syntheticCodeCorpus({ chunks: 1500, identifiers: 3000, seed: 5 });
    const options = { dimensions: 32, vocabularySize: 800 };
    const a = trainCodeModel(docs, options);
    const b = trainCodeModel(
      (function* () {
        yield* shuffled(docs, 2);
      })(),
      options,
    );
    expect(b.hash).toBe(a.hash);
    expect(a.vocabulary.length).toBe(800);
    // A different seed changes the random projection, and so the content hash.
    expect(trainCodeModel(docs, { ...options, seed: 2 }).hash).not.toBe(a.hash);
  });

  it("places tokens that occur together closer than tokens that do not", () => {
    const embedder = new CodeModelEmbedder(model);
    const word = (token: string) => embedder.wordVector(token) as Float32Array;
    let within = 0;
    let across = 0;
    let pairs = 0;
    for (const a of NETWORK.slice(0, 5)) {
      for (const b of NETWORK.slice(5)) within += cosine(word(a), word(b));
      for (const b of MATH.slice(5)) across += cosine(word(a), word(b));
      pairs += 5;
    }
    expect(within / pairs).toBeGreaterThan(across / pairs + 0.3);
    // Every single related pair beats every unrelated one for a few anchors.
    for (const anchor of ["socket", "matrix"]) {
      const own = anchor === "socket" ? NETWORK : MATH;
      const other = anchor === "socket" ? MATH : NETWORK;
      const worstRelated = Math.min(
        ...own.filter((t) => t !== anchor).map((t) => cosine(word(anchor), word(t))),
      );
      const bestUnrelated = Math.max(...other.map((t) => cosine(word(anchor), word(t))));
      expect(worstRelated).toBeGreaterThan(bestUnrelated);
    }
  });

  it("keeps the most frequent tokens seen at least twice, with idf from document frequency", () => {
    const small = trainCodeModel(["alpha beta beta", "alpha gamma", "alpha delta delta"], { dimensions: 4 });
    expect(small.vocabulary).toEqual(["alpha", "beta", "delta"]);
    const idf = (token: string) => small.idf[small.vocabulary.indexOf(token)] as number;
    expect(idf("alpha")).toBeCloseTo(Math.log(4 / 4) + 1, 5);
    expect(idf("beta")).toBeCloseTo(Math.log(4 / 2) + 1, 5);
    expect(trainCodeModel(["alpha beta beta"], { dimensions: 4, vocabularySize: 1 }).vocabulary).toEqual([
      "beta",
    ]);
  });

  it("pads vectors with zeros when the vocabulary is smaller than the dimensions", () => {
    const small = trainCodeModel(topicCorpus(40), { dimensions: 64 });
    expect(small.dimensions).toBe(64);
    expect(small.vocabulary.length).toBeLessThan(64);
    expect(small.vectors.length).toBe(small.vocabulary.length * 64);
    for (let i = 0; i < small.vocabulary.length; i++) {
      const row = small.vectors.subarray(i * 64, (i + 1) * 64);
      expect(norm(row)).toBeCloseTo(1, 4);
      expect(row.subarray(small.vocabulary.length).every((x) => x === 0)).toBe(true);
    }
  });

  it("trains an empty model from documents without tokens", () => {
    const empty = trainCodeModel(["", "+ - * /", "x"], { dimensions: 8 });
    expect(empty.vocabulary).toEqual([]);
    expect(new CodeModelEmbedder(empty).embedText("anything")).toEqual(new Float32Array(8));
  });

  it("tokenizes a text as the concatenation of its identifiers' tokens (what training relies on)", () => {
    const text = "const parseHTTPResponse = await get_user_id2(myVar, x, $el, __proto__); // TODO fixThis";
    expect(codeTokens(text)).toEqual(identifiers(text).flatMap((identifier) => codeTokens(identifier)));
  });
});

describe("serialization", () => {
  it("round-trips a model exactly", () => {
    const bytes = serializeCodeModel(model);
    const back = deserializeCodeModel(bytes);
    expect(back.hash).toBe(model.hash);
    expect(back.dimensions).toBe(model.dimensions);
    expect(back.vocabulary).toEqual(model.vocabulary);
    expect(back.vectors).toEqual(model.vectors);
    expect(back.idf).toEqual(model.idf);
    // Compact: a little more than the raw floats.
    expect(bytes.byteLength).toBeLessThan((model.vectors.length + model.idf.length) * 4 + 2048);
    const empty = trainCodeModel([""], { dimensions: 8 });
    expect(deserializeCodeModel(serializeCodeModel(empty))).toEqual(empty);
  });

  it("rejects damaged or foreign bytes", () => {
    const bytes = Buffer.from(serializeCodeModel(model));
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 100] = (flipped[flipped.length - 100] as number) ^ 0x40;
    expect(() => deserializeCodeModel(flipped)).toThrow(/hash/);
    expect(() => deserializeCodeModel(bytes.subarray(0, bytes.length - 4))).toThrow(EmbeddingError);
    expect(() => deserializeCodeModel(Buffer.from("not a model at all"))).toThrow(/magic/);
  });
});

describe("CodeModelEmbedder", () => {
  const embedder = new CodeModelEmbedder(model);

  it("has an id derived from the model hash and the model's dimensions", () => {
    expect(embedder.id).toBe(`umbra-code-ppmi-svd-${model.hash.slice(0, 16)}`);
    expect(embedder.dimensions).toBe(16);
    const other = new CodeModelEmbedder(trainCodeModel(corpus, { dimensions: 16, seed: 9 }));
    expect(other.id).not.toBe(embedder.id);
  });

  it("returns unit vectors, and a zero vector for a text with no known token", async () => {
    const [a, b, unknown, empty] = await embedder.embed([
      "socket.send(packet)",
      "matrix transpose",
      "zzyzx qwrtp",
      "",
    ]);
    expect(norm(a as Float32Array)).toBeCloseTo(1, 5);
    expect(norm(b as Float32Array)).toBeCloseTo(1, 5);
    expect(unknown).toEqual(new Float32Array(16));
    expect(empty).toEqual(new Float32Array(16));
  });

  it("embeds a query close to chunks about the same thing", async () => {
    const [query, network, math] = await embedder.embed([
      "receive from tcp port",
      "function readPacket(socket) { return socket.receive(buffer) }",
      "function invert(matrix) { return matrix.inverse().transpose() }",
    ]);
    expect(cosine(query as Float32Array, network as Float32Array)).toBeGreaterThan(
      cosine(query as Float32Array, math as Float32Array) + 0.2,
    );
  });

  it("weights tokens by idf and sublinear tf", () => {
    // "value" is in every other chunk's filler; "eigen" is a topic word: repeating the filler word
    // must not drown the topic word.
    const once = embedder.embedText("eigen value");
    const repeated = embedder.embedText("eigen value value value value value value value value");
    const eigen = embedder.embedText("eigen");
    const value = embedder.embedText("value");
    expect(cosine(repeated, eigen)).toBeGreaterThan(0.5);
    expect(cosine(repeated, value)).toBeGreaterThan(cosine(once, value));
  });

  it("rejects on an aborted signal and validates the model", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(["x"], controller.signal)).rejects.toMatchObject({ name: "AbortError" });
    const broken: CodeModel = { ...model, vectors: new Float32Array(3) };
    expect(() => new CodeModelEmbedder(broken)).toThrow(EmbeddingError);
  });
});
