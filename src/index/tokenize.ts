/**
 * Tokenization shared by the lexical index, the query parser and the code embedding model.
 * Identifiers are kept whole and also split into their sub-words (camelCase, snake_case, digits),
 * all lower-cased, so `parseHTTPResponse` matches `parse`, `http`, `response` and the whole name.
 */

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const SUBWORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/** Sub-words of one identifier, lower-cased: `getHTTPServer2` → get, http, server, 2. */
export function splitIdentifier(identifier: string): string[] {
  return (identifier.match(SUBWORD) ?? []).map((part) => part.toLowerCase());
}

/** Identifiers in text, in order, as written. */
export function identifiers(text: string): string[] {
  return text.match(IDENTIFIER) ?? [];
}

/**
 * Lexical tokens of a text: every identifier lower-cased, plus its sub-words when it has more than one.
 * Single characters are dropped; they carry no signal.
 */
export function codeTokens(text: string): string[] {
  const out: string[] = [];
  for (const identifier of identifiers(text)) {
    const whole = identifier.toLowerCase();
    const parts = splitIdentifier(identifier).filter((part) => part.length > 1);
    if (whole.length > 1 && whole.length <= 64) out.push(whole);
    if (parts.length > 1 || (parts.length === 1 && parts[0] !== whole)) {
      for (const part of parts) out.push(part);
    }
  }
  return out;
}

/** Term frequencies of a token list. */
export function termFrequencies(tokens: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  return counts;
}
