import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import type {
  Diagnostic,
  DocumentSymbol,
  Hover,
  LocationLink,
  Location as LspLocation,
  SymbolInformation,
  WorkspaceSymbol,
} from "vscode-languageserver-protocol";
import type { LspConfig } from "../config/config.js";
import { readIfRegular } from "../workspace/rooted.js";
import { LruCache } from "./cache.js";
import { introducedDiagnostics, type LineMap, lineMapping } from "./compare.js";
import type { LspConnection } from "./connection.js";
import {
  sortDiags,
  toDiag,
  toDocumentSymbols,
  toHover,
  toLocations,
  toLspPosition,
  toWorkspaceSymbols,
} from "./convert.js";
import { DependentsIndex } from "./dependents.js";
import { DocumentStore, type WantedDocument } from "./documents.js";
import { isLspError, LspError } from "./errors.js";
import { LoadProblems, messageLine } from "./load-problems.js";
import { spawnLauncher } from "./processes.js";
import { BUILTIN_LANGUAGES, type LanguageDefinition, type LanguageMatch, Registry } from "./registry.js";
import { editedSymbols, rankByRelevance } from "./relevance.js";
import { FairScheduler } from "./scheduler.js";
import { LanguageServer, type ServerState } from "./server.js";
import { DiagnosticsInbox, type Expectation, type Settled, settlePull, settlePush } from "./settle.js";
import type {
  Diag,
  DocumentSource,
  HoverResult,
  Launcher,
  LintResult,
  Location,
  Position,
  SymbolInfo,
} from "./types.js";
import { normalizeRelPath, UriMapper } from "./uris.js";

export const DEFAULT_LSP_CONFIG: LspConfig = {
  idleMinutes: 15,
  requestTimeoutMs: 10_000,
  lintTimeoutMs: 15_000,
  quietMs: 150,
};

export interface LspHostOptions {
  /** The `lsp` block of the configuration; missing fields take the defaults. */
  config?: Partial<LspConfig>;
  /** Starts server processes; default: a plain child process (`spawnLauncher`). */
  launcher?: Launcher;
  /** The languages served; default: TypeScript/JavaScript, Python, Go, C/C++. */
  languages?: readonly LanguageDefinition[];
  /** The environment servers start with; default: this process's. */
  env?: NodeJS.ProcessEnv;
  /**
   * Reads a file of the user's folder (the unedited state that `lint` without `content` compares with,
   * and what documents return to when another branch is served). Default: read `workspaceRoot/relPath`.
   */
  readBase?: (workspaceRoot: string, relPath: string) => Promise<string | undefined>;
  /** At most this many other files are checked for cross-file effects of an edit (default 16). */
  maxRelatedFiles?: number;
  /** Clean documents beyond this many are closed, least recently used first (default 200). */
  maxOpenDocuments?: number;
  /** Settled diagnostics kept per server, by document state (default 512). */
  resultCacheSize?: number;
}

export interface LintOptions {
  /** Lint the file as if it held this content (nothing is written). Default: the branch's content. */
  content?: string;
  /** Look for cross-file effects (default true). */
  crossFile?: boolean;
}

export interface NavigationOptions {
  /** Answer as if the file held this content. Default: the branch's content. */
  content?: string;
}

export interface ServerStatus {
  workspaceRoot: string;
  language: string;
  state: ServerState;
  server: string;
  pid: number | undefined;
  starts: number;
  crashes: number;
  idleShutdowns: number;
  unresponsiveRestarts: number;
  openDocuments: number;
  queuedJobs: number;
}

interface CachedSettle {
  diagnostics: Map<string, Diagnostic[]>;
  versions: Map<string, number>;
  /** Why the server's answer may be incomplete (it said it could not load the project). */
  problems: string[];
}

/** A settled state of the documents, with the load problems the server reported meanwhile. */
type SettledState = Settled & { versions: Map<string, number>; problems: string[] };

/** Importers read to rank them by relevance; those beyond are ranked by name. */
const MAX_RANKED_FILES = 500;

/** At most this many of a server's load problems are reported with a result. */
const MAX_PROBLEMS = 3;

/** One server per (workspace, language), with its scheduler, documents and diagnostics. */
interface ServerEntry {
  workspaceRoot: string;
  definition: LanguageDefinition;
  uris: UriMapper;
  server: LanguageServer;
  scheduler: FairScheduler;
  docs: DocumentStore;
  inbox: DiagnosticsInbox;
  cache: LruCache<string, CachedSettle>;
  dependents: DependentsIndex;
  problems: LoadProblems;
  /** Makes the documents go to this connection (called at the start of every job). */
  attach(connection: LspConnection): void;
}

