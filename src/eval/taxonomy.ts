import { readFileSync } from "node:fs";
import { parseTranscript, type SessionRecord } from "../agent/session.js";

/**
 * Failure taxonomy: why a task failed, read from the agent's transcript by small named rules. The first
 * rule that matches (in RULES order) is the task's category; every matching rule is kept as a signal.
 */

export type FailureCategory =
  | "model-error"
  | "step-limit"
  | "sandbox-denied-retry"
  | "edit-failed"
  | "search-missed"
  | "read-range-too-small"
  | "same-file-reread"
  | "test-output-truncated"
  | "done-without-tests"
  | "tests-edited"
  | "no-change"
  | "wrong-solution";

/** What the rules look at. */
export interface TaxonomyInput {
  records: readonly SessionRecord[];
  /** The agent's final status (done, max-steps, model-error, …), or "error" when it crashed. */
  status: string;
  /** Files the reference solution changes (the files that matter), when known. */
  relevantFiles: readonly string[];
  changedFiles: readonly string[];
  testsEdited: readonly string[];
}

export interface TaxonomyRule {
  category: FailureCategory;
  /** The rule in words, for the reports. */
  description: string;
  test: (input: TaxonomyInput) => boolean;
}

interface Call {
  name: string;
  input: Record<string, unknown>;
  ok: boolean;
  output: string;
  step: number;
}

/** Tool calls with their results, in order. */
export function callsOf(records: readonly SessionRecord[]): Call[] {
  const calls: Call[] = [];
  const byId = new Map<string, Call>();
  for (const record of records) {
    if (record.type === "tool-call") {
      const call: Call = {
        name: record.name,
        input: (record.input ?? {}) as Record<string, unknown>,
        ok: false,
        output: "",
        step: record.step,
      };
      calls.push(call);
      byId.set(record.id, call);
    } else if (record.type === "tool-result") {
      const call = byId.get(record.id);
      if (call) {
        call.ok = record.ok;
        call.output = record.output;
      }
    }
  }
  return calls;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");
const isEdit = (call: Call) => call.name === "edit" || call.name === "apply_patch";
const editedPaths = (call: Call): string[] => {
  if (call.name === "edit") return [str(call.input.path)];
  const patch = str(call.input.patch);
  return [...patch.matchAll(/^\+\+\+ (?:b\/)?(\S+)/gm)].map((m) => m[1] ?? "");
};
const mentions = (text: string, file: string) => text.includes(file);

export const RULES: readonly TaxonomyRule[] = [
  {
    category: "model-error",
    description: "the model call failed (after retries) or the agent crashed",
    test: (i) => i.status === "model-error" || i.status === "error",
  },
  {
    category: "step-limit",
    description: "the agent was stopped by its step, time or token budget",
    test: (i) => ["max-steps", "max-time", "max-tokens"].includes(i.status),
  },
  {
    category: "tests-edited",
    description: "the agent changed test files (they were restored before grading)",
    test: (i) => i.testsEdited.length > 0,
  },
  {
    category: "sandbox-denied-retry",
    description:
      "the agent ran a command the sandbox blocked, then ran it again (2+ blocked runs of one command)",
    test: (i) => {
      const blocked = new Map<string, number>();
      for (const call of callsOf(i.records)) {
        if (call.name !== "run_command" || call.ok || !/^sandbox: /m.test(call.output)) continue;
        const key = str(call.input.command);
        blocked.set(key, (blocked.get(key) ?? 0) + 1);
      }
      return [...blocked.values()].some((n) => n >= 2);
    },
  },
  {
    category: "edit-failed",
    description: "an edit of a file failed and no later edit of that file succeeded",
    test: (i) => {
      const calls = callsOf(i.records).filter(isEdit);
      return calls.some(
        (call, n) =>
          !call.ok &&
          editedPaths(call).some(
            (path) => !calls.slice(n + 1).some((later) => later.ok && editedPaths(later).includes(path)),
          ),
      );
    },
  },
  {
    category: "search-missed",
    description:
      "the agent searched, no search result named a file the reference solution changes, and it never opened one",
    test: (i) => {
      if (i.relevantFiles.length === 0) return false;
      const calls = callsOf(i.records);
      const searches = calls.filter((c) => c.name === "search_code" || c.name === "list_files");
      if (searches.length === 0) return false;
      const found = searches.some((s) => i.relevantFiles.some((f) => mentions(s.output, f)));
      const opened = calls.some(
        (c) =>
          (c.name === "read_file" || isEdit(c)) &&
          i.relevantFiles.some((f) => editedPaths(c).includes(f) || str(c.input.path) === f),
      );
      return !found && !opened;
    },
  },
  {
    category: "read-range-too-small",
    description:
      "every read of a file the solution changes showed less than half of it (or was cut) and it was never read on",
    test: (i) => {
      const reads = callsOf(i.records).filter((c) => c.name === "read_file" && c.ok);
      return i.relevantFiles.some((file) => {
        const mine = reads.filter((r) => str(r.input.path) === file);
        if (mine.length === 0) return false;
        const shown = new Set<number>();
        let total = 0;
        for (const read of mine) {
          const header = /\((\d+) lines\), lines (\d+)-(\d+):/.exec(read.output);
          if (!header) continue;
          total = Number(header[1]);
          for (let n = Number(header[2]); n <= Number(header[3]); n++) shown.add(n);
        }
        return total > 0 && shown.size * 2 < total;
      });
    },
  },
  {
    category: "same-file-reread",
    description: "the agent read the same file 3+ times without editing it in between",
    test: (i) => {
      const sinceEdit = new Map<string, number>();
      for (const call of callsOf(i.records)) {
        if (isEdit(call) && call.ok) for (const path of editedPaths(call)) sinceEdit.delete(path);
        if (call.name !== "read_file") continue;
        const path = str(call.input.path);
        const n = (sinceEdit.get(path) ?? 0) + 1;
        sinceEdit.set(path, n);
        if (n >= 3) return true;
      }
      return false;
    },
  },
  {
    category: "test-output-truncated",
    description: "the output of a failing test run was cut (output limit) and the agent did not get past it",
    test: (i) =>
      callsOf(i.records).some(
        (c) =>
          c.name === "run_command" &&
          !c.ok &&
          /\[\.\.\. \d+ characters cut \.\.\.\]|output was cut by the sandbox's output limit/.test(c.output),
      ),
  },
  {
    category: "no-change",
    description: "the agent changed nothing",
    test: (i) => i.changedFiles.length === 0,
  },
  {
    category: "done-without-tests",
    description: "the agent declared the task done without running a command after its last edit",
    test: (i) => {
      const calls = callsOf(i.records);
      const lastEdit = calls.map(isEdit).lastIndexOf(true);
      return (
        i.records.length > 0 &&
        i.status === "done" &&
        !calls.slice(lastEdit + 1).some((c) => c.name === "run_command")
      );
    },
  },
];

/** The category of a failed task and every rule that matched. */
export function classifyFailure(input: TaxonomyInput): {
  category: FailureCategory;
  signals: FailureCategory[];
} {
  const signals = RULES.filter((rule) => rule.test(input)).map((rule) => rule.category);
  return { category: signals[0] ?? "wrong-solution", signals };
}

export const CATEGORY_DESCRIPTIONS: Record<FailureCategory, string> = {
  ...(Object.fromEntries(RULES.map((r) => [r.category, r.description])) as Record<FailureCategory, string>),
  "wrong-solution": "none of the rules above: the change is wrong or incomplete",
};

/** The records of a transcript file (lines that are not JSON are skipped). */
export function readTranscript(file: string): SessionRecord[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return parseTranscript(text);
}
