/**
 * Unified diffs: a tolerant parser (git headers or bare ---/+++ lines, /dev/null for added and deleted
 * files, wrong @@ counts and line numbers, blank context lines stripped of their space, CRLF) and an
 * all-or-nothing applier whose hunks are placed by content through the same matcher as `applyEdit`: near
 * the stated line when that breaks a tie, anywhere when the match is unique.
 */
import { notFoundMessage } from "./edit.js";
import { LINE_STAGES, locate, type Op, spliceDoc } from "./match.js";
import { type Eol, type Line, parseDoc, renderDoc } from "./text.js";

export interface HunkLine {
  kind: " " | "-" | "+";
  text: string;
  /** The line ended in CR LF in the patch. */
  cr: boolean;
}

export interface ParsedHunk {
  header: string;
  /** As stated; 0 when the header gave none. */
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  lines: HunkLine[];
  /** "\ No newline at end of file" after the last old-side / new-side line. */
  oldNoNewline: boolean;
  newNoNewline: boolean;
}

export interface ParsedFilePatch {
  /** Paths without the a/ b/ prefixes; null for /dev/null. */
  oldPath: string | null;
  newPath: string | null;
  /** The path the result is written to (the old path for a deleted file). */
  path: string;
  kind: "modified" | "added" | "deleted";
  renamed: boolean;
  binary: boolean;
  hunks: ParsedHunk[];
}

export interface PatchHunkResult {
  ok: boolean;
  stage?: string;
  /** 1-based line where the hunk's result starts in the new text. */
  line?: number;
  message?: string;
}

export interface PatchFileResult {
  path: string;
  /** Set for a rename. */
  oldPath?: string;
  ok: boolean;
  kind: "modified" | "added" | "deleted";
  /** The new content; only when the whole patch applied, absent for a deleted file. */
  text?: string;
  message?: string;
  hunks: PatchHunkResult[];
}

export interface PatchResult {
  ok: boolean;
  files: PatchFileResult[];
}

/** Each run of blanks belongs to one place (`\s*` around optional parts tried every split: cubic). */
const HUNK_HEADER = /^@@+\s*(?:-(\d+)(?:,(\d+))?\s*)?(?:\+(\d+)(?:,(\d+))?\s*)?@@+/;

