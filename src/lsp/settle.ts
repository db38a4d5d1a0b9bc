import type {
  Diagnostic,
  DocumentDiagnosticParams,
  DocumentDiagnosticReport,
  PublishDiagnosticsParams,
} from "vscode-languageserver-protocol";
import type { LspConnection } from "./connection.js";
import { isLspError, type LspError } from "./errors.js";

/** Diagnostics per uri for one state of the documents. */
export interface Settled {
  diagnostics: Map<string, Diagnostic[]>;
  /** True when some uri did not settle before the deadline; its list is empty or incomplete. */
  partial: boolean;
}

interface Published {
  version: number | undefined;
  diagnostics: Diagnostic[];
  seq: number;
}

/** Every `publishDiagnostics` a server sent, latest per uri, with a sequence number. */
export class DiagnosticsInbox {
  private readonly latest = new Map<string, Published>();
  private seq = 0;
  private readonly listeners = new Set<(uri: string) => void>();

  publish(params: PublishDiagnosticsParams): void {
    this.seq++;
    this.latest.set(params.uri, { version: params.version, diagnostics: params.diagnostics, seq: this.seq });
    for (const listener of this.listeners) listener(params.uri);
  }

  get(uri: string): Published | undefined {
    return this.latest.get(uri);
  }

  /** The latest diagnostics of every uri that has any. */
  *all(): IterableIterator<[string, Diagnostic[]]> {
    for (const [uri, published] of this.latest)
      if (published.diagnostics.length) yield [uri, published.diagnostics];
  }

  /** The sequence number of the last publish so far. */
  get position(): number {
    return this.seq;
  }

  clear(): void {
    this.latest.clear();
  }

  subscribe(listener: (uri: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** What a push-diagnostics wait expects for one document. */
export interface Expectation {
  uri: string;
  /** The version the server holds; only a publish for exactly this version counts. */
  version: number;
}

/**
 * Waits for version-matched `publishDiagnostics` of every expected document, then for `quietMs` without
 * further publishes for them. A server that publishes without versions is matched by arrival after
 * `since` (an inbox position taken before the documents were sent). Past `deadline` (epoch ms) it returns
 * what arrived, marked partial. Rejects with the server's exit error if it exits meanwhile.
 */
export function settlePush(
  inbox: DiagnosticsInbox,
  expected: Expectation[],
  options: { quietMs: number; deadline: number; since: number; exited: Promise<LspError> },
): Promise<Settled> {
  const uris = new Set(expected.map((item) => item.uri));
  const matches = (item: Expectation): Published | undefined => {
    const got = inbox.get(item.uri);
    if (!got) return undefined;
    if (got.version === undefined ? got.seq > options.since : got.version === item.version) return got;
    return undefined;
  };
  const collect = (partial: boolean): Settled => {
    const diagnostics = new Map<string, Diagnostic[]>();
    for (const item of expected) diagnostics.set(item.uri, matches(item)?.diagnostics ?? []);
    return { diagnostics, partial };
  };
  return new Promise<Settled>((resolve, reject) => {
    let quietTimer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = (result: Settled | LspError): void => {
      if (finished) return;
      finished = true;
      unsubscribe();
      clearTimeout(deadlineTimer);
      clearTimeout(quietTimer);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const check = (): void => {
      clearTimeout(quietTimer);
      if (expected.every((item) => matches(item) !== undefined)) {
        quietTimer = setTimeout(() => finish(collect(false)), options.quietMs);
      }
    };
    const unsubscribe = inbox.subscribe((uri) => {
      if (uris.has(uri)) check();
    });
    const deadlineTimer = setTimeout(
      () => {
        const settled = expected.every((item) => matches(item) !== undefined);
        finish(collect(!settled));
      },
      Math.max(0, options.deadline - Date.now()),
    );
    options.exited.then(finish, finish);
    check();
  });
}

/**
 * Pulls diagnostics (`textDocument/diagnostic`) for every uri, in parallel, each bounded by the time left
 * until `deadline`; a uri whose answer does not come in time is reported empty and the result partial.
 * Rejects with LspError `crashed` if the server exits.
 */
export async function settlePull(
  connection: LspConnection,
  uris: string[],
  deadline: number,
): Promise<Settled> {
  const diagnostics = new Map<string, Diagnostic[]>();
  let partial = false;
  await Promise.all(
    uris.map(async (uri) => {
      for (let attempt = 0; ; attempt++) {
        const left = deadline - Date.now();
        if (left <= 0) {
          partial = true;
          diagnostics.set(uri, []);
          return;
        }
        try {
          const report = await connection.request<DocumentDiagnosticParams, DocumentDiagnosticReport>(
            "textDocument/diagnostic",
            { textDocument: { uri } },
            left,
          );
          diagnostics.set(uri, report.kind === "full" ? report.items : []);
          return;
        } catch (error) {
          if (isLspError(error, "timeout")) {
            partial = true;
            diagnostics.set(uri, []);
            return;
          }
          // A server may cancel a pull while it is busy (ServerCancelled): ask again, a few times.
          if (isLspError(error, "server-error") && attempt < 3) continue;
          throw error;
        }
      }
    }),
  );
  return { diagnostics, partial };
}