/** A branch's files of one language that differ from the user's folder: path → content (undefined: deleted). */
type Overlay = Map<string, string | undefined>;

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

/** The user's version of a file, read without following any symlink on the way (src/workspace/rooted.ts). */
async function defaultReadBase(workspaceRoot: string, relPath: string): Promise<string | undefined> {
  return (await readIfRegular(workspaceRoot, relPath))?.toString("utf8");
}

/**
 * The language-server host: lint, navigation and symbols for any number of branches, on one server per
 * (workspace, language) that the branches share by taking turns.
 */
export class LspHost {
  readonly registry: Registry;
  private readonly config: LspConfig;
  private readonly launcher: Launcher;
  private readonly env: NodeJS.ProcessEnv;
  private readonly readBaseFile: (workspaceRoot: string, relPath: string) => Promise<string | undefined>;
  private readonly entries = new Map<string, ServerEntry>();
  private closed = false;

  constructor(private readonly options: LspHostOptions = {}) {
    this.config = { ...DEFAULT_LSP_CONFIG, ...options.config };
    this.launcher = options.launcher ?? spawnLauncher;
    this.env = options.env ?? process.env;
    this.registry = new Registry(options.languages ?? BUILTIN_LANGUAGES);
    this.readBaseFile = options.readBase ?? defaultReadBase;
  }

  /** The language of a file and its project (nearest marker), or undefined when none serves it. */
  detect(workspaceRoot: string, relPath: string): LanguageMatch | undefined {
    return this.registry.detect(workspaceRoot, normalizeRelPath(relPath));
  }

  // ---------------------------------------------------------------------------------------------
  // Public API

  /**
   * Diagnostics of `relPath` in the branch, as if it held `content` when given, settled for exactly that
   * version; `introduced` are those absent from the same file unedited (the branch's current content
   * when `content` is given, else the user's folder), and `otherFiles` the files that import it (and the
   * branch's other changed files) where the edit introduced diagnostics.
   */
  async lint(source: DocumentSource, relPath: string, options: LintOptions = {}): Promise<LintResult> {
    const started = performance.now();
    const rel = normalizeRelPath(relPath);
    const { entry } = this.entryFor(source.workspaceRoot, rel);
    let timedOut = false;
    const job = async (connection: LspConnection): Promise<LintResult> => {
      const deadline = Date.now() + this.config.lintTimeoutMs;
      const overlay = await this.overlayOf(entry, source);
      const branchText = overlay.has(rel) ? overlay.get(rel) : await source.readText(rel);
      const newText = options.content ?? branchText;
      if (newText === undefined)
        throw new LspError("not-found", `${rel} does not exist in branch ${source.id}`);
      const baseText = options.content !== undefined ? branchText : await this.readBase(entry, rel);

      const { checked: related, skipped } =
        options.crossFile === false
          ? { checked: [], skipped: [] }
          : await this.relatedFiles(entry, source, rel, overlay, { baseText, newText });
      const relatedDocs: WantedDocument[] = [];
      for (const path of related) {
        if (overlay.has(path)) continue;
        const text = await source.readText(path);
        if (text !== undefined) relatedDocs.push(this.wanted(entry, path, text, false));
      }
      const targetUri = entry.uris.toUri(rel);
      const relatedUris = related.map((path) => entry.uris.toUri(path));

      const stateOf = (targetText: string | undefined): WantedDocument[] => [
        ...this.overlayDocs(entry, overlay, rel),
        this.wanted(entry, rel, targetText ?? null, true),
        ...relatedDocs,
      ];
      const baseline = await this.settle(
        entry,
        connection,
        stateOf(baseText),
        baseText === undefined ? relatedUris : [targetUri, ...relatedUris],
        deadline,
      );
      const current = await this.settle(
        entry,
        connection,
        stateOf(newText),
        [targetUri, ...relatedUris],
        deadline,
      );

      const diagsOf = (settled: Settled, uri: string, path: string): Diag[] =>
        sortDiags((settled.diagnostics.get(uri) ?? []).map((d) => toDiag(path, d)));
      const diagnostics = diagsOf(current, targetUri, rel);
      const mapLine: LineMap | undefined =
        baseText === undefined ? undefined : lineMapping(baseText, newText);
      const introduced = mapLine
        ? introducedDiagnostics(diagnostics, diagsOf(baseline, targetUri, rel), mapLine)
        : diagnostics;
      timedOut = baseline.partial || current.partial;
      const partialReasons = [
        ...(timedOut ? [`diagnostics did not settle within ${this.config.lintTimeoutMs} ms`] : []),
        ...new Set([...baseline.problems, ...current.problems]),
      ].slice(0, MAX_PROBLEMS + 1);
      const otherFiles: LintResult["otherFiles"] = [];
      related.forEach((path, i) => {
        const uri = relatedUris[i] ?? "";
        const added = introducedDiagnostics(diagsOf(current, uri, path), diagsOf(baseline, uri, path));
        if (added.length > 0) otherFiles.push({ path, introduced: added });
      });
      return {
        path: rel,
        language: entry.definition.id,
        diagnostics,
        introduced,
        otherFiles,
        checkedFiles: related,
        skippedFiles: skipped,
        partial: partialReasons.length > 0,
        partialReasons,
        version: current.versions.get(targetUri) ?? entry.docs.get(targetUri)?.version ?? 0,
        elapsedMs: Math.round((performance.now() - started) * 10) / 10,
      };
    };
    return this.schedule(entry, source, job, () => !timedOut);
  }

