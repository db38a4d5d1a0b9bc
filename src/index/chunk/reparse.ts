/**
 * Rewrites of a file's text tried when a grammar's first parse has errors: each keeps the text's length
 * and every line where it was (one character stands in for another), so the lines a syntax node spans
 * are the file's own. The chunker keeps the second parse only when it has fewer errors.
 */

/** A last character after which a type (or expression) may be complete. */
const ENDS_COMPLETE = /[\w$)\]>'"`]$/;

/**
 * TypeScript's call and construct signatures on lines of their own, without separators
 * (`interface Get { <K>(key: K): V[K] \n <K>(key: K): W[K] }`, hono's style): the grammar reads the
 * next line's `<` or `(` as continuing the type before it, and the error swallows the rest of the
 * file. A `;` in place of the first indentation character of such a line separates them. Undefined
 * when no line is of that kind.
 */
export function separateSignatures(text: string): string | undefined {
  const lines = text.split("\n");
  let previous = "";
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const trimmed = line.trimStart();
    if (trimmed === "") continue;
    const indent = line.length - trimmed.length;
    if (
      indent > 0 &&
      (trimmed.startsWith("<") || trimmed.startsWith("(")) &&
      ENDS_COMPLETE.test(previous) &&
      !previous.startsWith("//")
    ) {
      lines[i] = `;${line.slice(1)}`;
      changed = true;
    }
    previous = trimmed.trimEnd();
  }
  return changed ? lines.join("\n") : undefined;
}
