import { readdir, readFile, stat } from "node:fs/promises";
import { posix } from "node:path";
import { DEFAULT_EXCLUDED_DIRS } from "../workspace/excluded-dirs.js";
import type { DependentsFlavor } from "./registry.js";

const TS_EXTENSIONS = /\.(d\.ts|ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const MAX_FILE_BYTES = 512 * 1024;

/** What a file refers to, in the form `refersTo` compares with a target. */
type References = Set<string>;

function stripTsExtension(path: string): string {
  return path.replace(TS_EXTENSIONS, "");
}

function moduleOfPython(path: string): string {
  return path
    .replace(/\.pyi?$/, "")
    .replace(/\/__init__$/, "")
    .split("/")
    .join(".");
}

/** Relative module specifiers of a TypeScript/JavaScript file, resolved to extension-less paths. */
function typescriptReferences(file: string, text: string): References {
  const refs: References = new Set();
  const dir = posix.dirname(file);
  for (const match of text.matchAll(
    /(?:\bfrom|\bimport|\brequire)\s*(?:\(\s*)?["'](\.{1,2}\/?[^"'\n]*)["']/g,
  )) {
    const spec = match[1];
    if (!spec) continue;
    const resolved = posix.normalize(posix.join(dir, spec));
    refs.add(stripTsExtension(resolved));
  }
  return refs;
}

/** Modules a Python file imports, as absolute dotted names (relative imports resolved by location). */
function pythonReferences(file: string, text: string): References {
  const refs: References = new Set();
  const pkg = posix.dirname(file) === "." ? [] : posix.dirname(file).split("/");
  const absolute = (dots: number, rest: string): string => {
    if (dots === 0) return rest;
    const base = pkg.slice(0, Math.max(0, pkg.length - (dots - 1)));
    return [...base, ...(rest ? [rest] : [])].join(".");
  };
  // a run of blanks or dots is split one way only (every way was tried: quadratic in a long run)
  const fromImport =
    /^[ \t]*from(?:[ \t]+(?=[\w.])(\.*)(?!\.)([\w.]*)|[ \t])[ \t]+import[ \t]+\(?([^\n#]*)/gm;
  for (const match of text.matchAll(fromImport)) {
    const module = absolute(match[1]?.length ?? 0, match[2] ?? "");
    if (module) refs.add(module);
    for (const name of (match[3] ?? "").split(",")) {
      const bare = name
        .trim()
        .split(/\s+/)[0]
        ?.replace(/[()\\]/g, "");
      if (bare && /^\w+$/.test(bare)) refs.add(module ? `${module}.${bare}` : bare);
    }
  }
  for (const match of text.matchAll(/^[ \t]*import[ \t]+([^\n#]+)/gm)) {
    for (const part of (match[1] ?? "").split(",")) {
      const name = part.trim().split(/\s+/)[0];
      if (name && /^[\w.]+$/.test(name)) refs.add(name);
    }
  }
  return refs;
}

/** Import paths of a Go file, plus its own package folder. */
function goReferences(file: string, text: string): References {
  const refs: References = new Set([`dir:${posix.dirname(file)}`]);
  // A block ends at a `)`: none starts after the last one (looking from each for one was quadratic).
  const closed = text.slice(0, text.lastIndexOf(")") + 1);
  const blocks = [...closed.matchAll(/\bimport\s*\(([^)]*)\)/g)].map((m) => m[1] ?? "");
  blocks.push(...[...text.matchAll(/\bimport\s+(?:[\w.]+\s+)?("[^"\n]+")/g)].map((m) => m[1] ?? ""));
  for (const block of blocks) {
    for (const m of block.matchAll(/"([^"\n]+)"/g)) if (m[1]) refs.add(`import:${m[1]}`);
  }
  return refs;
}

function referencesOf(flavor: DependentsFlavor, file: string, text: string): References {
  switch (flavor) {
    case "typescript":
      return typescriptReferences(file, text);
    case "python":
      return pythonReferences(file, text);
    case "go":
      return goReferences(file, text);
    case "none":
      return new Set();
  }
}

/** Whether a file with these references depends on `target`. */
function refersTo(
  flavor: DependentsFlavor,
  refs: References,
  target: string,
  goImportPath?: string,
): boolean {
  switch (flavor) {
    case "typescript": {
      const key = stripTsExtension(target);
      if (refs.has(key)) return true;
      return posix.basename(key) === "index" && refs.has(posix.dirname(key));
    }
    case "python": {
      const module = moduleOfPython(target);
      for (const ref of refs) if (module === ref || module.endsWith(`.${ref}`)) return true;
      return false;
    }
    case "go":
      return (
        refs.has(`dir:${posix.dirname(target)}`) ||
        (goImportPath !== undefined && refs.has(`import:${goImportPath}`))
      );
    case "none":
      return false;
  }
}

interface Parsed {
  mtimeMs: number;
  size: number;
  refs: References;
}

/**
 * Finds the files of one language that import a given file, by a plain text search of their import
 * statements (relative TypeScript specifiers, Python module names, Go import paths and packages). The
 * file list and parsed imports of the user's folder are cached and re-read at most every `refreshMs`
 * (default 30 s) or after `invalidate`; the branch's own changed files are always read from the branch.
 */
export class DependentsIndex {
  private files: string[] | undefined;
  private listedAt = 0;
  private readonly parsed = new Map<string, Parsed>();
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly workspaceRoot: string,
    private readonly extensions: readonly string[],
    private readonly flavor: DependentsFlavor,
    private readonly options: { refreshMs?: number; maxFiles?: number } = {},
  ) {}

  /** Forget cached listings and parses (the user's folder changed). */
  invalidate(): void {
    this.listedAt = 0;
  }

  /** Every file of this language in the user's folder (capped at `maxFiles`), sorted. */
  async listFiles(): Promise<string[]> {
    await this.refresh();
    return this.files ?? [];
  }

  private async refresh(): Promise<void> {
    if (this.files && Date.now() - this.listedAt < (this.options.refreshMs ?? 30_000)) return;
    this.refreshing ??= this.scan().finally(() => {
      this.refreshing = undefined;
    });
    await this.refreshing;
  }

  private async scan(): Promise<void> {
    const maxFiles = this.options.maxFiles ?? 20_000;
    const found: string[] = [];
    const excluded = new Set(DEFAULT_EXCLUDED_DIRS);
    const walk = async (dir: string): Promise<void> => {
      if (found.length >= maxFiles) return;
      let entries: import("node:fs").Dirent[];
      try {
        entries = await readdir(dir ? `${this.workspaceRoot}/${dir}` : this.workspaceRoot, {
          withFileTypes: true,
        });
      } catch {
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (!excluded.has(entry.name) && !entry.name.startsWith(".")) await walk(rel);
        } else if (entry.isFile() && this.extensions.some((ext) => entry.name.toLowerCase().endsWith(ext))) {
          found.push(rel);
          if (found.length >= maxFiles) return;
        }
      }
    };
    await walk("");
    if (this.flavor !== "none") {
      const keep = new Set(found);
      for (const path of this.parsed.keys()) if (!keep.has(path)) this.parsed.delete(path);
      for (const path of found) {
        try {
          const info = await stat(`${this.workspaceRoot}/${path}`);
          const known = this.parsed.get(path);
          if (known && known.mtimeMs === info.mtimeMs && known.size === info.size) continue;
          const text =
            info.size > MAX_FILE_BYTES ? "" : await readFile(`${this.workspaceRoot}/${path}`, "utf8");
          this.parsed.set(path, {
            mtimeMs: info.mtimeMs,
            size: info.size,
            refs: referencesOf(this.flavor, path, text),
          });
        } catch {
          this.parsed.delete(path);
        }
      }
    }
    this.files = found;
    this.listedAt = Date.now();
  }

  private async goImportPath(target: string): Promise<string | undefined> {
    const parts = posix.dirname(target) === "." ? [] : posix.dirname(target).split("/");
    for (let depth = parts.length; depth >= 0; depth--) {
      const dir = parts.slice(0, depth).join("/");
      try {
        const text = await readFile(`${this.workspaceRoot}/${dir ? `${dir}/` : ""}go.mod`, "utf8");
        const module = /^module\s+(\S+)/m.exec(text)?.[1];
        if (!module) return undefined;
        const rest = parts.slice(depth).join("/");
        return rest ? `${module}/${rest}` : module;
      } catch {
        // no go.mod here
      }
    }
    return undefined;
  }

  /**
   * Files that import `target`, at most `limit`, sorted. `branchFiles` holds the branch's changed files
   * of this language (path → content, undefined when deleted): those are searched in the branch's content.
   */
  async dependents(
    target: string,
    branchFiles: Map<string, string | undefined>,
    limit: number,
  ): Promise<string[]> {
    if (this.flavor === "none" || limit <= 0) return [];
    await this.refresh();
    const goImportPath = this.flavor === "go" ? await this.goImportPath(target) : undefined;
    const out = new Set<string>();
    for (const [path, text] of branchFiles) {
      if (path === target || text === undefined) continue;
      if (refersTo(this.flavor, referencesOf(this.flavor, path, text), target, goImportPath)) out.add(path);
    }
    for (const [path, parsed] of this.parsed) {
      if (path === target || branchFiles.has(path)) continue;
      if (refersTo(this.flavor, parsed.refs, target, goImportPath)) out.add(path);
    }
    return [...out].sort().slice(0, limit);
  }
}