  /** Where the symbol at `position` is defined, on the branch's state. */
  async definition(
    source: DocumentSource,
    relPath: string,
    position: Position,
    options: NavigationOptions = {},
  ): Promise<Location[]> {
    return this.navigate(source, relPath, options, "definitionProvider", async (entry, connection, uri) => {
      const result = await connection.request<unknown, LspLocation | LspLocation[] | LocationLink[] | null>(
        "textDocument/definition",
        { textDocument: { uri }, position: toLspPosition(position) },
      );
      return toLocations(entry.uris, result);
    });
  }

  /** Every reference to the symbol at `position` (with its declaration unless told otherwise). */
  async references(
    source: DocumentSource,
    relPath: string,
    position: Position,
    options: NavigationOptions & { includeDeclaration?: boolean } = {},
  ): Promise<Location[]> {
    return this.navigate(source, relPath, options, "referencesProvider", async (entry, connection, uri) => {
      const result = await connection.request<unknown, LspLocation[] | null>("textDocument/references", {
        textDocument: { uri },
        position: toLspPosition(position),
        context: { includeDeclaration: options.includeDeclaration ?? true },
      });
      return toLocations(entry.uris, result);
    });
  }

  /** The hover text at `position`, or null. */
  async hover(
    source: DocumentSource,
    relPath: string,
    position: Position,
    options: NavigationOptions = {},
  ): Promise<HoverResult | null> {
    return this.navigate(source, relPath, options, "hoverProvider", async (_entry, connection, uri) => {
      const result = await connection.request<unknown, Hover | null>("textDocument/hover", {
        textDocument: { uri },
        position: toLspPosition(position),
      });
      return toHover(result);
    });
  }

  /** The symbols of a file, outer before inner, with `container` naming the enclosing ones. */
  async documentSymbols(
    source: DocumentSource,
    relPath: string,
    options: NavigationOptions = {},
  ): Promise<SymbolInfo[]> {
    return this.navigate(
      source,
      relPath,
      options,
      "documentSymbolProvider",
      async (entry, connection, uri) => {
        const result = await connection.request<unknown, DocumentSymbol[] | SymbolInformation[] | null>(
          "textDocument/documentSymbol",
          { textDocument: { uri } },
        );
        return toDocumentSymbols(entry.uris, uri, result);
      },
    );
  }

  /**
   * Symbols matching `query` across the workspace, on the branch's state. `languages` defaults to those
   * with a server running for this workspace, else those whose project markers sit at its root.
   */
  async workspaceSymbols(
    source: DocumentSource,
    query: string,
    options: { languages?: string[]; limit?: number } = {},
  ): Promise<SymbolInfo[]> {
    const root = source.workspaceRoot;
    let languages = options.languages;
    if (!languages) {
      const running = [...this.entries.values()]
        .filter((entry) => entry.workspaceRoot === root && entry.server.state !== "stopped")
        .map((entry) => entry.definition.id);
      languages = running.length > 0 ? running : this.registry.detectWorkspace(root).map((d) => d.id);
    }
    const out: SymbolInfo[] = [];
    for (const id of languages) {
      const definition = this.registry.get(id);
      if (!definition) throw new LspError("unsupported", `no language server registered for ${id}`);
      const entry = this.entry(root, definition);
      const found = await this.schedule(entry, source, async (connection) => {
        if (!connection.capabilities.workspaceSymbolProvider) return [];
        const overlay = await this.overlayOf(entry, source);
        const wanted = this.overlayDocs(entry, overlay, undefined);
        if (wanted.every((doc) => doc.text === null) && entry.docs.size === 0) {
          // Servers such as tsc load a project only when one of its files is open.
          const anchor = (await entry.dependents.listFiles())[0];
          const text = anchor ? await source.readText(anchor) : undefined;
          if (anchor && text !== undefined) wanted.push(this.wanted(entry, anchor, text, false));
        }
        await entry.docs.switchTo(wanted, (path) => this.readBase(entry, path), this.maxOpen);
        const result = await connection.request<unknown, SymbolInformation[] | WorkspaceSymbol[] | null>(
          "workspace/symbol",
          { query },
        );
        return toWorkspaceSymbols(entry.uris, result);
      });
      out.push(...found);
    }
    return options.limit === undefined ? out : out.slice(0, options.limit);
  }

