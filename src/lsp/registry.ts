import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, extname, join } from "node:path";
import { LspError } from "./errors.js";

/** The command that starts a language server. */
export interface ServerSpec {
  command: string;
  args: string[];
  /** Extra environment variables for the server. */
  env?: Record<string, string>;
  /** What runs, in words, e.g. "tsc --lsp (TypeScript 7.0.2)". */
  description: string;
}

/** How the host finds files whose diagnostics an edit of another file can change. */
export type DependentsFlavor = "typescript" | "python" | "go" | "none";

/**
 * How a push-diagnostics server is made to publish diagnostics for a document whose text did not
 * change: `bump` re-sends the same text under a new version (the server re-checks it against the other
 * documents); `reuse` keeps the last diagnostics published for the held version, for servers whose
 * diagnostics of a document depend only on its own text and the disk (clangd 14: open headers do not
 * reach their includers).
 */
export type ResendPolicy = "bump" | "reuse";

export interface LanguageDefinition {
  /** The registry key, e.g. "typescript"; one server runs per (workspace, id). */
  id: string;
  /** A name for people, e.g. "TypeScript/JavaScript". */
  name: string;
  /** File extension (with the dot, lower case) → the LSP languageId sent in didOpen. */
  extensions: Record<string, string>;
  /** Project files that mark a project root of this language, nearest first wins. */
  markers: string[];
  /** The server command; throws LspError `not-installed` when the server is not on this machine. */
  resolveServer(): ServerSpec;
  /** Answers to `workspace/configuration`, by section. */
  settings?: Record<string, unknown>;
  initializationOptions?: unknown;
  resend: ResendPolicy;
  dependents: DependentsFlavor;
  /**
   * The server offers pull diagnostics only by dynamic registration (pyright): the host allows it and
   * waits this long at start for the registration; pulls need no version bumps or quiet period.
   */
  dynamicPullDiagnosticsMs?: number;
  /** At most this many other files are checked for cross-file effects (default: the host's setting). */
  maxRelatedFiles?: number;
  /**
   * Server messages (`window/showMessage`, `window/logMessage`) that say the project could not be loaded,
   * beyond the errors a server shows: a lint then reports itself partial with the message.
   */
  loadErrors?: RegExp;
}

/** The language of a file and the project it belongs to. */
export interface LanguageMatch {
  definition: LanguageDefinition;
  /** The LSP languageId of this file, e.g. "typescriptreact". */
  languageId: string;
  /** Workspace-relative folder of the nearest project marker ("" for the root, or when none is found). */
  projectRoot: string;
  /** The marker file found there, if any. */
  marker?: string;
}

const require = createRequire(import.meta.url);

