import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { rename } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CodeModelEmbedder,
  serializeCodeModel,
  trainCodeModel,
} from "../../../src/index/embed/code-model.js";
import { EmbeddingError } from "../../../src/index/embed/embedder.js";
import { openStoredCodeModel } from "../../../src/index/embed/stored-code-model.js";
import { NotIndexedError, openEmbedder } from "../../../src/index/embedders.js";
import { cleanup, tempDir } from "../../helpers/workspace.js";
import { syntheticCodeCorpus } from "./synthetic.js";

const model = trainCodeModel(syntheticCodeCorpus({ chunks: 300, identifiers: 600, seed: 7 }), {
  dimensions: 16,
});
const bytes = Buffer.from(serializeCodeModel(model));
const whole = new CodeModelEmbedder(model);
/** Known tokens, repeated ones, unknown ones, none at all. */
const TEXTS = [
  model.vocabulary.slice(0, 12).join(" "),
  `${model.vocabulary[3]} ${model.vocabulary[3]} ${model.vocabulary[40]}_${model.vocabulary[5]} zzqqxx`,
  "qqqqzz wwwwvv",
  "",
];

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await tempDir("stored-model");
  file = join(dir, "code-model.bin");
  writeFileSync(file, bytes);
});
afterEach(async () => {
  await cleanup(dir);
});

function open() {
  const embedder = openStoredCodeModel(file);
  if (!embedder) throw new Error("no model");
  return embedder;
}

async function expectSameVectors(embedder: { embed(texts: string[]): Promise<Float32Array[]> }) {
  const got = await embedder.embed(TEXTS);
  TEXTS.forEach((text, i) => {
    expect(Buffer.from((got[i] as Float32Array).buffer)).toEqual(Buffer.from(whole.embedText(text).buffer));
  });
}

describe("openStoredCodeModel", () => {
  it("checks the model whole the first time, then embeds from its header and rows with bit-identical vectors", async () => {
    const first = open();
    expect(first).toBeInstanceOf(CodeModelEmbedder); // read whole and hash-checked
    const stamp = `${file}.verified`;
    expect(statSync(stamp).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(stamp, "utf8")).hash).toBe(model.hash);
    await expectSameVectors(first);

    const second = open();
    expect(second).not.toBeInstanceOf(CodeModelEmbedder); // the stamp proved the file is the one checked
    expect(second.id).toBe(whole.id);
    expect(second.dimensions).toBe(16);
    await expectSameVectors(second);
  });

  it("notices a model changed in place (same size, same inode): it is checked whole again and the damage is an error", () => {
    // an old modification time first: the rewrite below then differs from it even within one clock tick
    utimesSync(file, new Date("2001-01-01"), new Date("2001-01-01"));
    open();
    const damaged = Buffer.from(bytes);
    const at = damaged.length - model.idf.length * 4 - 8; // a vector component
    damaged[at] = (damaged[at] as number) ^ 0xff;
    writeFileSync(file, damaged);
    expect(() => openStoredCodeModel(file)).toThrow(/does not match its hash/);
  });

  it("rebuilds a corrupt or foreign stamp without an error", async () => {
    const stamp = `${file}.verified`;
    for (const garbage of ["{not json", JSON.stringify({ hash: model.hash }), "\0\0\0"]) {
      writeFileSync(stamp, garbage);
      const embedder = open();
      expect(embedder).toBeInstanceOf(CodeModelEmbedder);
      await expectSameVectors(embedder);
      expect(JSON.parse(readFileSync(stamp, "utf8")).hash).toBe(model.hash);
    }
    // a stamp of another file (the model replaced by an identical copy: another inode)
    await rename(file, `${file}.old`);
    writeFileSync(file, bytes);
    expect(open()).toBeInstanceOf(CodeModelEmbedder);
    expect(open()).not.toBeInstanceOf(CodeModelEmbedder);
  });

  it("refuses to mix two models: a model replaced after open is an error on the next embed", async () => {
    open();
    const embedder = open();
    const other = trainCodeModel(syntheticCodeCorpus({ chunks: 300, identifiers: 600, seed: 8 }), {
      dimensions: 16,
    });
    writeFileSync(`${file}.new`, serializeCodeModel(other));
    await rename(`${file}.new`, file);
    await expect(embedder.embed(TEXTS)).rejects.toThrow(EmbeddingError);
    await expect(embedder.embed(TEXTS)).rejects.toThrow(/changed since the index was opened/);
  });

  it("is undefined without a model file, and a truncated model is an error", () => {
    expect(openStoredCodeModel(join(dir, "none.bin"))).toBeUndefined();
    writeFileSync(file, bytes.subarray(0, bytes.length - 4));
    expect(() => openStoredCodeModel(file)).toThrow(EmbeddingError);
  });
});

describe("openEmbedder for searching", () => {
  const config = { provider: "code-model", dimensions: 16 } as const;

  it("says the index is missing or unreadable rather than failing with the file's error", async () => {
    await expect(openEmbedder(config, { modelFile: join(dir, "none.bin"), env: {} })).rejects.toThrow(
      NotIndexedError,
    );
    writeFileSync(file, "not a model");
    await expect(openEmbedder(config, { modelFile: file, env: {} })).rejects.toThrow(
      /code model is unreadable.*run umbra index/,
    );
  });

  it("is stamped by the indexer's open, whether it learns the model or reads it: the first search reads only rows", async () => {
    const learned = join(dir, "learned.bin");
    const trainingChunks = async () => syntheticCodeCorpus({ chunks: 200, identifiers: 400, seed: 3 });
    await openEmbedder(config, { modelFile: learned, env: {}, trainingChunks });
    expect(statSync(`${learned}.verified`).mode & 0o777).toBe(0o600);
    expect(openStoredCodeModel(learned)).not.toBeInstanceOf(CodeModelEmbedder);

    await openEmbedder(config, { modelFile: file, env: {}, trainingChunks }); // reads the one there
    expect(openStoredCodeModel(file)).not.toBeInstanceOf(CodeModelEmbedder);
  });

  it("embeds with the stored model, whatever the configured vector size", async () => {
    const embedder = await openEmbedder({ ...config, dimensions: 64 }, { modelFile: file, env: {} });
    expect(embedder.dimensions).toBe(16);
    await expectSameVectors(embedder);
  });
});
