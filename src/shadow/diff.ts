import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { formatPatch, OMIT_HEADERS } from "diff";
import { extendRules, type IgnoreContext, matchIgnore, parseIgnoreFile } from "../workspace/ignore-rules.js";
import { linePatch } from "../workspace/line-diff.js";
import type { ChangeDetail, GitMode, Side } from "./changes.js";
import { joinRel, parentOf } from "./relpath.js";

export interface DiffOptions {
  /**
   * Binary files: false (default) prints `Binary files a/x and b/x differ`, as `git diff` does;
   * true prints a `GIT binary patch` (as `git diff --binary`), which `git apply` can apply.
   */
  binary?: boolean;
  /** Lines of context around each change (default 3, as git). */
  context?: number;
  /**
   * Added files that the branch's own .gitignore / .umbraignore / .cursorignore files ignore (build
   * output, caches) are left out unless this is set. Modified and deleted files are always shown.
   */
  includeIgnored?: boolean;
  /**
   * Files larger than this (on either side) are not read: the diff says that the file changed and its
   * sizes, without content (default LARGE_FILE_BYTES). Node cannot hold a file over 2 GiB in one buffer.
   */
  maxFileBytes?: number;
}

/** Above this size a file's content is left out of diffs (64 MiB). */
export const LARGE_FILE_BYTES = 64 * 1024 * 1024;

/** Reads a file of the branch's view (used for ignore files). */
export type ViewReader = (rel: string) => Promise<Buffer | undefined>;

const ZERO_ID = "0".repeat(40);
const SNIFF_BYTES = 8000;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The git blob id of some content. */
export function gitBlobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

/** Whether the diff shows `content` as text, with hunks (else as a binary file, as a whole). */
export function shownAsText(content: Buffer): boolean {
  return asText(content) !== undefined;
}

/** Text as git sees it (no NUL in the first 8000 bytes) and valid UTF-8, decoded; else undefined. */
function asText(content: Buffer): string | undefined {
  if (content.subarray(0, SNIFF_BYTES).includes(0)) return undefined;
  try {
    return utf8.decode(content);
  } catch {
    return undefined;
  }
}

const NAMED_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
};

function needsEscape(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return ch === '"' || ch === "\\" || code < 0x20 || code === 0x7f;
}

/** A path as git prints it: C-quoted when it holds quotes, backslashes or control characters. */
export function quotePath(path: string): string {
  if (![...path].some(needsEscape)) return path;
  let escaped = "";
  for (const ch of path) {
    escaped += needsEscape(ch)
      ? (NAMED_ESCAPES[ch] ?? `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`)
      : ch;
  }
  return `"${escaped}"`;
}

/** `a/x`, quoted as a whole when needed (git quotes the prefixed name). */
function label(prefix: "a/" | "b/", path: string): string {
  return quotePath(`${prefix}${path}`);
}

const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** git's base85 lines of zlib-compressed data: each line a length letter then up to 52 bytes encoded. */
function base85Lines(data: Buffer): string[] {
  const lines: string[] = [];
  for (let start = 0; start < data.length; start += 52) {
    const chunk = data.subarray(start, Math.min(start + 52, data.length));
    const n = chunk.length;
    let line = n <= 26 ? String.fromCharCode(64 + n) : String.fromCharCode(96 + n - 26);
    for (let i = 0; i < n; i += 4) {
      let value = 0;
      for (let j = 0; j < 4; j++) value = value * 256 + (chunk[i + j] ?? 0);
      let group = "";
      for (let k = 0; k < 5; k++) {
        group = (BASE85[value % 85] ?? "") + group;
        value = Math.floor(value / 85);
      }
      line += group;
    }
    lines.push(line);
  }
  return lines;
}

/** A `literal` block of a GIT binary patch. */
function literal(content: Buffer): string {
  return [`literal ${content.length}`, ...base85Lines(deflateSync(content)), ""].join("\n");
}

interface Loaded {
  path: string;
  kind: ChangeDetail["kind"];
  oldMode?: GitMode;
  newMode?: GitMode;
  old?: Buffer;
  new?: Buffer;
  /** Sizes of the sides, when one is over the limit and neither was read. */
  large?: { old?: number; new?: number };
}

/** The size of a side on disk over `limit`, else undefined (in-memory sides are always small enough). */
function largeSize(side: Side | undefined, limit: number): number | undefined {
  const size = side?.size ?? side?.stats?.size;
  return size !== undefined && size > limit ? size : undefined;
}

