/**
 * Text from untrusted places (file names, file contents, a command's output, a model's words) on its
 * way to the user's terminal. A terminal obeys escape sequences: a hostile name or output could retitle
 * the window, write the clipboard (OSC 52), move the cursor to fake a prompt, or answer queries with
 * typed-looking input. Two strengths:
 * - `safeName`: for names and one-line fields — every control character is shown as an escape
 *   (`\n`, `\x1b`, `\u009b`), so the name is visible and unambiguous;
 * - `safeOutput`: for streams and multi-line text — newlines, tabs and colour/style sequences
 *   (CSI … m) are kept, every other escape sequence and control character is removed.
 */

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators and bidi overrides. */
const C0 = "\\u0000-\\u001f";
const CONTROL = new RegExp(`[${C0}\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]`, "g");

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** A name or one-line field with every control character written as a visible escape. */
export function safeName(text: string): string {
  return text.replace(CONTROL, escapeChar);
}

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
    "\\r\\n",
    "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]",
  ].join("|"),
  "g",
);

/** Multi-line text with newlines, tabs and colours kept, and every other control removed. */
export function safeOutput(text: string): string {
  return text.replace(SEQUENCE, (match, params: string | undefined, final: string | undefined) => {
    if (match === "\r\n") return "\n";
    if (final === "m" && /^[0-9;:]*$/.test(params ?? "")) return `\u001b[${params ?? ""}m`;
    return "";
  });
}
