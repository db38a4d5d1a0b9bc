/** A document as the server currently holds it. */
export interface HeldDocument {
  uri: string;
  relPath: string;
  languageId: string;
  version: number;
  text: string;
  /** The text came from a branch and may differ from the user's folder: revert it before another branch. */
  overlay: boolean;
  lastUsed: number;
}

/** A document a job needs the server to hold; `text: null` means the file must not be open. */
export interface WantedDocument {
  uri: string;
  relPath: string;
  languageId: string;
  text: string | null;
  /** True for a branch's own content (its changes, an edit); false for content equal to the user's folder. */
  overlay: boolean;
}

export type Notify = (method: string, params: unknown) => void;

/**
 * What one server holds open: uri → version and text. Sends the minimal didOpen / didChange /
 * didClose to move it to another state. Versions come from one counter per store, so a version is never
 * reused for a uri, even across close and reopen or a server restart.
 */
export class DocumentStore {
  private readonly docs = new Map<string, HeldDocument>();
  private counter = 0;
  private clock = 0;

  constructor(
    private readonly notify: Notify,
    /** Extra fields of a didChange that re-sends unchanged text (clangd: `forceRebuild`). */
    private readonly bumpExtras: Record<string, unknown> = {},
  ) {}

  get(uri: string): HeldDocument | undefined {
    return this.docs.get(uri);
  }

  get size(): number {
    return this.docs.size;
  }

  held(): HeldDocument[] {
    return [...this.docs.values()];
  }

  /** Makes the server hold `text` at `uri`; returns true when a notification was sent. */
  set(uri: string, relPath: string, languageId: string, text: string, overlay: boolean): boolean {
    const held = this.docs.get(uri);
    this.clock++;
    if (held && held.text === text && held.languageId === languageId) {
      held.lastUsed = this.clock;
      held.overlay = overlay;
      return false;
    }
    const version = ++this.counter;
    if (!held || held.languageId !== languageId) {
      if (held) this.notify("textDocument/didClose", { textDocument: { uri } });
      this.notify("textDocument/didOpen", { textDocument: { uri, languageId, version, text } });
    } else {
      this.notify("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [{ text }] });
    }
    this.docs.set(uri, { uri, relPath, languageId, version, text, overlay, lastUsed: this.clock });
    return true;
  }

  /** Re-sends a document's unchanged text under a new version, so that the server checks it again. */
  bump(uri: string): number {
    const held = this.docs.get(uri);
    if (!held) throw new Error(`bump of a document that is not open: ${uri}`);
    held.version = ++this.counter;
    this.notify("textDocument/didChange", {
      textDocument: { uri, version: held.version },
      contentChanges: [{ text: held.text }],
      ...this.bumpExtras,
    });
    return held.version;
  }

  close(uri: string): boolean {
    if (!this.docs.delete(uri)) return false;
    this.notify("textDocument/didClose", { textDocument: { uri } });
    return true;
  }

  /** Forgets everything (the server exited); versions keep counting up. */
  reset(): void {
    this.docs.clear();
  }

  /**
   * Moves the server to a job's state: every wanted document at its text (or closed), every other
   * document that holds a branch's content back to the user's folder (`readBase`; closed when the
   * file is not there), then closes the least recently used clean documents beyond `maxOpen`.
   * Returns the uris whose content the server received anew.
   */
  async switchTo(
    wanted: WantedDocument[],
    readBase: (relPath: string) => Promise<string | undefined>,
    maxOpen: number,
  ): Promise<Set<string>> {
    const changed = new Set<string>();
    const wantedUris = new Set(wanted.map((doc) => doc.uri));
    for (const held of this.held()) {
      if (!held.overlay || wantedUris.has(held.uri)) continue;
      const base = await readBase(held.relPath);
      if (base === undefined) {
        if (this.close(held.uri)) changed.add(held.uri);
      } else if (this.set(held.uri, held.relPath, held.languageId, base, false)) {
        changed.add(held.uri);
      }
    }
    for (const doc of wanted) {
      if (doc.text === null) {
        if (this.close(doc.uri)) changed.add(doc.uri);
      } else if (this.set(doc.uri, doc.relPath, doc.languageId, doc.text, doc.overlay)) {
        changed.add(doc.uri);
      }
    }
    if (this.docs.size > maxOpen) {
      const closable = this.held()
        .filter((doc) => !doc.overlay && !wantedUris.has(doc.uri))
        .sort((a, b) => a.lastUsed - b.lastUsed);
      for (const doc of closable) {
        if (this.docs.size <= maxOpen) break;
        this.close(doc.uri);
      }
    }
    return changed;
  }
}
