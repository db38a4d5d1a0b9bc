/**
 * Syntax highlight for diff lines: Prism's tokenizer (loaded as /vendor/prism-*.js, pinned) splits a
 * line into tokens, and the page makes a span per token with the text as a text node. Prism's own
 * `highlight` returns HTML; it is never used.
 */

interface PrismToken {
  type: string;
  alias?: string | string[];
  content: PrismStream;
}
type PrismStream = string | PrismToken | (string | PrismToken)[];

interface PrismApi {
  languages: Record<string, unknown>;
  tokenize(text: string, grammar: unknown): (string | PrismToken)[];
}

declare global {
  interface Window {
    Prism?: PrismApi;
  }
}

const BY_EXTENSION: Record<string, string> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  go: "go",
  c: "c",
  h: "c",
  rs: "rust",
  json: "json",
  sh: "bash",
  bash: "bash",
  css: "css",
  html: "markup",
  xml: "markup",
  svg: "markup",
};

/** The Prism grammar for a path, by its extension; undefined when there is none. */
export function grammarFor(path: string): unknown {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? "";
  const language = BY_EXTENSION[extension];
  return language ? window.Prism?.languages[language] : undefined;
}

function nodesOf(stream: PrismStream, into: Node[]): void {
  if (typeof stream === "string") {
    into.push(document.createTextNode(stream));
    return;
  }
  if (Array.isArray(stream)) {
    for (const part of stream) nodesOf(part, into);
    return;
  }
  const span = document.createElement("span");
  const aliases =
    stream.alias === undefined ? [] : Array.isArray(stream.alias) ? stream.alias : [stream.alias];
  span.className = ["token", stream.type, ...aliases].join(" ");
  const inner: Node[] = [];
  nodesOf(stream.content, inner);
  span.append(...inner);
  into.push(span);
}

/** `text` as highlighted nodes (plain text when there is no grammar). */
export function highlighted(text: string, grammar: unknown): Node[] {
  const prism = window.Prism;
  if (!grammar || !prism) return [document.createTextNode(text)];
  const nodes: Node[] = [];
  nodesOf(prism.tokenize(text, grammar), nodes);
  return nodes;
}