function packageDir(name: string, from: NodeJS.Require = require): string | undefined {
  try {
    return dirname(from.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function packageJson(dir: string): { version?: string; bin?: string | Record<string, string> } {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    version?: string;
    bin?: string | Record<string, string>;
  };
}

/** The absolute path of an executable found on PATH, or undefined. */
export function which(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * TypeScript 7's native `tsc --lsp --stdio`, resolved from the installed `typescript` package (its
 * platform binary is run directly, without the Node.js wrapper); typescript-language-server when
 * TypeScript is older and that server is installed.
 */
export function resolveTypeScriptServer(): ServerSpec {
  const tsDir = packageDir("typescript");
  const version = tsDir ? packageJson(tsDir).version : undefined;
  const major = Number((version ?? "0").split(".")[0]);
  if (tsDir && major >= 7) {
    const platformPackage = `@typescript/typescript-${process.platform}-${process.arch}`;
    const nativeDir = packageDir(platformPackage, createRequire(join(tsDir, "package.json")));
    const exe = nativeDir ? join(nativeDir, "lib", process.platform === "win32" ? "tsc.exe" : "tsc") : "";
    if (exe && existsSync(exe)) {
      return { command: exe, args: ["--lsp", "--stdio"], description: `tsc --lsp (TypeScript ${version})` };
    }
    return {
      command: process.execPath,
      args: [join(tsDir, "bin", "tsc"), "--lsp", "--stdio"],
      description: `tsc --lsp (TypeScript ${version}, via Node.js)`,
    };
  }
  const tlsDir = packageDir("typescript-language-server");
  if (tlsDir) {
    const { bin, version: tlsVersion } = packageJson(tlsDir);
    const entry = typeof bin === "string" ? bin : bin?.["typescript-language-server"];
    if (entry) {
      return {
        command: process.execPath,
        args: [join(tlsDir, entry), "--stdio"],
        description: `typescript-language-server ${tlsVersion ?? "?"} (TypeScript ${version ?? "?"})`,
      };
    }
  }
  throw new LspError(
    "not-installed",
    "no TypeScript language server: install typescript@7 (tsc --lsp) or typescript-language-server",
  );
}

export function resolvePyright(): ServerSpec {
  const dir = packageDir("pyright");
  if (!dir) throw new LspError("not-installed", "no Python language server: install pyright from npm");
  return {
    command: process.execPath,
    args: [join(dir, "langserver.index.js"), "--stdio"],
    description: `pyright-langserver ${packageJson(dir).version ?? "?"}`,
  };
}

function fromPath(command: string, args: string[], what: string): ServerSpec {
  const path = which(command);
  if (!path) throw new LspError("not-installed", `no ${what} language server: ${command} is not on PATH`);
  return { command: path, args, description: command };
}

export const TYPESCRIPT: LanguageDefinition = {
  id: "typescript",
  name: "TypeScript/JavaScript",
  extensions: {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
  },
  markers: ["tsconfig.json", "jsconfig.json", "package.json"],
  resolveServer: resolveTypeScriptServer,
  resend: "bump",
  dependents: "typescript",
};

export const PYTHON: LanguageDefinition = {
  id: "python",
  name: "Python",
  extensions: { ".py": "python", ".pyi": "python" },
  markers: ["pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg", "requirements.txt"],
  resolveServer: resolvePyright,
  resend: "bump",
  dependents: "python",
  dynamicPullDiagnosticsMs: 3000,
  // pyright re-checks every importer in full: past a few, the cross-file check dominates a lint.
  maxRelatedFiles: 4,
};

export const GO: LanguageDefinition = {
  id: "go",
  name: "Go",
  extensions: { ".go": "go" },
  markers: ["go.work", "go.mod"],
  resolveServer: () => fromPath("gopls", [], "Go"),
  // Diagnostics as soon as a package is type-checked, not after gopls' default debounce.
  settings: { gopls: { diagnosticsDelay: "0s" } },
  resend: "bump",
  dependents: "go",
  loadErrors: /errors? loading (workspace|packages)|could not load packages|failed to load view/i,
};

export const C_CPP: LanguageDefinition = {
  id: "c",
  name: "C/C++",
  extensions: {
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
  },
  markers: ["compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt"],
  // No background index: it would write .cache/clangd and scan the whole project.
  resolveServer: () => fromPath("clangd", ["--background-index=false", "--log=error"], "C/C++"),
  resend: "reuse",
  dependents: "none",
};

export const BUILTIN_LANGUAGES: readonly LanguageDefinition[] = [TYPESCRIPT, PYTHON, GO, C_CPP];

/** Languages by file extension and project markers. */
export class Registry {
  private readonly byExtension = new Map<string, { definition: LanguageDefinition; languageId: string }>();
  private readonly byId = new Map<string, LanguageDefinition>();

  constructor(readonly definitions: readonly LanguageDefinition[] = BUILTIN_LANGUAGES) {
    for (const definition of definitions) {
      this.byId.set(definition.id, definition);
      for (const [ext, languageId] of Object.entries(definition.extensions)) {
        this.byExtension.set(ext.toLowerCase(), { definition, languageId });
      }
    }
  }

  get(id: string): LanguageDefinition | undefined {
    return this.byId.get(id);
  }

  /** The language of a file by its extension, or undefined. */
  languageOf(relPath: string): { definition: LanguageDefinition; languageId: string } | undefined {
    return this.byExtension.get(extname(relPath).toLowerCase());
  }

  /**
   * The language of `relPath` and its project: the nearest folder, from the file's own up to the
   * workspace root, that holds one of the language's markers.
   */
  detect(workspaceRoot: string, relPath: string): LanguageMatch | undefined {
    const found = this.languageOf(relPath);
    if (!found) return undefined;
    const parts = relPath.split("/").slice(0, -1);
    for (let depth = parts.length; depth >= 0; depth--) {
      const dir = parts.slice(0, depth).join("/");
      for (const marker of found.definition.markers) {
        if (existsSync(join(workspaceRoot, dir, marker))) {
          return { ...found, projectRoot: dir, marker };
        }
      }
    }
    return { ...found, projectRoot: "" };
  }

  /** Languages whose project markers sit at the workspace root. */
  detectWorkspace(workspaceRoot: string): LanguageDefinition[] {
    return this.definitions.filter((definition) =>
      definition.markers.some((marker) => existsSync(join(workspaceRoot, marker))),
    );
  }
}
