import type {
  AcceptResult,
  BranchSummary,
  DiffResult,
  GrepResult,
  RebaseResult,
  SearchResult,
  StatusResult,
} from "../engine/api.js";
import { oneLine } from "./hooks.js";

/**
 * What a model reads of each engine result: the same facts as the structured result, laid out as text
 * (one hit or match a line, what to do next where a result asks for it), for the results that do not
 * carry their text already. Pure functions; the structured result goes along unchanged. Paths and
 * client names are shown on one line (oneLine): a file name holding a newline or a terminal escape
 * cannot fake a line.
 */

function paths(list: readonly string[]): string {
  return list.map(oneLine).join(", ");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function indent(text: string, prefix = "    "): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}

/** The most definitions a hit's head line names besides its symbol. */
const DEFINES_SHOWN = 5;

/** The other definitions a hit holds (a chunk grouping small functions), on one line; undefined when none. */
function othersDefined(hit: SearchResult["hits"][number]): string | undefined {
  const others = (hit.defines ?? []).filter((path) => path !== hit.symbol);
  if (others.length === 0) return undefined;
  const shown = others.slice(0, DEFINES_SHOWN).map(oneLine).join(", ");
  const more = others.length > DEFINES_SHOWN ? ` and ${others.length - DEFINES_SHOWN} more` : "";
  return `defines ${shown}${more}`;
}

/** How each kind of query was ranked, in a few words. */
const INTENT_WORDS: Record<SearchResult["intent"], string> = {
  question: "a question: implementation code first",
  report: "a bug report",
  identifier: "an identifier: its definition first",
  path: "a path: that file first",
  location: "a line of a file: that chunk first",
  trace: "a stack trace: its frames first",
};

export function searchText(result: SearchResult): string {
  const { index } = result;
  const freshness = [
    `${plural(index.files, "file")}, ${plural(index.chunks, "chunk")} indexed`,
    index.lastSync ? `last sync ${index.lastSync}` : undefined,
    index.syncing ? "a sync is running" : undefined,
    index.watched ? "kept fresh by a watcher" : "not watched: run status to see how fresh it is",
  ].filter((part) => part !== undefined);
  const read = `query read as ${INTENT_WORDS[result.intent]}`;
  if (result.hits.length === 0) return `no hits (${read}; ${freshness.join("; ")})`;
  const hits = result.hits.map((hit) => {
    const head = [
      `${oneLine(hit.path)}:${hit.startLine}-${hit.endLine}`,
      hit.symbol ? hit.symbol : undefined,
      othersDefined(hit),
      `score ${hit.score.toFixed(3)}`,
      hit.stale ? "STALE: the file changed since it was indexed, lines may have moved" : undefined,
    ].filter((part) => part !== undefined);
    return hit.preview ? `${head.join("  ")}\n${indent(hit.preview)}` : head.join("  ");
  });
  return `${plural(result.hits.length, "hit")} (${read}; ${freshness.join("; ")})\n\n${hits.join("\n\n")}`;
}

export function grepText(result: GrepResult): string {
  if (result.matches.length === 0) return "no matches";
  const matches = result.matches.map((match) => `${oneLine(match.path)}:${match.line}: ${match.text}`);
  if (result.truncated)
    matches.push(`(more matches left out: narrow the pattern or the path, or raise limit)`);
  return matches.join("\n");
}

function branchLine(branch: BranchSummary): string {
  const facts = [
    branch.label ? JSON.stringify(branch.label) : undefined,
    branch.mode,
    branch.createdAt ? `created ${branch.createdAt}` : undefined,
    branch.client ? `by ${oneLine(branch.client)}` : undefined,
    branch.busy ? "busy: another process works in it (read-only here)" : undefined,
  ].filter((part) => part !== undefined);
  return facts.length > 0 ? `${branch.id}  ${facts.join(", ")}` : branch.id;
}

export function branchCreateText(branch: BranchSummary): string {
  return (
    `created branch ${branchLine(branch)}\n` +
    `Pass branch "${branch.id}" to edit, write_file, apply_patch, run, lints, diff and accept; ` +
    "the user's folder stays as it is until an accept."
  );
}

export function branchListText(result: { branches: BranchSummary[] }): string {
  if (result.branches.length === 0) return "no branches (make one with branch_create)";
  return result.branches.map(branchLine).join("\n");
}

export function diffText(result: DiffResult): string {
  const parts = [
    result.diff.trim() === "" ? "no changes (the branch holds the user's folder as it was)" : result.diff,
  ];
  if (result.unknownBases.length > 0)
    parts.push(`left out (their base could not be recorded): ${paths(result.unknownBases)}`);
  return parts.join("\n");
}

function conflictLines(
  conflicts: readonly { path: string; why: string; hunks: readonly unknown[] }[],
): string[] {
  return conflicts.map(
    (conflict) =>
      `  ${oneLine(conflict.path)}: ${conflict.why}${conflict.hunks.length > 0 ? ` (${plural(conflict.hunks.length, "region")})` : ""}`,
  );
}

export function acceptText(result: AcceptResult): string {
  // unconfirmed: the engine's message says so (and nothing was written)
  const parts = [result.message];
  if (result.applied.length > 0) parts.push(`written: ${paths(result.applied)}`);
  if (result.unchanged.length > 0) parts.push(`already as the branch has them: ${paths(result.unchanged)}`);
  if (result.conflicts.length > 0)
    parts.push(["conflicts (left as the user has them):", ...conflictLines(result.conflicts)].join("\n"));
  if (result.refused.length > 0)
    parts.push(
      ["refused:", ...result.refused.map((refusal) => `  ${oneLine(refusal.path)}: ${refusal.why}`)].join(
        "\n",
      ),
    );
  parts.push(result.discarded ? "the branch was discarded" : "the branch is kept");
  return parts.join("\n");
}

export function rebaseText(result: RebaseResult): string {
  const parts: string[] = [];
  if (result.merged.length > 0) parts.push(`merged the user's changes into: ${paths(result.merged)}`);
  if (result.current.length > 0) parts.push(`already current: ${paths(result.current)}`);
  if (result.conflicts.length > 0)
    parts.push(["conflicts (left as the branch has them):", ...conflictLines(result.conflicts)].join("\n"));
  return parts.length > 0 ? parts.join("\n") : "nothing to rebase: the branch changed no file";
}

export function statusText(result: StatusResult): string {
  const { index } = result;
  const indexLine = index.indexed
    ? `index: ${plural(index.files, "file")}, ${plural(index.chunks, "chunk")}, last sync ${index.lastSync ?? "unknown"}` +
      `${index.syncing ? ", syncing" : ""}${index.watched ? ", watched" : ", not watched"}` +
      `${index.skipped.length > 0 ? `, ${plural(index.skipped.length, "file")} skipped` : ""}`
    : "index: not built yet (the first search builds it)";
  const servers =
    result.servers.length > 0
      ? result.servers.map((server) => `  ${server.language}: ${server.server} ${server.state}`)
      : ["  none running"];
  return [
    `workspace: ${result.root}`,
    indexLine,
    `branches:${result.branches.length === 0 ? " none" : ""}`,
    ...result.branches.map((branch) => `  ${branchLine(branch)}`),
    "language servers:",
    ...servers,
    `engine: pid ${result.engine.pid}, ${plural(result.engine.clients, "client")}, since ${result.engine.startedAt}`,
  ].join("\n");
}