function unquote(p: string): string {
  if (p.startsWith('"') && p.endsWith('"') && p.length >= 2) {
    return p
      .slice(1, -1)
      .replace(/\\(["\\tn])/g, (_, c: string) => (c === "t" ? "\t" : c === "n" ? "\n" : c));
  }
  return p;
}

function headerPath(rest: string): string | null {
  let p = rest;
  const tab = p.indexOf("\t");
  if (tab !== -1) p = p.slice(0, tab);
  p = unquote(p.trim());
  return p === "/dev/null" ? null : p;
}

function stripPrefix(p: string | null, prefix: string): string | null {
  return p?.startsWith(prefix) ? p.slice(prefix.length) : p;
}

function gitHeaderPaths(rest: string): [string, string] | undefined {
  const r = rest.trim();
  if (r.startsWith('"')) {
    const m = /^("(?:[^"\\]|\\.)*")\s+("(?:[^"\\]|\\.)*"|\S.*)$/.exec(r);
    if (m?.[1] && m[2]) return [unquote(m[1]), unquote(m[2])];
  }
  // "a/P b/P": the two halves are equal for anything but a rename.
  if ((r.length - 1) % 2 === 0) {
    const half = (r.length - 1) / 2;
    const a = r.slice(0, half);
    const b = r.slice(half + 1);
    if (r[half] === " " && a.slice(2) === b.slice(2)) return [a, b];
  }
  const m = /^(\S+)\s+(\S+)$/.exec(r);
  if (m?.[1] && m[2]) return [m[1], m[2]];
  return undefined;
}

interface Draft {
  file: ParsedFilePatch;
  sawHeader: boolean;
  rawOld?: string | null;
  rawNew?: string | null;
  gitOld?: string;
  gitNew?: string;
  added: boolean;
  deleted: boolean;
  renameFrom?: string;
  renameTo?: string;
}

function newDraft(): Draft {
  return {
    file: {
      oldPath: null,
      newPath: null,
      path: "",
      kind: "modified",
      renamed: false,
      binary: false,
      hunks: [],
    },
    sawHeader: false,
    added: false,
    deleted: false,
  };
}

function finalize(d: Draft): ParsedFilePatch {
  const f = d.file;
  let oldP: string | null | undefined = d.rawOld;
  let newP: string | null | undefined = d.rawNew;
  if (oldP === undefined && newP === undefined && d.gitOld !== undefined && d.gitNew !== undefined) {
    oldP = d.added ? null : d.gitOld;
    newP = d.deleted ? null : d.gitNew;
  }
  // Strip a/ and b/ only when the patch uses them (both sides, or one side and /dev/null).
  const aOk = oldP === null || oldP === undefined || oldP.startsWith("a/");
  const bOk = newP === null || newP === undefined || newP.startsWith("b/");
  if (aOk && bOk && (oldP || newP)) {
    oldP = stripPrefix(oldP ?? null, "a/");
    newP = stripPrefix(newP ?? null, "b/");
  }
  if (d.renameFrom !== undefined) oldP = d.renameFrom;
  if (d.renameTo !== undefined) newP = d.renameTo;
  f.oldPath = oldP ?? null;
  f.newPath = newP ?? null;
  if (d.added || (f.oldPath === null && f.newPath !== null)) f.kind = "added";
  else if (d.deleted || (f.newPath === null && f.oldPath !== null)) f.kind = "deleted";
  else f.kind = "modified";
  if (f.kind === "added") f.oldPath = null;
  if (f.kind === "deleted") f.newPath = null;
  f.path = f.newPath ?? f.oldPath ?? "";
  f.renamed = f.kind === "modified" && f.oldPath !== null && f.newPath !== null && f.oldPath !== f.newPath;
  return f;
}

const isBodyLine = (l: string | undefined): boolean =>
  l !== undefined && l.length > 0 && (l[0] === " " || l[0] === "-" || l[0] === "+" || l[0] === "\\");

export function parsePatch(patch: string): ParsedFilePatch[] {
  const raw = patch.split("\n");
  if (raw[raw.length - 1] === "") raw.pop();
  const crs = raw.map((l) => l.endsWith("\r"));
  const lines = raw.map((l, i) => (crs[i] ? l.slice(0, -1) : l));
  const files: ParsedFilePatch[] = [];
  let cur: Draft | undefined;
  const flush = () => {
    if (cur) files.push(finalize(cur));
    cur = undefined;
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (line.startsWith("diff --git ")) {
      flush();
      cur = newDraft();
      const paths = gitHeaderPaths(line.slice(11));
      if (paths) [cur.gitOld, cur.gitNew] = [paths[0], paths[1]];
      i++;
      continue;
    }
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      if (!cur || cur.sawHeader || cur.file.hunks.length > 0) {
        flush();
        cur = newDraft();
      }
      cur.sawHeader = true;
      cur.rawOld = headerPath(line.slice(4));
      cur.rawNew = headerPath((lines[i + 1] ?? "").slice(4));
      i += 2;
      continue;
    }
    const hm = line.startsWith("@@") ? HUNK_HEADER.exec(line) : null;
    if (hm) {
      if (!cur) cur = newDraft();
      const hunk: ParsedHunk = {
        header: line,
        oldStart: Number(hm[1] ?? 0),
        oldCount: hm[2] !== undefined ? Number(hm[2]) : hm[1] !== undefined ? 1 : -1,
        newStart: Number(hm[3] ?? 0),
        newCount: hm[4] !== undefined ? Number(hm[4]) : hm[3] !== undefined ? 1 : -1,
        lines: [],
        oldNoNewline: false,
        newNoNewline: false,
      };
      i = readHunk(lines, crs, i + 1, hunk);
      cur.file.hunks.push(hunk);
      continue;
    }
    if (cur) {
      if (line.startsWith("new file mode")) cur.added = true;
      else if (line.startsWith("deleted file mode")) cur.deleted = true;
      else if (line.startsWith("rename from ")) cur.renameFrom = unquote(line.slice(12).trim());
      else if (line.startsWith("rename to ")) cur.renameTo = unquote(line.slice(10).trim());
      else if (line.startsWith("Binary files ") || line.startsWith("GIT binary patch"))
        cur.file.binary = true;
    }
    i++;
  }
  flush();
  return files;
}

/** Reads a hunk body from `start`; returns the index of the first line after it. */
function readHunk(lines: string[], crs: boolean[], start: number, hunk: ParsedHunk): number {
  let oldLeft = hunk.oldCount;
  let newLeft = hunk.newCount;
  const countsLeft = () => oldLeft > 0 || newLeft > 0;
  let j = start;
  let last: HunkLine | undefined;
  while (j < lines.length) {
    const l = lines[j] ?? "";
    if (l.startsWith("@@") || l.startsWith("diff --git ")) break;
    if (
      l.startsWith("--- ") &&
      lines[j + 1]?.startsWith("+++ ") &&
      (!countsLeft() || lines[j + 2]?.startsWith("@@"))
    ) {
      break;
    }
    const c = l[0];
    if (c === " " || c === "-" || c === "+") {
      last = { kind: c, text: l.slice(1), cr: crs[j] ?? false };
      hunk.lines.push(last);
      if (c !== "+") oldLeft--;
      if (c !== "-") newLeft--;
      j++;
      continue;
    }
    if (c === "\\") {
      if (last) {
        if (last.kind !== "+") hunk.oldNoNewline = true;
        if (last.kind !== "-") hunk.newNoNewline = true;
      }
      j++;
      continue;
    }
    if (l === "") {
      // Blank context lines that lost their leading space: taken when the hunk goes on after them, or
      // (at its end) as many as the @@ counts still ask for.
      let k = j;
      while (k < lines.length && lines[k] === "") k++;
      const next = lines[k];
      const goesOn = isBodyLine(next) && !(next?.startsWith("--- ") && lines[k + 1]?.startsWith("+++ "));
      const take = goesOn ? k - j : Math.min(k - j, Math.max(0, Math.min(oldLeft, newLeft)));
      for (let t = 0; t < take; t++, j++) {
        last = { kind: " ", text: "", cr: crs[j] ?? false };
        hunk.lines.push(last);
        oldLeft--;
        newLeft--;
      }
      if (goesOn) continue;
      break;
    }
    break;
  }
  return j;
}

function hunkOps(hunk: ParsedHunk, mixedCr: boolean): Op[] {
  return hunk.lines.map((l) => {
    const kind = l.kind === " " ? "keep" : l.kind === "-" ? "del" : "add";
    const op: Op = { kind, text: l.text };
    if (kind === "add" && mixedCr) op.eol = l.cr ? "\r\n" : "\n";
    return op;
  });
}

/**
 * Where a tie may be broken. A hunk with as many context lines before its change as after sits at its
 * stated line; one with fewer before than after can only sit at the start of the file, and one with fewer
 * after than before only at the end (as `git apply` reads them). A hunk whose shape says otherwise is
 * suspect, and its ties are refused.
 */
function hintFor(ops: Op[], stated: number, fileLines: number): number {
  const first = ops.findIndex((o) => o.kind !== "keep");
  let lead = first === -1 ? ops.length : first;
  let trail = 0;
  for (let i = ops.length - 1; i >= 0 && ops[i]?.kind === "keep"; i--) trail++;
  if (first === -1) lead = trail;
  if (lead === trail) return stated;
  if (lead < trail) return 0;
  return fileLines - ops.filter((o) => o.kind !== "add").length;
}

interface FileOutcome {
  ok: boolean;
  text?: string;
  message?: string;
  hunks: PatchHunkResult[];
}

function applyHunks(original: string, hunks: ParsedHunk[], mixedCr: boolean): FileOutcome {
  const doc = parseDoc(original);
  const results: PatchHunkResult[] = [];
  let shift = 0; // net lines added by the hunks applied so far
  let offset = 0; // how far the hunks applied so far sat from their stated lines
  let notBefore = 0;
  for (const [index, hunk] of hunks.entries()) {
    const ops = hunkOps(hunk, mixedCr);
    const searched = ops.filter((o) => o.kind !== "add");
    const stated = Math.max(0, hunk.oldStart - 1) + shift;
    if (searched.length === 0) {
      if (doc.lines.length === 0) {
        const lines: Line[] = ops.map((o) => ({ text: o.text, eol: o.eol ?? doc.eol }));
        const lastLine = lines[lines.length - 1];
        if (lastLine && hunk.newNoNewline) lastLine.eol = "";
        doc.lines.push(...lines);
        shift += lines.length;
        results.push({ ok: true, stage: "exact", line: 1 });
      } else {
        results.push({
          ok: false,
          message: `Hunk ${index + 1} (${hunk.header}) has no context or removed lines, so there is nothing to place it by; include a few unchanged lines around the insertion.`,
        });
      }
      continue;
    }
    const found = locate(doc, ops, {
      hint: hintFor(ops, stated + offset, doc.lines.length),
      notBefore,
      stages: LINE_STAGES,
    });
    if (found.kind === "found") {
      const { candidate, lines } = found.placement;
      const touchesEnd = candidate.end === doc.lines.length;
      spliceDoc(doc, found.placement);
      if (touchesEnd) {
        const lastLine = doc.lines[doc.lines.length - 1];
        if (lastLine && hunk.newNoNewline) lastLine.eol = "";
        else if (lastLine && hunk.oldNoNewline && lastLine.eol === "") lastLine.eol = doc.eol;
      }
      offset = candidate.start - stated;
      shift += lines.length - (candidate.end - candidate.start);
      notBefore = candidate.start + lines.length;
      const stage = found.viaHint ? `${found.stage} (at the stated line)` : found.stage;
      results.push({ ok: true, stage, line: candidate.start + 1 });
      continue;
    }
    const searchText = searched.map((o) => o.text);
    if (found.kind === "ambiguous") {
      const places = found.placements
        .slice(0, 5)
        .map((p) => `${p.candidate.start + 1}-${Math.max(p.candidate.start + 1, p.candidate.end)}`)
        .join(", ");
      results.push({
        ok: false,
        stage: found.stage,
        message: `Hunk ${index + 1} (${hunk.header}) matches ${found.placements.length} places (${found.stage} stage; lines ${places}) and none at its stated line; add more context lines so that it matches one place.`,
      });
      continue;
    }
    const { message } = notFoundMessage(doc.lines, searchText, `Hunk ${index + 1} (${hunk.header})`);
    results.push({ ok: false, message });
  }
  const ok = results.every((r) => r.ok);
  const out: FileOutcome = { ok, hunks: results };
  if (ok) out.text = renderDoc(doc);
  else out.message = results.find((r) => !r.ok)?.message ?? "a hunk failed";
  return out;
}

function addedText(hunks: ParsedHunk[], eol: Eol): string {
  const lines: string[] = [];
  let noNewline = false;
  for (const h of hunks) {
    for (const l of h.lines) if (l.kind !== "-") lines.push(l.text);
    noNewline = h.newNoNewline;
  }
  if (lines.length === 0) return "";
  return lines.join(eol) + (noNewline ? "" : eol);
}

/**
 * Applies a unified diff. `read` returns a file's current content, or undefined when it does not exist.
 * All or nothing: `ok` only when every hunk of every file applied, and texts are returned only then.
 */
export function applyPatch(patch: string, read: (path: string) => string | undefined): PatchResult {
  const parsed = parsePatch(patch);
  const current = new Map<string, string | undefined>();
  const readNow = (p: string) => (current.has(p) ? current.get(p) : read(p));
  const files: PatchFileResult[] = [];
  for (const f of parsed) {
    const result: PatchFileResult = { path: f.path, ok: false, kind: f.kind, hunks: [] };
    if (f.renamed && f.oldPath) result.oldPath = f.oldPath;
    files.push(result);
    const allLines = f.hunks.flatMap((h) => h.lines);
    const allCr = allLines.length > 0 && allLines.every((l) => l.cr);
    const mixedCr = !allCr && allLines.some((l) => l.cr);
    if (!f.path) {
      result.message = "The patch names no file (missing ---/+++ or diff --git header).";
      continue;
    }
    if (f.binary) {
      result.message = `${f.path}: binary patches are not supported.`;
      continue;
    }
    if (f.kind === "added") {
      const existing = readNow(f.path);
      const text = addedText(f.hunks, allCr ? "\r\n" : "\n");
      if (existing !== undefined && existing !== text) {
        result.message = `${f.path} already exists; the patch creates it (--- /dev/null). Patch the existing file instead.`;
        continue;
      }
      result.ok = true;
      result.text = text;
      result.hunks = f.hunks.map(() => ({ ok: true, stage: "new-file", line: 1 }));
      current.set(f.path, text);
      continue;
    }
    const source = f.oldPath ?? f.path;
    const original = readNow(source);
    if (original === undefined) {
      result.message = `${source} does not exist.`;
      continue;
    }
    const outcome = applyHunks(original, f.hunks, mixedCr);
    result.hunks = outcome.hunks;
    if (!outcome.ok) {
      result.message = `${f.path}: ${outcome.message ?? "a hunk failed"}`;
      continue;
    }
    if (f.kind === "deleted") {
      if ((outcome.text ?? "").replace(/^\uFEFF/, "") !== "") {
        result.message = `${f.path}: the patch deletes the file but its removed lines do not cover the whole file.`;
        continue;
      }
      result.ok = true;
      current.set(source, undefined);
      continue;
    }
    result.ok = true;
    result.text = outcome.text ?? "";
    if (f.renamed) current.set(source, undefined);
    current.set(f.path, result.text);
  }
  const ok = files.length > 0 && files.every((r) => r.ok);
  if (!ok) {
    for (const r of files) {
      delete r.text;
      if (r.ok && !r.message)
        r.message = "Applies, but nothing was written because another part of the patch failed.";
    }
  }
  return { ok, files };
}
