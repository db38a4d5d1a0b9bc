import { describe, expect, it } from "vitest";
import { type ProgressNote, progressNotes } from "../../src/mcp/progress.js";

describe("MCP progress from the engine's", () => {
  it("grows with each note, across the engine's phases", () => {
    const notes: ProgressNote[] = [];
    const report = progressNotes((note) => void notes.push(note));
    report({ message: "hashing files", done: 0, total: 10 });
    report({ message: "hashing files", done: 10, total: 10 });
    report({ message: "embedding chunks", done: 0, total: 40 });
    report({ message: "embedding chunks", done: 5, total: 40 });
    report({ message: "embedding chunks", done: 5, total: 40 });
    report({ message: "embedding chunks", done: 40, total: 40 });
    expect(notes).toEqual([
      { progress: 0, total: 10, message: "hashing files" },
      { progress: 10, total: 10, message: "hashing files" },
      { progress: 15, total: 50, message: "embedding chunks" },
      { progress: 50, total: 50, message: "embedding chunks" },
    ]);
    for (let i = 1; i < notes.length; i++)
      expect(notes[i]?.progress).toBeGreaterThan(notes[i - 1]?.progress ?? Number.POSITIVE_INFINITY);
  });
});
