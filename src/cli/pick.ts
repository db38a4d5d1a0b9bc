/**
 * Picking part of a branch's changes on a terminal, file by file and hunk by hunk (as `git add -p`):
 * each file's diff is shown with the question; a file taken in part becomes a change whose agent side
 * is its base with only the chosen hunks applied, which the accept then merges like any other.
 */
import { applyHunks, fileState, hunkCount } from "../accept/index.js";
import { changeDetail, formatDiff, type RecordedChange, shownAsText } from "../shadow/index.js";

/** Asks one question; undefined when there is no answer (no terminal, end of input). */
export type Ask = (question: string) => Promise<string | undefined>;

/** The texts of a change whose both sides are text files (the ones hunks can be picked of). */
async function texts(change: RecordedChange): Promise<{ base: string; branch: string } | undefined> {
  const { base, branch } = change;
  if (base.kind !== "file" || branch.kind !== "file") return undefined;
  const [a, b] = await Promise.all([base.load(), branch.load()]);
  // hunks as the diff shows them: a file it shows as binary is taken whole
  if (!shownAsText(a) || !shownAsText(b)) return undefined;
  return { base: a.toString("latin1"), branch: b.toString("latin1") };
}

/** The diff of one change, with `context` lines (shown before the question). */
async function sectionOf(change: RecordedChange): Promise<string> {
  const detail = changeDetail(change);
  if (!detail)
    return `${change.path}: umbra does not know what the agent started from (${change.base.kind === "unknown" ? change.base.why : ""})\n`;
  return formatDiff([detail], async () => undefined, { includeIgnored: true });
}

/** The hunks of a diff section, each with its header line. */
function hunksOf(section: string): string[] {
  return section.split(/(?=^@@ )/m).slice(1);
}

/**
 * Goes through the changes asking, for each, whether to take it: y (all of it), n (none), h (hunk by
 * hunk, for text files), q (stop: none of the rest). Returns the changes to accept.
 */
export async function pickChanges(
  changes: readonly RecordedChange[],
  ask: Ask,
  show: (text: string) => void,
): Promise<RecordedChange[]> {
  const picked: RecordedChange[] = [];
  for (const [n, change] of changes.entries()) {
    const section = await sectionOf(change);
    show(section);
    const both = await texts(change);
    const hunks = both ? hunkCount(both.base, both.branch) : 1;
    const options = hunks > 1 ? "[y]es, [n]o, [h]unks, [q]uit" : "[y]es, [n]o, [q]uit";
    const answer = ((await ask(`take ${change.path} (${n + 1}/${changes.length})? ${options} `)) ?? "q")
      .trim()
      .toLowerCase();
    if (answer.startsWith("q")) break;
    if (answer.startsWith("y")) picked.push(change);
    if (!answer.startsWith("h") || !both || hunks < 2) continue;
    const shown = hunksOf(section);
    const chosen: number[] = [];
    for (let hunk = 1; hunk <= hunks; hunk++) {
      show(shown[hunk - 1] ?? "");
      const reply = ((await ask(`take hunk ${hunk}/${hunks} of ${change.path}? [y]es, [n]o `)) ?? "n").trim();
      if (/^y/i.test(reply)) chosen.push(hunk);
    }
    if (chosen.length === 0) continue;
    if (chosen.length === hunks) {
      picked.push(change);
      continue;
    }
    const text = applyHunks(change.path, both.base, both.branch, chosen);
    const mode = change.branch.kind === "file" ? change.branch.mode : "100644";
    picked.push({ ...change, branch: fileState(Buffer.from(text, "latin1"), mode) });
  }
  return picked;
}
