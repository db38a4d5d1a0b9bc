/**
 * How the user settles one conflicting file (the web page's review, `umbra shadow apply --ours ...`):
 * keep their side (`ours`), take the agent's (`theirs`), write both with markers, or write the text the
 * user edited from the merge (`edited`). A settlement is taken only for a file that conflicts, and only
 * while the user's file still is the version the user saw when the request names it (`yoursSha256`, the
 * conflict's own): an edited text always names it, since it replaces the whole file.
 */
import type { RecordedChange } from "../shadow/recorded.js";
import { shownPath } from "../workspace/errors.js";
import { sha256Hex } from "../workspace/hash.js";
import { AcceptError } from "./errors.js";
import { type MergeOutcome, mergeChange, type Resolution } from "./merge.js";
import { fileState, type StateRecord, type UserEntry } from "./state.js";

export interface Settlement {
  choice: Resolution | "edited";
  /** With `edited`: the exact bytes to write. */
  content?: Buffer;
  /** The version of the user's file the user saw (a conflict's `yoursSha256`); refused when it changed since. */
  yoursSha256?: string;
}

/** What fits in an accept's answer for the user to edit: a merge of this size, UTF-8, without CR. */
const EDITABLE_BYTES = 1024 * 1024;

/** The version of the user's entry: the SHA-256 of a file's bytes; of `absent` or `link\0TARGET` else. */
export function userVersion(record: StateRecord): string {
  if (record.kind === "file") return record.sha256;
  return sha256Hex(record.kind === "link" ? `link\0${record.target}` : "absent");
}

/**
 * The merge with conflict markers as text the user may edit, when it is that: UTF-8, no carriage return
 * (a text area would turn CRLF into LF), at most 1 MiB. Else undefined: the file is settled only by choice.
 */
export function editableText(merged: Buffer | undefined): string | undefined {
  if (!merged || merged.length > EDITABLE_BYTES || merged.includes(0x0d)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(merged);
  } catch {
    return undefined;
  }
}

export function settlementOf(given: Resolution | Settlement): Settlement {
  return typeof given === "string" ? { choice: given } : given;
}

/**
 * The outcome of `change` settled as the user chose, given its plain merge `plain` (a conflict, else a
 * USAGE error) and the user's entry as read (a CHANGED error when it is not the version the user saw).
 */
export async function settle(
  change: RecordedChange,
  user: UserEntry,
  plain: MergeOutcome,
  settlement: Settlement,
  hunks: readonly number[] | undefined,
): Promise<MergeOutcome> {
  const path = shownPath(change.path);
  if (plain.kind !== "conflict")
    throw new AcceptError(
      "USAGE",
      `${path} is not in conflict: accept it without a resolution (nothing was written)`,
    );
  if (!user.state || !user.record) throw new AcceptError("USAGE", `${path} cannot be settled here`);
  const { choice, yoursSha256, content } = settlement;
  if (choice === "edited" && yoursSha256 === undefined)
    throw new AcceptError(
      "USAGE",
      `${path}: an edited text needs the yoursSha256 of the conflict it settles`,
    );
  if (yoursSha256 !== undefined && yoursSha256 !== userVersion(user.record))
    throw new AcceptError(
      "CHANGED",
      `${path} changed since you saw its conflict: review it again (nothing was written)`,
    );
  if (choice !== "edited")
    return mergeChange(change, user.state, { resolve: choice, ...(hunks ? { hunks } : {}) });
  if (content === undefined)
    throw new AcceptError("USAGE", `${path}: an edited resolution needs its content`);
  if (user.state.kind !== "file" || editableText(plain.merged) === undefined)
    throw new AcceptError(
      "USAGE",
      `${path}: only a text conflict can be edited; keep yours, take the agent's or write both with markers`,
    );
  if (content.equals(await user.state.load())) return { kind: "unchanged" };
  return { kind: "clean", result: fileState(content, user.state.mode) };
}
