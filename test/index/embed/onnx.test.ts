import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EmbeddingError } from "../../../src/index/embed/embedder.js";
import {
  loadTransformers,
  MISSING_TRANSFORMERS_MESSAGE,
  OnnxLocalEmbedder,
} from "../../../src/index/embed/onnx.js";

let root: string;
let modelDir: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "umbra-onnx-"));
  modelDir = join(root, "mini-lm");
  mkdirSync(join(modelDir, "onnx"), { recursive: true });
  writeFileSync(join(modelDir, "config.json"), JSON.stringify({ model_type: "bert", hidden_size: 3 }));
  writeFileSync(join(modelDir, "tokenizer.json"), "{}");
  writeFileSync(join(modelDir, "onnx", "model.onnx"), "weights");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function notFound(name: string): Error {
  return Object.assign(new Error(`Cannot find package '${name}' imported from /somewhere`), {
    code: "ERR_MODULE_NOT_FOUND",
  });
}

let installed = true;
try {
  createRequire(import.meta.url).resolve("@huggingface/transformers");
} catch {
  installed = false;
}

describe("OnnxLocalEmbedder", () => {
  it.skipIf(installed)("explains how to install @huggingface/transformers when it is missing", async () => {
    const error = await OnnxLocalEmbedder.create({ dir: modelDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toBe(
      "the onnx embedder needs the optional package @huggingface/transformers: npm i @huggingface/transformers",
    );
    await expect(new OnnxLocalEmbedder({ dir: modelDir }).embed(["x"])).rejects.toThrow(
      MISSING_TRANSFORMERS_MESSAGE,
    );
  });

  it("reports a missing package through an injected loader too, and other load failures as such", async () => {
    await expect(
      loadTransformers(() => Promise.reject(notFound("@huggingface/transformers"))),
    ).rejects.toThrow(MISSING_TRANSFORMERS_MESSAGE);
    // A dependency of the package missing is a different problem, and says so.
    await expect(loadTransformers(() => Promise.reject(notFound("onnxruntime-node")))).rejects.toThrow(
      /could not load @huggingface\/transformers: Cannot find package 'onnxruntime-node'/,
    );
    await expect(loadTransformers(() => Promise.resolve({ nothing: true }))).rejects.toThrow(
      /does not export/,
    );
  });

  it("runs a local model through transformers.js with mean pooling and normalisation, never remotely", async () => {
    const env = { allowRemoteModels: true, allowLocalModels: false, localModelPath: "/models/" };
    const opened: { model: string; options: Record<string, unknown> }[] = [];
    const calls: { texts: string[]; options: unknown }[] = [];
    const fake = {
      env,
      pipeline: async (task: string, model: string, options: Record<string, unknown>) => {
        expect(task).toBe("feature-extraction");
        // The flags must be set before the model is opened.
        expect(env.allowRemoteModels).toBe(false);
        opened.push({ model, options });
        return async (texts: string[], options: unknown) => {
          calls.push({ texts, options });
          const data = new Float32Array(texts.length * 3);
          texts.forEach((text, i) => {
            data.set([text.length, i, 0.5], i * 3);
          });
          return { dims: [texts.length, 3], data };
        };
      },
    };
    const embedder = await OnnxLocalEmbedder.create({
      dir: modelDir,
      importModule: async () => ({ default: fake }),
    });
    expect(env).toEqual({ allowRemoteModels: false, allowLocalModels: true, localModelPath: root + sep });
    expect(opened).toEqual([{ model: "mini-lm", options: { local_files_only: true, dtype: "fp32" } }]);
    expect(embedder.dimensions).toBe(3);
    const vectors = await embedder.embed(["a", "bcd"]);
    expect(vectors).toEqual([Float32Array.from([1, 0, 0.5]), Float32Array.from([3, 1, 0.5])]);
    expect(calls[0]?.options).toEqual({ pooling: "mean", normalize: true });
    await embedder.embed(["again"]);
    expect(opened).toHaveLength(1);
  });

  it("has an id that follows the model's content, not its location", () => {
    const a = new OnnxLocalEmbedder({ dir: modelDir });
    expect(a.id).toMatch(/^onnx:mini-lm:fp32:[0-9a-f]{16}$/);
    expect(new OnnxLocalEmbedder({ dir: modelDir }).id).toBe(a.id);
    writeFileSync(join(modelDir, "config.json"), JSON.stringify({ model_type: "bert", hidden_size: 4 }));
    expect(new OnnxLocalEmbedder({ dir: modelDir }).id).not.toBe(a.id);
  });

  it("fails clearly when the directory holds no model", async () => {
    const fake = {
      env: { allowRemoteModels: true, allowLocalModels: true, localModelPath: "" },
      pipeline: async () => {
        throw new Error("should not be called");
      },
    };
    const empty = join(root, "empty");
    mkdirSync(empty);
    await expect(OnnxLocalEmbedder.create({ dir: empty, importModule: async () => fake })).rejects.toThrow(
      /config\.json is missing/,
    );
  });
});
