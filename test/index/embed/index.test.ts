import { describe, expect, it } from "vitest";
import {
  CodeModelEmbedder,
  createEmbedder,
  EmbeddingError,
  OnnxLocalEmbedder,
  OpenAICompatibleEmbedder,
  trainCodeModel,
} from "../../../src/index/embed/index.js";

describe("createEmbedder", () => {
  it("builds the code-model embedder from the trained model it is given", async () => {
    const codeModel = trainCodeModel(["parse http response", "parse http request", "render html page"], {
      dimensions: 8,
    });
    const embedder = createEmbedder({ provider: "code-model" }, { codeModel });
    expect(embedder).toBeInstanceOf(CodeModelEmbedder);
    expect(embedder.id).toBe(`umbra-code-ppmi-svd-${codeModel.hash.slice(0, 16)}`);
    const [vector] = await embedder.embed(["parseHttp"]);
    expect(vector?.length).toBe(8);
    expect(() => createEmbedder({ provider: "code-model" })).toThrow(EmbeddingError);
  });

  it("builds the OpenAI-compatible and ONNX embedders", () => {
    const openai = createEmbedder({
      provider: "openai",
      baseUrl: "http://127.0.0.1:11434/v1",
      model: "nomic-embed-text",
      dimensions: 768,
    });
    expect(openai).toBeInstanceOf(OpenAICompatibleEmbedder);
    expect(openai.id).toBe("openai:http://127.0.0.1:11434/v1:nomic-embed-text");
    expect(openai.dimensions).toBe(768);
    const onnx = createEmbedder({ provider: "onnx", dir: "/nonexistent/model" });
    expect(onnx).toBeInstanceOf(OnnxLocalEmbedder);
    expect(() => createEmbedder({ provider: "magic" } as never)).toThrow(/unknown embedding provider magic/);
  });
});