function describeSize(bytes: number): string {
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = "bytes";
  for (const next of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  return unit === "bytes" ? `${bytes} bytes` : `${value.toFixed(1)} ${unit} (${bytes} bytes)`;
}

/** The section of a file too large to read: git's header lines, then one line saying what changed. */
function formatLarge(change: Loaded, limit: number): string {
  const { path, large = {} } = change;
  const a = label("a/", path);
  const b = label("b/", path);
  const out = [`diff --git ${a} ${b}`];
  if (change.kind === "added") out.push(`new file mode ${change.newMode}`);
  else if (change.kind === "deleted") out.push(`deleted file mode ${change.oldMode}`);
  else if (change.oldMode !== change.newMode)
    out.push(`old mode ${change.oldMode}`, `new mode ${change.newMode}`);
  const sizes = [
    large.old !== undefined ? `${a} ${describeSize(large.old)}` : undefined,
    large.new !== undefined ? `${b} ${describeSize(large.new)}` : undefined,
  ].filter((part) => part !== undefined);
  out.push(
    `Large file ${change.kind}, content not shown: ${sizes.join(", ")}; over the ${describeSize(limit)} diff limit`,
  );
  return `${out.join("\n")}\n`;
}

/** The hunks of a text change (git's ---/+++ lines are written by the caller). */
function hunks(oldText: string, newText: string, context: number): string {
  const patch = linePatch(oldText, newText, context);
  return patch.hunks.length === 0 ? "" : formatPatch(patch, OMIT_HEADERS);
}

/** `--- a/x` / `+++ b/x`, with git's trailing tab for names that contain a space. */
function fileHeader(marker: "---" | "+++", name: string): string {
  return `${marker} ${name}${name.includes(" ") && !name.startsWith('"') ? "\t" : ""}`;
}

function formatOne(change: Loaded, options: Required<Pick<DiffOptions, "binary" | "context">>): string {
  const { path } = change;
  const a = label("a/", path);
  const b = label("b/", path);
  const out: string[] = [`diff --git ${a} ${b}`];
  const oldContent = change.old ?? Buffer.alloc(0);
  const newContent = change.new ?? Buffer.alloc(0);
  const oldId = change.old ? gitBlobId(change.old) : ZERO_ID;
  const newId = change.new ? gitBlobId(change.new) : ZERO_ID;
  if (change.kind === "added") {
    out.push(`new file mode ${change.newMode}`);
    if (newContent.length > 0) out.push(`index ${ZERO_ID}..${newId}`);
  } else if (change.kind === "deleted") {
    out.push(`deleted file mode ${change.oldMode}`);
    if (oldContent.length > 0) out.push(`index ${oldId}..${ZERO_ID}`);
  } else {
    if (change.oldMode !== change.newMode)
      out.push(`old mode ${change.oldMode}`, `new mode ${change.newMode}`);
    if (oldId !== newId)
      out.push(`index ${oldId}..${newId}${change.oldMode === change.newMode ? ` ${change.newMode}` : ""}`);
  }
  if (oldId === newId || (oldContent.length === 0 && newContent.length === 0)) return `${out.join("\n")}\n`;
  const fromName = change.kind === "added" ? "/dev/null" : a;
  const toName = change.kind === "deleted" ? "/dev/null" : b;
  const oldText = asText(oldContent);
  const newText = asText(newContent);
  if (oldText === undefined || newText === undefined) {
    if (!options.binary) {
      out.push(`Binary files ${fromName} and ${toName} differ`);
      return `${out.join("\n")}\n`;
    }
    out.push("GIT binary patch", literal(newContent), literal(oldContent));
    return `${out.join("\n")}\n`;
  }
  out.push(fileHeader("---", fromName), fileHeader("+++", toName));
  return `${out.join("\n")}\n${hunks(oldText, newText, options.context)}`;
}

function formatRename(from: Loaded, to: Loaded): string {
  return [
    `diff --git ${label("a/", from.path)} ${label("b/", to.path)}`,
    "similarity index 100%",
    `rename from ${quotePath(from.path)}`,
    `rename to ${quotePath(to.path)}`,
    "",
  ].join("\n");
}

/** Ignore rules of the branch's view, folder by folder, memoized. */
class ViewIgnores {
  private readonly contexts = new Map<string, Promise<IgnoreContext>>();

  constructor(private readonly read: ViewReader) {}

  private async text(rel: string): Promise<string | undefined> {
    const content = await this.read(rel);
    return content?.toString("utf8");
  }

  context(dir: string): Promise<IgnoreContext> {
    let found = this.contexts.get(dir);
    if (!found) {
      found = (async () => {
        const parent: IgnoreContext = dir === "" ? {} : await this.context(parentOf(dir));
        const git = await this.text(joinRel(dir, ".gitignore"));
        const umbraTexts = await Promise.all(
          [".cursorignore", ".umbraignore"].map(async (name) => ({
            name,
            text: await this.text(joinRel(dir, name)),
          })),
        );
        const gitRules =
          git === undefined
            ? parent.git
            : extendRules(parent.git, parseIgnoreFile(git, dir, joinRel(dir, ".gitignore")));
        let umbraRules = parent.umbra;
        for (const { name, text } of umbraTexts) {
          if (text !== undefined)
            umbraRules = extendRules(umbraRules, parseIgnoreFile(text, dir, joinRel(dir, name)));
        }
        const context: IgnoreContext = {};
        if (gitRules) context.git = gitRules;
        if (umbraRules) context.umbra = umbraRules;
        return context;
      })();
      this.contexts.set(dir, found);
    }
    return found;
  }

  async ignored(path: string): Promise<boolean> {
    const parts = path.split("/");
    // A folder that is ignored hides everything below it (git does not look inside).
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (matchIgnore(await this.context(parentOf(dir)), dir, true)) return true;
    }
    return matchIgnore(await this.context(parentOf(path)), path, false) !== undefined;
  }
}

