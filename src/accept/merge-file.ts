/**
 * Three-way text merge through `git merge-file` (real git, on files in a private temporary folder: no
 * repository, nothing in the user's folder), and the conflicting regions of its output.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PRIVATE_FILE } from "../config/private.js";
import { keptLines } from "../workspace/line-diff.js";
import { AcceptError } from "./errors.js";

/** How conflicts are settled: not at all (reported), the user's side, the agent's, or markers in the text. */
export type MergeStyle = "report" | "ours" | "theirs" | "markers";

/** One conflicting region, placed in the user's file. */
export interface ConflictHunk {
  /** The first line of the region in the user's file (1-based; with `lines` 0, the line it comes before). */
  line: number;
  /** How many lines of the user's file the region spans. */
  lines: number;
  /** The first lines of each side, shortened, for the user to recognise the region. */
  yours: string;
  agent: string;
}

export interface TextMerge {
  /** The merged bytes (with conflict markers where `conflicts` > 0 and the style is report or markers). */
  merged: Buffer;
  conflicts: number;
}

const LABELS = ["-L", "yours", "-L", "base", "-L", "agent"];
const MAX_OUTPUT = 1024 * 1024 * 1024;

/** Merges `base`→`theirs` into `ours` with `git merge-file -p --diff3` (labels yours, base, agent). */
export async function mergeTexts(
  ours: Buffer,
  base: Buffer,
  theirs: Buffer,
  style: MergeStyle,
): Promise<TextMerge> {
  const scratch = await mkdtemp(join(tmpdir(), "umbra-merge-"));
  try {
    const names = ["yours", "base", "agent"].map((name) => join(scratch, name));
    await Promise.all(
      [ours, base, theirs].map((data, i) => writeFile(names[i] as string, data, { mode: PRIVATE_FILE })),
    );
    const side = style === "ours" ? ["--ours"] : style === "theirs" ? ["--theirs"] : [];
    return await new Promise<TextMerge>((done, fail) => {
      execFile(
        "git",
        ["merge-file", "-p", "--diff3", ...side, ...LABELS, ...names],
        {
          cwd: scratch,
          encoding: "buffer",
          maxBuffer: MAX_OUTPUT,
          // no repository is looked for above the scratch folder
          env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(scratch) },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
          if (code >= 0 && code < 128) return done({ merged: stdout, conflicts: code });
          fail(
            new AcceptError(
              "MERGE_FAILED",
              `git merge-file failed: ${stderr.toString("utf8").trim() || error?.message}`,
            ),
          );
        },
      );
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Lines of a text (bytes as latin1, so that nothing is lost), without the final newline's empty line. */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function preview(lines: readonly string[]): string {
  const text = Buffer.from(lines.slice(0, 3).join("\n"), "latin1").toString("utf8");
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

interface Region {
  /** Index in the output of the `<<<<<<<` line. */
  start: number;
  /** Index in the output just after the `>>>>>>>` line. */
  end: number;
  yours: string[];
  agent: string[];
}

/** The conflict regions of `git merge-file --diff3` output (labels yours, base, agent). */
function regions(out: readonly string[]): Region[] {
  const found: Region[] = [];
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== "<<<<<<< yours") continue;
    const base = out.indexOf("||||||| base", i);
    const split = out.indexOf("=======", base);
    const close = out.indexOf(">>>>>>> agent", split);
    if (base < 0 || split < 0 || close < 0) break;
    found.push({
      start: i,
      end: close + 1,
      yours: out.slice(i + 1, base),
      agent: out.slice(split + 1, close),
    });
    i = close;
  }
  return found;
}

/**
 * The conflicting regions of a merge's output, each placed in the user's file (`ours`, latin1): the
 * output is the user's lines with the agent's clean changes and the conflict blocks, so the lines of
 * each "yours" block are found in the user's file by a line diff of the two.
 */
export function conflictHunks(ours: string, output: string): ConflictHunk[] {
  const user = splitLines(ours);
  const out = splitLines(output);
  // output line index → user line index, for lines the two have in common
  const toUser = keptLines(out, user);
  return regions(out).map((region) => {
    const mapped: number[] = [];
    for (let k = region.start + 1; k <= region.start + region.yours.length; k++) {
      const at = toUser.get(k);
      if (at !== undefined) mapped.push(at);
    }
    let next = user.length;
    for (let k = region.end; k < out.length; k++) {
      const at = toUser.get(k);
      if (at !== undefined) {
        next = at;
        break;
      }
    }
    const first = mapped[0] ?? next;
    const last = mapped[mapped.length - 1];
    return {
      line: first + 1,
      lines: last === undefined ? 0 : last - first + 1,
      yours: preview(region.yours),
      agent: preview(region.agent),
    };
  });
}
