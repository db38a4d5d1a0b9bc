/**
 * A tiny language server over stdio for tests. It needs only Node.js (run the transpiled file with
 * `node`; see fake-lsp-script.ts). Every `ERROR(word)` in a document is an error "bad word" and every
 * `WARN(word)` a warning "odd word", published (with the document's version) after each didOpen and
 * didChange. Behaviour switches, as arguments:
 *   --crash-on=METHOD   write to stderr and exit with status 3 when a METHOD request arrives
 *   --hang-on=METHOD    never answer METHOD requests
 *   --diag-delay=MS     publish diagnostics MS milliseconds after the change
 *   --init-delay=MS     answer `initialize` MS milliseconds late (a server slow to start)
 *   --no-diagnostics    never publish diagnostics
 *   --pull              offer pull diagnostics (textDocument/diagnostic) instead of publishing
 */

interface Message {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: unknown;
}

interface TextDocumentItem {
  uri: string;
  version: number;
  text: string;
}

const args = process.argv.slice(2);
const option = (name: string): string | undefined =>
  args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const crashOn = option("crash-on");
const hangOn = option("hang-on");
const diagDelay = Number(option("diag-delay") ?? "0");
const initDelay = Number(option("init-delay") ?? "0");
const noDiagnostics = args.includes("--no-diagnostics");
const pull = args.includes("--pull");

const documents = new Map<string, TextDocumentItem>();

function send(message: Record<string, unknown>): void {
  const body = JSON.stringify({ jsonrpc: "2.0", ...message });
  process.stdout.write(`Content-Length: ${Buffer.byteLength(body, "utf8")}\r\n\r\n${body}`);
}

function diagnosticsOf(text: string): unknown[] {
  const out: unknown[] = [];
  text.split("\n").forEach((line, index) => {
    for (const match of line.matchAll(/(ERROR|WARN)\((\w+)\)/g)) {
      const start = match.index ?? 0;
      const isError = match[1] === "ERROR";
      out.push({
        range: {
          start: { line: index, character: start },
          end: { line: index, character: start + match[0].length },
        },
        severity: isError ? 1 : 2,
        code: isError ? "E1" : "W1",
        source: "fake",
        message: `${isError ? "bad" : "odd"} ${match[2]}`,
      });
    }
  });
  return out;
}

function publish(doc: TextDocumentItem): void {
  if (noDiagnostics || pull) return;
  const snapshot = { uri: doc.uri, version: doc.version, diagnostics: diagnosticsOf(doc.text) };
  setTimeout(() => send({ method: "textDocument/publishDiagnostics", params: snapshot }), diagDelay);
}

function initializeResult(): Record<string, unknown> {
  return {
    capabilities: {
      textDocumentSync: 1,
      hoverProvider: true,
      definitionProvider: true,
      documentSymbolProvider: true,
      ...(pull ? { diagnosticProvider: { interFileDependencies: false, workspaceDiagnostics: false } } : {}),
    },
    serverInfo: { name: "fake-lsp" },
  };
}

function handle(message: Message): void {
  const { id, method } = message;
  const params = (message.params ?? {}) as Record<string, unknown>;
  if (method === undefined) return; // a response to one of our requests
  if (id !== undefined && method === crashOn) {
    process.stderr.write(`fake-lsp: crashing on ${method} as told\n`);
    process.exit(3);
  }
  if (id !== undefined && method === hangOn) return;
  switch (method) {
    case "initialize":
      setTimeout(() => send({ id, result: initializeResult() }), initDelay);
      return;
    case "textDocument/didOpen": {
      const item = params.textDocument as TextDocumentItem;
      documents.set(item.uri, { uri: item.uri, version: item.version, text: item.text });
      publish(documents.get(item.uri) as TextDocumentItem);
      return;
    }
    case "textDocument/didChange": {
      const { uri, version } = params.textDocument as { uri: string; version: number };
      const changes = params.contentChanges as { text: string }[];
      const text = changes[changes.length - 1]?.text ?? "";
      documents.set(uri, { uri, version, text });
      publish(documents.get(uri) as TextDocumentItem);
      return;
    }
    case "textDocument/didClose":
      documents.delete((params.textDocument as { uri: string }).uri);
      return;
    case "textDocument/diagnostic": {
      const doc = documents.get((params.textDocument as { uri: string }).uri);
      const items = doc ? diagnosticsOf(doc.text) : [];
      setTimeout(() => send({ id, result: { kind: "full", items } }), diagDelay);
      return;
    }
    case "textDocument/hover": {
      const doc = documents.get((params.textDocument as { uri: string }).uri);
      const line = (params.position as { line: number }).line;
      send({ id, result: { contents: { kind: "plaintext", value: doc?.text.split("\n")[line] ?? "" } } });
      return;
    }
    case "shutdown":
      send({ id, result: null });
      return;
    case "exit":
      process.exit(0);
      return;
    default:
      if (id !== undefined) send({ id, error: { code: -32601, message: `unhandled ${method}` } });
  }
}

let buffer = Buffer.alloc(0);
process.stdin.on("data", (chunk: Buffer) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString())?.[1]);
    if (buffer.length < headerEnd + 4 + length) return;
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8");
    buffer = buffer.subarray(headerEnd + 4 + length);
    handle(JSON.parse(body) as Message);
  }
});
process.stdin.on("end", () => process.exit(0));
