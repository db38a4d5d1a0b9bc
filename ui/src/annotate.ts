import type { Hunk } from "./diff.js";
import type { Diagnostic, EngineEvent } from "./wire.js";

/**
 * What the review page says beside a hunk, from the events of the session that made the branch: the
 * lint errors the edit that wrote the hunk introduced (the engine lints after every edit), and whether
 * a command ran after the file's last edit (and which: the page does not know which command is the
 * tests, so it names it). Pure.
 */

export interface HunkNote {
  /** Errors the edit that made this hunk introduced; undefined when no edit of the session matches. */
  lintErrors?: number;
  /** The command run after the file's last edit, when there was one. */
  ranAfter?: string;
  /** The file was edited and nothing ran after. */
  untested: boolean;
}

interface Edit {
  order: number;
  call: string;
  paths: string[];
  /** The text the edit wrote (edit's replace, write_file's content, a patch's added lines). */
  wrote: string;
}

function inputField(event: EngineEvent, name: string): string {
  const input = event.input;
  if (typeof input !== "object" || input === null) return "";
  const value = (input as Record<string, unknown>)[name];
  return typeof value === "string" ? value : "";
}

function editOf(event: EngineEvent, order: number): Edit | undefined {
  const call = typeof event.call === "string" ? event.call : "";
  if (event.name === "edit" || event.name === "write_file") {
    const path = inputField(event, "path");
    return {
      order,
      call,
      paths: path ? [path] : [],
      wrote: inputField(event, "replace") || inputField(event, "content"),
    };
  }
  if (event.name === "apply_patch") {
    const patch = inputField(event, "patch");
    const paths = [...patch.matchAll(/^\+\+\+ (?:b\/)?(.+?)\t?$/gm)].map((match) => match[1] ?? "");
    const wrote = patch
      .split("\n")
      .filter((line) => line.startsWith("+") && !line.startsWith("+++"))
      .map((line) => line.slice(1))
      .join("\n");
    return { order, call, paths, wrote };
  }
  return undefined;
}

/** The notes for every hunk of `path`, in order. */
export function hunkNotes(events: readonly EngineEvent[], path: string, hunks: readonly Hunk[]): HunkNote[] {
  const edits: Edit[] = [];
  const lints = new Map<string, number>();
  const commands: { order: number; command: string }[] = [];
  events.forEach((event, order) => {
    if (event.type === "lint" && typeof event.call === "string" && typeof event.errors === "number")
      lints.set(event.call, event.errors);
    if (event.type !== "tool" || event.phase !== "call") return;
    const edit = editOf(event, order);
    if (edit?.paths.includes(path)) edits.push(edit);
    if (event.name === "run_command") commands.push({ order, command: inputField(event, "command") });
  });
  const last = edits.at(-1);
  const ranAfter = last
    ? commands.filter((command) => command.order > last.order).at(-1)?.command
    : undefined;
  return hunks.map((hunk) => {
    const added = hunk.lines
      .filter((line) => line.kind === "add" && line.text.trim() !== "")
      .map((line) => line.text);
    const maker =
      [...edits].reverse().find((edit) => added.some((line) => edit.wrote.includes(line))) ?? last;
    const lintErrors = maker ? lints.get(maker.call) : undefined;
    return {
      ...(lintErrors !== undefined ? { lintErrors } : {}),
      ...(ranAfter !== undefined ? { ranAfter } : {}),
      untested: last !== undefined && ranAfter === undefined,
    };
  });
}

/** The branch's lints as they are now, placed on the hunks of one file. */
export interface PlacedLints {
  /** Each hunk's introduced errors, in order (a diagnostic on a line the hunk shows of the branch). */
  byHunk: Diagnostic[][];
  /** This file's introduced errors on lines no hunk shows (an edit elsewhere broke them). */
  outside: Diagnostic[];
}

/** Places the introduced errors of `path` on its hunks by their lines in the branch. Pure. */
export function placeLints(
  introduced: readonly Diagnostic[],
  path: string,
  hunks: readonly Hunk[],
): PlacedLints {
  const spans = hunks.map((hunk) => {
    const lines = hunk.lines.flatMap((line) => (line.newLine === undefined ? [] : [line.newLine]));
    return lines.length > 0 ? { first: Math.min(...lines), last: Math.max(...lines) } : undefined;
  });
  const byHunk: Diagnostic[][] = hunks.map(() => []);
  const outside: Diagnostic[] = [];
  for (const diagnostic of introduced) {
    if (diagnostic.path !== path || diagnostic.severity !== "error") continue;
    const at = spans.findIndex(
      (span) => span !== undefined && diagnostic.line <= span.last && span.first <= diagnostic.endLine,
    );
    if (at >= 0) byHunk[at]?.push(diagnostic);
    else outside.push(diagnostic);
  }
  return { byHunk, outside };
}
