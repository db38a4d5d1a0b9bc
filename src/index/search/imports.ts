/**
 * What a source file imports, resolved to indexed files. Read with a few regular expressions per language:
 * it runs at query time on the handful of best-ranked files, so it must be cheap, and an import it misses
 * only costs a missed boost.
 */

/** Where an import may point: exact workspace paths to try in order, or a module path to match. */
interface ImportTarget {
  /** Workspace-relative candidate paths, first existing one wins. */
  exact?: string[];
  /** A module path such as `pkg/sub/mod` (no extension), resolved with `extensions`. */
  module?: string;
  extensions?: string[];
  /** A directory: every file directly in it with one of `extensions` (Go packages). */
  directory?: string;
}

const JS_EXTENSIONS = ["", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const JS_INDEX = ["/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs"];

function dirOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at < 0 ? "" : path.slice(0, at);
}

/** `base` joined with a relative specifier, `..` and `.` folded; undefined if it climbs out of the root. */
function joinRelative(base: string, specifier: string): string | undefined {
  const parts = base === "" ? [] : base.split("/");
  for (const part of specifier.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

/**
 * `from X import Y`: X's leading dots and the rest of its name (a run of blanks or dots is split one way
 * only), then Y, a parenthesised list (over lines) or the rest of the line.
 */
const FROM_HEAD = String.raw`^[ \t]*from(?:[ \t]+(?=[\w.])(\.*)(?!\.)([\w.]*)|[ \t])[ \t]+import[ \t]+`;
const FROM_IMPORT = new RegExp(String.raw`${FROM_HEAD}(\([^)]*\)|[^\n#]*)`, "gm");
/** FROM_IMPORT where no `)` follows, so no list can close there. */
const FROM_IMPORT_UNCLOSED = new RegExp(String.raw`${FROM_HEAD}([^\n#]*)`, "gm");

/**
 * The matches of FROM_IMPORT in `text`. After the text's last `)` they are read without looking for a
 * list's `)`: the search from every `from … import (` to the end of the text was quadratic.
 */
function fromImports(text: string): RegExpExecArray[] {
  const found: RegExpExecArray[] = [];
  const lastClose = text.lastIndexOf(")");
  for (let at = 0; ; ) {
    const pattern = at > lastClose ? FROM_IMPORT_UNCLOSED : FROM_IMPORT;
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (!match) return found;
    found.push(match);
    at = pattern.lastIndex;
  }
}

function pythonTargets(path: string, text: string): ImportTarget[] {
  const targets: ImportTarget[] = [];
  const module = (dotted: string, base?: string): ImportTarget | undefined => {
    const rest = dotted.split(".").filter(Boolean).join("/");
    if (base === undefined) return rest ? { module: rest, extensions: [".py", "/__init__.py"] } : undefined;
    const joined = rest ? (base ? `${base}/${rest}` : rest) : base;
    return joined ? { exact: [`${joined}.py`, `${joined}/__init__.py`] } : undefined;
  };
  const packageBase = (dots: number): string | undefined => {
    let base: string | undefined = dirOf(path);
    for (let i = 1; i < dots && base !== undefined; i++) base = base === "" ? undefined : dirOf(base);
    return base;
  };
  for (const m of fromImports(text)) {
    const dots = (m[1] ?? "").length;
    const base = dots > 0 ? packageBase(dots) : undefined;
    if (dots > 0 && base === undefined) continue;
    const from = m[2] ?? "";
    // `from . import sub` names submodules; the package itself is only a target when named
    const target = from ? module(from, base) : undefined;
    if (target) targets.push(target);
    // `from pkg import sub` may name a submodule
    for (const name of (m[3] ?? "").replace(/[()]/g, " ").split(",")) {
      const imported = name.trim().split(/\s+/)[0] ?? "";
      if (/^[A-Za-z_]\w*$/.test(imported)) {
        const sub = module(from ? `${from}.${imported}` : imported, base);
        if (sub) targets.push(sub);
      }
    }
  }
  for (const m of text.matchAll(
    /^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)/gm,
  )) {
    for (const part of (m[1] ?? "").split(",")) {
      const target = module(part.trim().split(/\s+/)[0] ?? "");
      if (target) targets.push(target);
    }
  }
  // extensions and plugins loaded by name: setup_extension('pkg.ext.mod'), import_module("pkg.mod")
  for (const m of text.matchAll(/["']([a-z_]\w*(?:\.[a-z_]\w*){2,})["']/g)) {
    const target = module(m[1] ?? "");
    if (target) targets.push(target);
  }
  return targets;
}

function javascriptTargets(path: string, text: string): ImportTarget[] {
  const targets: ImportTarget[] = [];
  const pattern =
    /(?:\bfrom[ \t]*|\bimport[ \t]*(?:\([ \t]*)?|\brequire[ \t]*\([ \t]*|^[ \t]*import[ \t]+)["'](\.{1,2}\/[^"'\n]*)["']/gm;
  for (const m of text.matchAll(pattern)) {
    const joined = joinRelative(dirOf(path), m[1] ?? "");
    if (joined === undefined) continue;
    const stem = joined.replace(/\.(?:js|jsx|mjs|cjs)$/, "");
    targets.push({
      exact: [
        joined,
        ...JS_EXTENSIONS.slice(1).map((extension) => `${stem}${extension}`),
        ...JS_INDEX.map((index) => `${joined}${index}`),
      ],
    });
  }
  return targets;
}

function cTargets(path: string, text: string): ImportTarget[] {
  const targets: ImportTarget[] = [];
  for (const m of text.matchAll(/^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"/gm)) {
    const included = m[1] ?? "";
    const local = joinRelative(dirOf(path), included);
    if (local !== undefined) targets.push({ exact: [local] });
    targets.push({
      module: included.replace(/\.[^./]+$/, ""),
      extensions: [included.slice(included.lastIndexOf("."))],
    });
  }
  return targets;
}

function rustTargets(path: string, text: string): ImportTarget[] {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const ownDir = /^(?:lib|main|mod)\.rs$/.test(name) ? dirOf(path) : path.replace(/\.rs$/, "");
  const targets: ImportTarget[] = [];
  // `pub(crate)`, `pub(in path)`: up to the next parenthesis, so that no line reads on to a far `)`
  for (const m of text.matchAll(/^[ \t]*(?:pub(?:\([^()]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;/gm)) {
    const child = ownDir ? `${ownDir}/${m[1]}` : (m[1] ?? "");
    targets.push({ exact: [`${child}.rs`, `${child}/mod.rs`] });
  }
  for (const m of text.matchAll(/\buse[ \t]+(?:crate|super|self)?(?:::)?((?:\w+::)*\w+)/g)) {
    const segments = (m[1] ?? "").split("::");
    // `use crate::a::b::Item`: the module is `a/b` or `a` (the last segments may be items)
    for (let end = segments.length; end >= 1; end--)
      targets.push({ module: segments.slice(0, end).join("/"), extensions: [".rs", "/mod.rs"] });
  }
  return targets;
}

function javaTargets(text: string, extension: string): ImportTarget[] {
  return [...text.matchAll(/^[ \t]*import[ \t]+(?:static[ \t]+)?([\w.]+)[ \t]*;/gm)].map((m) => ({
    module: (m[1] ?? "").split(".").join("/"),
    extensions: [extension],
  }));
}

function goTargets(text: string): ImportTarget[] {
  const specs: string[] = [];
  // A block ends at a `)`: none starts after the last one (looking from each for one was quadratic).
  const closed = text.slice(0, text.lastIndexOf(")") + 1);
  for (const block of closed.matchAll(/^import[ \t]*\(([\s\S]*?)\)/gm))
    for (const m of (block[1] ?? "").matchAll(/"([^"\n]+)"/g)) specs.push(m[1] ?? "");
  for (const m of text.matchAll(/^import[ \t]+(?:\w+[ \t]+)?"([^"\n]+)"/gm)) specs.push(m[1] ?? "");
  return specs.map((spec) => ({ directory: spec, extensions: [".go"] }));
}

function phpTargets(text: string): ImportTarget[] {
  // PSR-4: the first namespace segment is the vendor prefix, mapped to a base folder (`App\` → `app/`)
  return [...text.matchAll(/^[ \t]*use[ \t]+([\w\\]+)/gm)].map((m) => ({
    module: (m[1] ?? "").split("\\").slice(1).join("/"),
    extensions: [".php"],
  }));
}

function rubyTargets(path: string, text: string): ImportTarget[] {
  return [...text.matchAll(/\brequire_relative[ \t(]*["']([^"'\n]+)["']/g)].flatMap((m) => {
    const joined = joinRelative(dirOf(path), m[1] ?? "");
    return joined === undefined ? [] : [{ exact: [joined, `${joined}.rb`] }];
  });
}

function importTargets(path: string, text: string, language: string): ImportTarget[] {
  switch (language) {
    case "python":
      return pythonTargets(path, text);
    case "typescript":
    case "tsx":
    case "javascript":
      return javascriptTargets(path, text);
    case "c":
    case "cpp":
      return cTargets(path, text);
    case "rust":
      return rustTargets(path, text);
    case "java":
      return javaTargets(text, ".java");
    case "go":
      return goTargets(text);
    case "php":
      return phpTargets(text);
    case "ruby":
      return rubyTargets(path, text);
    default:
      return [];
  }
}

/** The indexed files, arranged for resolving imports. */
export class ImportResolver {
  private readonly paths: Set<string>;
  private readonly bySuffix = new Map<string, string[]>();
  private readonly byDirectory = new Map<string, string[]>();

  constructor(paths: Iterable<string>) {
    this.paths = new Set(paths);
    for (const path of this.paths) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      const list = this.bySuffix.get(name);
      if (list) list.push(path);
      else this.bySuffix.set(name, [path]);
      const dir = dirOf(path);
      const inDir = this.byDirectory.get(dir);
      if (inDir) inDir.push(path);
      else this.byDirectory.set(dir, [path]);
    }
  }

  /**
   * The indexed files that `path` (whose text and language are given) imports, without itself. A module
   * path matches a file at that path, or — when it has at least two components, so that `json` does not
   * match every `json.py` — at the end of a longer path (a `src/` layout); the shortest match wins.
   */
  resolve(path: string, text: string, language: string): string[] {
    const found = new Set<string>();
    for (const target of importTargets(path, text, language)) {
      const hit = this.resolveTarget(target);
      for (const file of hit) if (file !== path) found.add(file);
    }
    return [...found];
  }

  private resolveTarget(target: ImportTarget): string[] {
    if (target.exact) {
      const hit = target.exact.find((candidate) => this.paths.has(candidate));
      return hit ? [hit] : [];
    }
    if (target.module !== undefined) {
      for (const extension of target.extensions ?? []) {
        const hit = this.matchSuffix(`${target.module}${extension}`);
        if (hit) return [hit];
      }
      return [];
    }
    if (target.directory !== undefined) {
      const components = target.directory.split("/");
      // A Go import path ends with the package's directory inside the module: match its longest suffix of
      // two or more components, or of one when the path starts with a domain (not the standard library).
      const last = components[0]?.includes(".") ? components.length - 1 : components.length - 2;
      for (let start = 0; start <= last; start++) {
        const files = this.byDirectory.get(components.slice(start).join("/"));
        if (files)
          return files.filter(
            (file) => target.extensions?.some((e) => file.endsWith(e)) && !file.endsWith("_test.go"),
          );
      }
    }
    return [];
  }

  private matchSuffix(candidate: string): string | undefined {
    if (this.paths.has(candidate)) return candidate;
    if (!candidate.includes("/")) return undefined;
    let best: string | undefined;
    for (const file of this.bySuffix.get(candidate.slice(candidate.lastIndexOf("/") + 1)) ?? []) {
      if (file.endsWith(`/${candidate}`) && (!best || file.length < best.length)) best = file;
    }
    return best;
  }
}