  /**
   * Files of the user's folder changed (seen by a watcher): servers are told, cached results and import
   * listings of that workspace are dropped, and open documents holding those files are re-read.
   */
  async notifyFilesChanged(workspaceRoot: string, relPaths: string[]): Promise<void> {
    const paths = new Set(relPaths.map(normalizeRelPath));
    const jobs: Promise<unknown>[] = [];
    for (const entry of this.entries.values()) {
      if (entry.workspaceRoot !== workspaceRoot) continue;
      entry.cache.clear();
      entry.dependents.invalidate();
      for (const doc of entry.docs.held()) if (paths.has(doc.relPath)) doc.overlay = true;
      const connection = entry.server.state === "running" ? await entry.server.ensure() : undefined;
      if (connection) {
        jobs.push(
          entry.scheduler.run("\u0000user", async () => {
            connection.notify("workspace/didChangeWatchedFiles", {
              changes: [...paths].map((path) => ({ uri: entry.uris.toUri(path), type: 2 })),
            });
          }),
        );
      }
    }
    await Promise.allSettled(jobs);
  }

  /** Every server this host knows, running or not. */
  status(): ServerStatus[] {
    return [...this.entries.values()].map((entry) => ({
      workspaceRoot: entry.workspaceRoot,
      language: entry.definition.id,
      state: entry.server.state,
      server: entry.server.description,
      pid: entry.server.pid,
      starts: entry.server.starts,
      crashes: entry.server.crashes,
      idleShutdowns: entry.server.idleShutdowns,
      unresponsiveRestarts: entry.server.unresponsiveRestarts,
      openDocuments: entry.docs.size,
      queuedJobs: entry.scheduler.pending,
    }));
  }

