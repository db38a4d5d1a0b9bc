/**
 * A cheap token estimate, close enough to a code BPE tokenizer for sizing chunks and linear in the text:
 * every run of word characters (`[A-Za-z0-9_$]`) counts one token per started 6 characters
 * (`x` → 1, `function` → 2, `getUserById` → 2), every other visible ASCII character (punctuation,
 * operators, quotes) counts one, every non-ASCII character counts one, and whitespace counts nothing.
 * It leans to over-counting punctuation-heavy text, so chunks stay within an embedder's real limit.
 */

const WORD_RUN = 6;

function isWord(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 95 || // _
    code === 36 // $
  );
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13 || code === 11 || code === 12;
}

/** Estimated tokens of `text[from, to)`. */
export function estimateTokens(text: string, from = 0, to = text.length): number {
  let tokens = 0;
  let run = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (isWord(code)) {
      if (run % WORD_RUN === 0) tokens++;
      run++;
      continue;
    }
    run = 0;
    if (isSpace(code)) continue;
    // A surrogate pair is one character: count its high half only.
    if (code >= 0xdc00 && code <= 0xdfff) continue;
    tokens++;
  }
  return tokens;
}

/**
 * Where to end a piece of `text` that starts at `from` so that it holds at most `budget` tokens: the end
 * index, moved back to just after the last whitespace or punctuation when that keeps at least half of
 * the piece. Always advances by at least one character and never splits a surrogate pair.
 */
export function cutPoint(text: string, from: number, budget: number): number {
  let tokens = 0;
  let run = 0;
  let boundary = -1;
  let i = from;
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let cost = 0;
    if (isWord(code)) {
      if (run % WORD_RUN === 0) cost = 1;
      run++;
    } else {
      run = 0;
      if (!isSpace(code) && !(code >= 0xdc00 && code <= 0xdfff)) cost = 1;
    }
    if (tokens + cost > budget && i > from) break;
    tokens += cost;
    if (!isWord(code) && !(code >= 0xd800 && code <= 0xdbff)) boundary = i + 1;
  }
  let end = i;
  if (end < text.length && boundary > from && boundary - from >= (end - from) / 2) end = boundary;
  if (end <= from) end = from + 1;
  const before = text.charCodeAt(end - 1);
  if (end < text.length && before >= 0xd800 && before <= 0xdbff) end++;
  return Math.min(end, text.length);
}
