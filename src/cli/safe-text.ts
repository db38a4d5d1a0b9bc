/**
 * Text from untrusted places (file names, file contents, a command's output, a model's words) on its
 * way to the user's terminal. A terminal obeys escape sequences: a hostile name or output could retitle
 * the window, write the clipboard (OSC 52), move the cursor to fake a prompt, or make the terminal
 * answer a query with typed-looking input. `guardTerminal` is the one door: once it is on, everything
 * umbra writes to a terminal passes `safeOutput`, which keeps newlines, tabs, carriage returns
 * (progress lines) and colour/style sequences (CSI … m) and removes every other escape sequence and
 * control character. Names shown inside a line are escaped visibly by `shownPath` (workspace/errors.ts).
 */

/**
 * One match per escape sequence or lone control character: CSI (ESC [ or U+009B, parameters, one final
 * byte), OSC/DCS/SOS/PM/APC strings (up to BEL or ST), two-character ESC sequences, and any other
 * control character except newline and tab. Built from a string: the linter forbids control
 * characters in regular-expression literals.
 */
const SEQUENCE = new RegExp(
  [
    "(?:\\u001b\\[|\\u009b)([0-?]*)[ -/]*([@-~])?",
    "(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?",
    "\\u001b[ -/]*[0-~]?",
    "[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]",
  ].join("|"),
  "g",
);

/** Multi-line text with newlines, tabs, carriage returns and colours kept, every other control removed. */
export function safeOutput(text: string): string {
  return text.replace(SEQUENCE, (_match, params: string | undefined, final: string | undefined) => {
    if (final === "m" && /^[0-9;:]*$/.test(params ?? "")) return `\u001b[${params ?? ""}m`;
    return "";
  });
}

/**
 * From now on, what is written to `stream` passes `safeOutput` when `stream` is a terminal (a pipe or
 * a file gets the bytes as they are: `umbra shadow diff | git apply` must stay exact).
 */
export function guardTerminal(stream: NodeJS.WriteStream): void {
  if (!stream.isTTY) return;
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const decoder = new TextDecoder();
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text =
      typeof chunk === "string"
        ? chunk
        : chunk instanceof Uint8Array
          ? decoder.decode(chunk, { stream: true })
          : String(chunk);
    return write(safeOutput(text), ...rest);
  }) as typeof stream.write;
}