  /** Stops every server (queued requests fail with `shut-down`); the host cannot be used afterwards. */
  async shutdown(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    for (const entry of entries) entry.scheduler.close();
    await Promise.all(entries.map((entry) => entry.server.stop(true)));
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  private get maxOpen(): number {
    return this.options.maxOpenDocuments ?? 200;
  }

  private entryFor(workspaceRoot: string, rel: string): { entry: ServerEntry; languageId: string } {
    const found = this.registry.languageOf(rel);
    if (!found) throw new LspError("unsupported", `no language server handles ${rel}`);
    return { entry: this.entry(workspaceRoot, found.definition), languageId: found.languageId };
  }

  private entry(workspaceRoot: string, definition: LanguageDefinition): ServerEntry {
    if (this.closed) throw new LspError("shut-down", "the language-server host is shut down");
    const key = `${workspaceRoot}\u0000${definition.id}`;
    const known = this.entries.get(key);
    if (known) return known;
    let real = workspaceRoot;
    try {
      real = realpathSync(workspaceRoot);
    } catch {
      // reported when the server starts
    }
    const uris = new UriMapper(workspaceRoot, [real]);
    const inbox = new DiagnosticsInbox();
    const problems = new LoadProblems(definition.loadErrors);
    let docs: DocumentStore | undefined;
    let current: LspConnection | undefined;
    const server = new LanguageServer({
      definition,
      workspaceRoot,
      rootUri: uris.rootUri,
      launcher: this.launcher,
      env: this.env,
      requestTimeoutMs: this.config.requestTimeoutMs,
      idleMs: this.config.idleMinutes * 60_000,
      onDiagnostics: (params) => inbox.publish(params),
      onMessage: (message, shown) => problems.record(message, shown),
      onExit: () => {
        docs?.reset();
        inbox.clear();
        problems.clear();
      },
    });
    // Documents are only sent from jobs, which hold the running connection.
    docs = new DocumentStore((method, params) => current?.notify(method, params));
    const entry: ServerEntry = {
      workspaceRoot,
      definition,
      uris,
      server,
      scheduler: new FairScheduler({ before: () => server.acquire(), after: () => server.release() }),
      docs,
      inbox,
      cache: new LruCache(this.options.resultCacheSize ?? 512),
      dependents: new DependentsIndex(
        workspaceRoot,
        Object.keys(definition.extensions),
        definition.dependents,
      ),
      problems,
      attach: (connection) => {
        current = connection;
      },
    };
    this.entries.set(key, entry);
    return entry;
  }

  /** Runs `job` on the entry's server in the branch's turn. */
  private schedule<T>(
    entry: ServerEntry,
    source: DocumentSource,
    job: (connection: LspConnection) => Promise<T>,
    /** Whether the server answered in time (a strike towards a restart when not). */
    answered: (result: T) => boolean = () => true,
  ): Promise<T> {
    if (this.closed)
      return Promise.reject(new LspError("shut-down", "the language-server host is shut down"));
    return entry.scheduler.run(source.id, async () => {
      const connection = await entry.server.ensure();
      entry.attach(connection);
      const started = Date.now();
      try {
        const result = await job(connection);
        entry.server.recordOutcome(answered(result), started);
        return result;
      } catch (error) {
        if (isLspError(error, "timeout")) entry.server.recordOutcome(false, started);
        throw error;
      }
    });
  }

  private async navigate<T>(
    source: DocumentSource,
    relPath: string,
    options: NavigationOptions,
    capability: "definitionProvider" | "referencesProvider" | "hoverProvider" | "documentSymbolProvider",
    ask: (entry: ServerEntry, connection: LspConnection, uri: string) => Promise<T>,
  ): Promise<T> {
    const rel = normalizeRelPath(relPath);
    const { entry } = this.entryFor(source.workspaceRoot, rel);
    return this.schedule(entry, source, async (connection) => {
      if (!connection.capabilities[capability]) {
        throw new LspError("unsupported", `${entry.server.description} does not offer ${capability}`);
      }
      const overlay = await this.overlayOf(entry, source);
      const text = options.content ?? (overlay.has(rel) ? overlay.get(rel) : await source.readText(rel));
      if (text === undefined) throw new LspError("not-found", `${rel} does not exist in branch ${source.id}`);
      const wanted = [...this.overlayDocs(entry, overlay, rel), this.wanted(entry, rel, text, true)];
      await entry.docs.switchTo(wanted, (path) => this.readBase(entry, path), this.maxOpen);
      return ask(entry, connection, entry.uris.toUri(rel));
    });
  }

  private readBase(entry: ServerEntry, relPath: string): Promise<string | undefined> {
    return this.readBaseFile(entry.workspaceRoot, relPath);
  }

  /** The branch's changed files of the entry's language, with their content. */
  private async overlayOf(entry: ServerEntry, source: DocumentSource): Promise<Overlay> {
    const overlay: Overlay = new Map();
    for (const change of await source.changes()) {
      const path = normalizeRelPath(change.path);
      if (this.registry.languageOf(path)?.definition.id !== entry.definition.id) continue;
      overlay.set(path, change.kind === "deleted" ? undefined : await source.readText(path));
    }
    return overlay;
  }

  private wanted(entry: ServerEntry, relPath: string, text: string | null, overlay: boolean): WantedDocument {
    return {
      uri: entry.uris.toUri(relPath),
      relPath,
      languageId: this.registry.languageOf(relPath)?.languageId ?? entry.definition.id,
      text,
      overlay,
    };
  }

  private overlayDocs(entry: ServerEntry, overlay: Overlay, except: string | undefined): WantedDocument[] {
    const docs: WantedDocument[] = [];
    for (const [path, text] of overlay) {
      if (path !== except) docs.push(this.wanted(entry, path, text ?? null, true));
    }
    return docs;
  }

  /**
   * Files whose diagnostics an edit of `rel` may change: its importers, most relevant first (those that
   * mention the symbols the edit touched), up to the limit, then the branch's other changes; `skipped`
   * are the importers beyond the limit.
   */
  private async relatedFiles(
    entry: ServerEntry,
    source: DocumentSource,
    rel: string,
    overlay: Overlay,
    edit: { baseText: string | undefined; newText: string },
  ): Promise<{ checked: string[]; skipped: string[] }> {
    const limit = entry.definition.maxRelatedFiles ?? this.options.maxRelatedFiles ?? 16;
    if (entry.definition.dependents === "none") return { checked: [], skipped: [] };
    const importers = await entry.dependents.dependents(rel, overlay, Number.POSITIVE_INFINITY);
    let ranked = importers;
    if (importers.length > limit) {
      const symbols = editedSymbols(edit.baseText, edit.newText);
      const texts = new Map<string, string | undefined>();
      for (const path of importers.slice(0, MAX_RANKED_FILES))
        texts.set(path, overlay.has(path) ? overlay.get(path) : await source.readText(path));
      ranked = rankByRelevance(importers, symbols, (path) => texts.get(path));
    }
    const out = new Set(ranked.slice(0, limit));
    for (const [path, text] of overlay) {
      if (out.size >= limit) break;
      if (path !== rel && text !== undefined) out.add(path);
    }
    return { checked: [...out], skipped: ranked.slice(limit).filter((path) => !out.has(path)) };
  }

  /**
   * Diagnostics of `uris` with the server holding `wanted` (plus clean documents), settled for exactly
   * the versions sent: pulled where the server offers it, else version-matched pushes and a quiet period.
   * Results of a state seen before come from the cache.
   */
  private async settle(
    entry: ServerEntry,
    connection: LspConnection,
    wanted: WantedDocument[],
    uris: string[],
    deadline: number,
  ): Promise<SettledState> {
    const stateKey = sha1(
      wanted
        .filter((doc) => doc.overlay)
        .map((doc) => `${doc.relPath}\u0000${doc.text === null ? "-" : sha1(doc.text)}`)
        .sort()
        .join("\n"),
    );
    const hits = uris.map((uri) => entry.cache.get(`${stateKey}\u0000${uri}`));
    if (hits.every((hit) => hit !== undefined)) {
      const diagnostics = new Map<string, Diagnostic[]>();
      const versions = new Map<string, number>();
      uris.forEach((uri, i) => {
        const hit = hits[i];
        diagnostics.set(uri, hit?.diagnostics.get(uri) ?? []);
        const version = hit?.versions.get(uri);
        if (version !== undefined) versions.set(uri, version);
      });
      const problems = [...new Set(hits.flatMap((hit) => hit?.problems ?? []))];
      return { diagnostics, versions, partial: false, problems };
    }
    const since = entry.inbox.position;
    const changed = await entry.docs.switchTo(wanted, (path) => this.readBase(entry, path), this.maxOpen);
    let settled: Settled;
    const versions = new Map<string, number>();
    if (connection.pullDiagnostics) {
      for (const uri of uris) {
        const version = entry.docs.get(uri)?.version;
        if (version !== undefined) versions.set(uri, version);
      }
      settled = await settlePull(connection, uris, deadline);
    } else {
      const expected: Expectation[] = [];
      for (const uri of uris) {
        const held = entry.docs.get(uri);
        if (!held) continue;
        const version =
          changed.has(uri) || entry.definition.resend === "reuse" ? held.version : entry.docs.bump(uri);
        versions.set(uri, version);
        expected.push({ uri, version });
      }
      settled = await settlePush(entry.inbox, expected, {
        quietMs: this.config.quietMs,
        deadline,
        since,
        exited: connection.exited,
      });
    }
    const problems = [...entry.problems.take(), ...this.projectFileErrors(entry)];
    if (!settled.partial) {
      const cached: CachedSettle = { diagnostics: settled.diagnostics, versions, problems };
      for (const uri of uris) entry.cache.set(`${stateKey}\u0000${uri}`, cached);
    }
    return { ...settled, versions, problems };
  }

  /**
   * Errors the server reports on files other than sources of its language (gopls on go.mod, tsc on
   * tsconfig.json): the project did not load as configured.
   */
  private projectFileErrors(entry: ServerEntry): string[] {
    const extensions = Object.keys(entry.definition.extensions);
    const out: string[] = [];
    for (const [uri, diagnostics] of entry.inbox.all()) {
      const { path, external } = entry.uris.toPath(uri);
      if (external || extensions.some((ext) => path.toLowerCase().endsWith(ext))) continue;
      for (const diag of diagnostics) {
        if ((diag.severity ?? 1) !== 1) continue;
        const line = diag.range.start.line + 1;
        out.push(
          `${path}:${line}: ${messageLine(typeof diag.message === "string" ? diag.message : diag.message.value)}`,
        );
      }
    }
    return out;
  }
}
