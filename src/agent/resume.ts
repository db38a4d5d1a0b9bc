import { type Branch, fork, openBranch } from "../shadow/index.js";
import { applyPatch, parsePatch } from "./edit/index.js";
import { readTranscript, type SessionRecord } from "./session.js";

/** Where an earlier session left off, ready for a new session to continue it. */
export interface ResumePoint {
  /** The earlier session's id. */
  from: string;
  task: string;
  /** Holds the earlier session's changes. */
  branch: Branch;
  /** Told to the model: what the earlier session did and where it stopped. */
  briefing: string;
}

/** The most tool calls the briefing lists (the latest ones). */
const BRIEFED_CALLS = 30;

function inputSummary(input: unknown): string {
  const text = JSON.stringify(input) ?? "";
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Writes a session's final diff into a fresh branch; throws when it no longer applies. */
async function restoreDiff(branch: Branch, diff: string, from: string): Promise<void> {
  const contents = new Map<string, string | undefined>();
  for (const file of parsePatch(diff)) {
    for (const path of [file.oldPath, file.newPath, file.path]) {
      if (path && !contents.has(path)) contents.set(path, await branch.readText(path));
    }
  }
  const result = applyPatch(diff, (path) => contents.get(path));
  if (!result.ok) {
    const why = result.files.flatMap((file) =>
      file.ok ? [] : [`${file.path}: ${file.message ?? "failed"}`],
    );
    throw new Error(
      `the changes of session ${from} no longer apply to the folder (${why.join("; ")}); start a new session`,
    );
  }
  for (const file of result.files) {
    if (file.oldPath && file.oldPath !== file.path) branch.remove(file.oldPath);
    if (file.kind === "deleted") branch.remove(file.path);
    else branch.write(file.path, file.text ?? "");
  }
  await branch.materialize();
}

function briefing(id: string, records: readonly SessionRecord[], end: SessionRecord | undefined): string {
  const calls = new Map<string, string>();
  const lines: string[] = [];
  for (const record of records) {
    if (record.type === "tool-call") calls.set(record.id, `${record.name} ${inputSummary(record.input)}`);
    if (record.type === "tool-result")
      lines.push(`- ${calls.get(record.id) ?? record.name} -> ${record.ok ? "ok" : "failed"}`);
  }
  const stopped =
    end?.type === "end"
      ? `It stopped with status "${end.status}": ${end.message}`
      : "It was interrupted before it finished.";
  const changed =
    end?.type === "end" && end.changedFiles.length > 0 ? end.changedFiles.join(", ") : undefined;
  return [
    `[This session continues session ${id}. ${stopped}`,
    changed
      ? `Its changes (${changed}) are already in your branch: read the files before changing them again.`
      : "Whatever it changed is already in your branch.",
    lines.length > 0
      ? `Its tool calls${lines.length > BRIEFED_CALLS ? ` (the last ${BRIEFED_CALLS})` : ""}:\n${lines.slice(-BRIEFED_CALLS).join("\n")}`
      : "It made no tool calls.",
    "Continue the task from there.]",
  ].join("\n");
}

/**
 * Where session `id` left off. Its branch is reopened when it is still on disk (after a crash, or kept
 * with changes not accepted yet: every change the session's processes wrote, and their bases);
 * otherwise a new branch gets the diff the session ended with.
 */
export async function resumePoint(
  root: string,
  id: string,
  env: NodeJS.ProcessEnv,
  onWarning?: (message: string) => void,
): Promise<ResumePoint> {
  const records = await readTranscript(root, id, env);
  const start = records.find((record) => record.type === "session");
  const end = records.findLast((record) => record.type === "end");
  let branch: Branch | undefined;
  // the session's branch, kept on disk after a crash or with its changes not yet accepted
  if (start?.type === "session" && start.branch) {
    branch = await openBranch(root, start.branch, { env }).catch(() => undefined);
    if (!branch && !end) onWarning?.(`the branch of session ${id} is gone; its changes cannot be recovered`);
  }
  if (!branch) {
    branch = await fork(root, { env });
    if (end?.type === "end" && end.diff) {
      try {
        await restoreDiff(branch, end.diff, id);
      } catch (error) {
        await branch.discard();
        throw error;
      }
    }
  }
  return {
    from: id,
    task: start?.type === "session" ? start.task : "",
    branch,
    briefing: briefing(id, records, end),
  };
}
