/**
 * Other forms of a question's words that the code may write instead (pure, no I/O): "suggested",
 * "verified" where the code says `suggest`, `verify`; "JSON web token" and "server-sent events" where it
 * says `jwt` and `sse`; "request handler" where it writes one identifier, `requestHandler`. The caller keeps
 * the candidates the index holds and adds them to the query's terms.
 */

/** Endings taken off a word to find its stem, longest first (not `-er`: `headers` is not `head`). */
const ENDINGS = ["ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s", "e"];
/** Endings put on a stem to make its forms. */
const FORM_ENDINGS = ["", "e", "s", "es", "ed", "d", "ing", "ion", "ions", "ation", "er", "ers"];
/** A stem shorter than this has too many unrelated words (`us` → `use`, `user`, `usage`). */
const MIN_STEM = 4;

/** A word's stem: the word less the first ending of ENDINGS it has, when what is left is long enough. */
export function stem(word: string): string {
  for (const ending of ENDINGS) {
    if (word.endsWith(ending) && word.length - ending.length >= MIN_STEM) {
      return word.slice(0, -ending.length);
    }
  }
  return word;
}

/**
 * Forms of a lower-cased word made from its stem (`suggested` → suggest, suggests, suggestion, …; `verified`
 * → verify, verifies, verification), not the word itself. Most are not words; the index says which are.
 */
export function wordForms(word: string): string[] {
  if (word.length < MIN_STEM || !/^[a-z]+$/.test(word)) return [];
  const base = stem(word);
  const forms = new Set<string>();
  for (const ending of FORM_ENDINGS) forms.add(base + ending);
  if (/(?:ies|ied)$/.test(word) && word.length > MIN_STEM + 2) {
    const root = word.slice(0, -3); // verif(ied), cook(ies)
    for (const form of [
      `${root}y`,
      `${root}ies`,
      `${root}ied`,
      `${root}ying`,
      `${root}ication`,
      word.slice(0, -1),
    ])
      forms.add(form);
  }
  forms.delete(word);
  return [...forms];
}

/** Acronyms of this many words: "json web token" → `jwt`; two letters are too many other things. */
const ACRONYM_WORDS = [3, 4];

/**
 * Runs of the text's words in order, broken at anything that is not a word or a hyphen between words
 * (a stop word, a comma, a full stop): "how is a JSON web token verified" → [json, web, token, verified].
 */
function wordRuns(text: string, isStopWord: (word: string) => boolean): string[][] {
  const runs: string[][] = [];
  let run: string[] = [];
  for (const piece of text.toLowerCase().split(/([a-z0-9]+)/)) {
    if (/^[a-z0-9]+$/.test(piece)) {
      if (isStopWord(piece)) {
        runs.push(run);
        run = [];
      } else run.push(piece);
    } else if (!/^[\s-]*$/.test(piece) || piece.includes("\n")) {
      runs.push(run);
      run = [];
    }
  }
  runs.push(run);
  return runs.filter((r) => r.length > 0);
}

/**
 * Names the code may write for a few of the question's words: the initials of 3–4 consecutive words
 * (`jwt`, `sse`, `cors`) and two consecutive words written as one (`requesthandler`, `clientip`).
 */
export function phraseForms(text: string, isStopWord: (word: string) => boolean): string[] {
  const out = new Set<string>();
  for (const run of wordRuns(text, isStopWord)) {
    for (let i = 0; i < run.length; i++) {
      const first = run[i] ?? "";
      const second = run[i + 1];
      if (second !== undefined && /^[a-z]/.test(second)) out.add(first + second);
      for (const n of ACRONYM_WORDS) {
        const words = run.slice(i, i + n);
        if (words.length === n && words.every((w) => /^[a-z]/.test(w))) {
          out.add(words.map((w) => w[0]).join(""));
        }
      }
    }
  }
  return [...out];
}

/**
 * `obj.member` in prose: a name, a dot, a whole name not followed by another (not `e.g.`, not a version
 * such as `v1.2`, not `pkg.sub.module`); no backtracking into the member, so linear in the text. A name
 * starts where no name character precedes it: `$` included, or a name was tried again from every `$` in
 * it, each time to its end.
 */
const MEMBER_ACCESS = /(?<![\w$.])([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]+)(?![\w$])(?!\.[A-Za-z_$])/g;

/**
 * Members a question names the way code writes them (`c.json`, `app.route`, `ctx.redirect`), with the
 * whole `obj.member` as written so that the caller can tell a file name (`package.json`) from an
 * attribute; a member's name is what the code defines.
 */
export function memberAccesses(text: string): { written: string; member: string }[] {
  return [...text.matchAll(MEMBER_ACCESS)].map((m) => ({ written: m[0], member: m[2] ?? "" }));
}
