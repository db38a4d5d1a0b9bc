import { describe, expect, it } from "vitest";
import { classifyContent, hasBinaryExtension, sha256Hex } from "../../src/workspace/index.js";

describe("hashing and content classification", () => {
  it("hashes bytes with sha256", () => {
    expect(sha256Hex(Buffer.from("abc"))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("abc")).toBe(sha256Hex(Buffer.from("abc")));
  });

  it("classifies UTF-8 text, including multi-byte characters and an empty file", () => {
    expect(classifyContent(Buffer.from("const π = 3.14; // ✓ 日本\n"))).toBe("text");
    expect(classifyContent(Buffer.alloc(0))).toBe("text");
  });

  it("classifies a NUL byte within the first 8 KiB as binary, but not one after it", () => {
    expect(classifyContent(Buffer.from([0x61, 0x00, 0x62]))).toBe("binary");
    const late = Buffer.alloc(9000, 0x61);
    late[8500] = 0;
    expect(classifyContent(late)).toBe("text");
    late[8000] = 0;
    expect(classifyContent(late)).toBe("binary");
  });

  it("classifies bytes that are not UTF-8 as invalid-utf8", () => {
    expect(classifyContent(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe("invalid-utf8"); // latin-1 "café"
    expect(classifyContent(Buffer.from([0xc3]))).toBe("invalid-utf8"); // truncated sequence
  });

  it("classifies known binary extensions as binary whatever the bytes", () => {
    expect(classifyContent(Buffer.from("looks like text"), "img/logo.PNG")).toBe("binary");
    expect(classifyContent(Buffer.from("looks like text"), "src/logo.ts")).toBe("text");
    expect(hasBinaryExtension("a/b.pdf")).toBe(true);
    expect(hasBinaryExtension("a.dir/Makefile")).toBe(false);
    expect(hasBinaryExtension(".bin")).toBe(false);
  });
});
