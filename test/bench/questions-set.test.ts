import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SET = join(ROOT, "bench", "questions", "questions.json");

interface Answer {
  path: string;
  symbol: string;
  lines: [number, number];
}
interface QuestionSet {
  repos: Record<string, { commit: string; language: string }>;
  questions: { id: string; repo: string; question: string; answers: Answer[] }[];
}

describe("the questions benchmark's set", () => {
  it("has 60 or more questions over 5 or more pinned repositories in 3 or more languages", async () => {
    const set = JSON.parse(await readFile(SET, "utf8")) as QuestionSet;
    const repos = new Set(set.questions.map((q) => q.repo));
    expect(set.questions.length).toBeGreaterThanOrEqual(60);
    expect(repos.size).toBeGreaterThanOrEqual(5);
    expect(new Set([...repos].map((r) => set.repos[r]?.language)).size).toBeGreaterThanOrEqual(3);
    for (const r of repos) expect(set.repos[r]?.commit).toMatch(/^[0-9a-f]{40}$/);
    for (const q of set.questions) {
      expect(q.answers.length).toBeGreaterThan(0);
      for (const a of q.answers) {
        expect(a.symbol).toMatch(/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/);
        expect(a.lines[0]).toBeGreaterThanOrEqual(1);
        expect(a.lines[1]).toBeGreaterThanOrEqual(a.lines[0]);
      }
    }
  });

  it("has a held-out set of 50 or more questions over 5 or more other repositories in 3 languages", async () => {
    const dev = JSON.parse(await readFile(SET, "utf8")) as QuestionSet;
    const set = JSON.parse(
      await readFile(join(ROOT, "bench", "questions", "heldout.json"), "utf8"),
    ) as QuestionSet;
    const repos = new Set(set.questions.map((q) => q.repo));
    expect(set.questions.length).toBeGreaterThanOrEqual(50);
    expect(repos.size).toBeGreaterThanOrEqual(5);
    expect(new Set([...repos].map((r) => set.repos[r]?.language))).toEqual(
      new Set(["python", "typescript", "go"]),
    );
    expect([...repos].filter((r) => r in dev.repos)).toEqual([]);
    for (const r of repos) expect(set.repos[r]?.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it("passes the bench's selftest (scoring arithmetic, shape, answers at their commits when mirrors exist)", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(ROOT, "bench", "questions", "selftest.mjs"),
    ]);
    expect(stdout).toMatch(/^questions selftest: ok/);
  });
});
