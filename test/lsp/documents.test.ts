import { describe, expect, it } from "vitest";
import { DocumentStore, type WantedDocument } from "../../src/lsp/documents.js";

function store(): { docs: DocumentStore; sent: [string, unknown][] } {
  const sent: [string, unknown][] = [];
  return { docs: new DocumentStore((method, params) => sent.push([method, params])), sent };
}

const want = (relPath: string, text: string | null, overlay = true): WantedDocument => ({
  uri: `file:///w/${relPath}`,
  relPath,
  languageId: "typescript",
  text,
  overlay,
});

describe("DocumentStore", () => {
  it("sends the minimal didOpen/didChange/didClose and never reuses a version", async () => {
    const { docs, sent } = store();
    const base: Record<string, string> = { "a.ts": "A", "b.ts": "B" };
    const readBase = async (path: string): Promise<string | undefined> => base[path];
    await docs.switchTo([want("a.ts", "A1"), want("b.ts", "B1")], readBase, 10);
    expect(sent.map(([m]) => m)).toEqual(["textDocument/didOpen", "textDocument/didOpen"]);
    sent.length = 0;
    // Branch 2 changed only b.ts: a.ts goes back to the user's folder content, b.ts to branch 2's.
    const changed = await docs.switchTo([want("b.ts", "B2")], readBase, 10);
    expect([...changed].sort()).toEqual(["file:///w/a.ts", "file:///w/b.ts"]);
    expect(sent).toEqual([
      [
        "textDocument/didChange",
        { textDocument: { uri: "file:///w/a.ts", version: 3 }, contentChanges: [{ text: "A" }] },
      ],
      [
        "textDocument/didChange",
        { textDocument: { uri: "file:///w/b.ts", version: 4 }, contentChanges: [{ text: "B2" }] },
      ],
    ]);
    sent.length = 0;
    // The same state again sends nothing.
    expect((await docs.switchTo([want("b.ts", "B2")], readBase, 10)).size).toBe(0);
    expect(sent).toEqual([]);
    // A file that must be absent is closed; a bump re-sends the text under a new version.
    await docs.switchTo([want("b.ts", null)], readBase, 10);
    expect(sent.map(([m]) => m)).toEqual(["textDocument/didClose"]);
    expect(docs.bump("file:///w/a.ts")).toBe(5);
    docs.reset();
    await docs.switchTo([want("a.ts", "A")], readBase, 10);
    expect(docs.get("file:///w/a.ts")?.version).toBe(6);
  });

  it("closes the least recently used clean documents beyond the cap", async () => {
    const { docs, sent } = store();
    const readBase = async (): Promise<string | undefined> => "same";
    for (const name of ["a", "b", "c", "d"])
      await docs.switchTo([want(`${name}.ts`, "same", false)], readBase, 2);
    expect(
      docs
        .held()
        .map((d) => d.relPath)
        .sort(),
    ).toEqual(["c.ts", "d.ts"]);
    expect(sent.filter(([m]) => m === "textDocument/didClose")).toHaveLength(2);
  });

  it("closes a branch's document that does not exist in the user's folder", async () => {
    const { docs, sent } = store();
    const readBase = async (): Promise<string | undefined> => undefined;
    await docs.switchTo([want("new.ts", "x")], readBase, 10);
    await docs.switchTo([], readBase, 10);
    expect(sent.map(([m]) => m)).toEqual(["textDocument/didOpen", "textDocument/didClose"]);
    expect(docs.size).toBe(0);
  });
});