/**
 * A unified diff, in git's format, that turns the user's folder into the branch: `git apply` accepts it
 * (with `binary: true` also for binary files). A deleted and an added file with identical content are
 * shown as a rename.
 */
export async function formatDiff(
  changes: readonly ChangeDetail[],
  read: ViewReader,
  options: DiffOptions = {},
): Promise<string> {
  const settings = { binary: options.binary ?? false, context: options.context ?? 3 };
  const limit = options.maxFileBytes ?? LARGE_FILE_BYTES;
  const ignores = new ViewIgnores(read);
  const loaded: Loaded[] = [];
  for (const change of changes) {
    if (change.kind === "added" && !options.includeIgnored && (await ignores.ignored(change.path))) continue;
    const entry: Loaded = { path: change.path, kind: change.kind };
    if (change.old) entry.oldMode = change.old.mode;
    if (change.new) entry.newMode = change.new.mode;
    const largeOld = largeSize(change.old, limit);
    const largeNew = largeSize(change.new, limit);
    if (largeOld !== undefined || largeNew !== undefined) {
      // Neither side is read; the other side's size is on disk (or in memory) too.
      entry.large = {
        ...(change.old
          ? { old: largeOld ?? change.old.size ?? change.old.stats?.size ?? (await change.old.load()).length }
          : {}),
        ...(change.new
          ? { new: largeNew ?? change.new.size ?? change.new.stats?.size ?? (await change.new.load()).length }
          : {}),
      };
    } else {
      if (change.old) entry.old = await change.old.load();
      if (change.new) entry.new = await change.new.load();
    }
    loaded.push(entry);
  }
  // Renames: a deleted and an added file of identical, non-empty content and the same mode.
  const deletedById = new Map<string, Loaded[]>();
  for (const entry of loaded) {
    if (entry.kind !== "deleted" || !entry.old || entry.old.length === 0) continue;
    const key = `${entry.oldMode} ${gitBlobId(entry.old)}`;
    const list = deletedById.get(key) ?? [];
    list.push(entry);
    deletedById.set(key, list);
  }
  const renamedFrom = new Map<Loaded, Loaded>();
  const consumed = new Set<Loaded>();
  for (const entry of loaded) {
    if (entry.kind !== "added" || !entry.new || entry.new.length === 0) continue;
    const candidates = deletedById.get(`${entry.newMode} ${gitBlobId(entry.new)}`);
    const from = candidates?.shift();
    if (from) {
      renamedFrom.set(entry, from);
      consumed.add(from);
    }
  }
  const parts: string[] = [];
  for (const entry of loaded) {
    if (consumed.has(entry)) continue;
    const from = renamedFrom.get(entry);
    if (entry.large) parts.push(formatLarge(entry, limit));
    else parts.push(from ? formatRename(from, entry) : formatOne(entry, settings));
  }
  return parts.join("");
}
