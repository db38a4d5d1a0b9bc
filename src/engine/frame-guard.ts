import { Transform, type TransformCallback } from "node:stream";

/** The longest header block (up to the blank line) a frame may have. */
const MAX_HEADER_BYTES = 8 * 1024;

/**
 * Passes a Content-Length framed stream (JSON-RPC as LSP frames it) through unchanged, and fails it
 * instead of buffering without end: on a header block over 8 KiB, a header without one Content-Length,
 * or a body over `maxBody` bytes. Headers are read as vscode-jsonrpc reads them (lines split at the
 * first `:`, keys in any case, parseInt of the value), so both see the same frames.
 */
export class FrameGuard extends Transform {
  private header = "";
  private bodyLeft = 0;

  constructor(private readonly maxBody: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const problem = this.scan(chunk);
    if (problem) done(new Error(problem));
    else done(null, chunk);
  }

  /** Follows the frames through `chunk`: what is wrong with them, if anything. */
  private scan(chunk: Buffer): string | undefined {
    let at = 0;
    while (at < chunk.length) {
      if (this.bodyLeft > 0) {
        const taken = Math.min(this.bodyLeft, chunk.length - at);
        this.bodyLeft -= taken;
        at += taken;
        continue;
      }
      const seen = this.header.length;
      const text = this.header + chunk.subarray(at).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) {
        if (text.length > MAX_HEADER_BYTES) return "a message header is too long";
        this.header = text;
        break;
      }
      if (end > MAX_HEADER_BYTES) return "a message header is too long";
      const length = contentLength(text.slice(0, end));
      if (length === undefined) return "a message header has no valid Content-Length";
      if (length > this.maxBody) return `a message is larger than ${this.maxBody} bytes`;
      at += end + 4 - seen;
      this.header = "";
      this.bodyLeft = length;
    }
    return undefined;
  }
}

function contentLength(block: string): number | undefined {
  let found: number | undefined;
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) return undefined;
    if (line.slice(0, colon).toLowerCase() !== "content-length") continue;
    if (found !== undefined) return undefined;
    const value = Number.parseInt(line.slice(colon + 1).trim(), 10);
    if (!Number.isSafeInteger(value) || value < 0) return undefined;
    found = value;
  }
  return found;
}
