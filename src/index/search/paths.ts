import { bm25Idf } from "../store/idf.js";
import { codeTokens } from "../tokenize.js";

/**
 * Files ranked by how well their paths match a query: people name files after what the code in them is
 * about (`typehints.py`, `units/format/cds.py`), and bug reports name the same things. A query term in
 * the file's own name counts twice as much as one in a folder name; rarer path words count more (idf over
 * the workspace's paths).
 */
/** File names that say "this folder's module" rather than what the code is about. */
const MODULE_FILE_NAMES = new Set(["__init__", "__main__", "index", "mod", "main", "lib"]);

export class PathIndex {
  /** term → indexes into `paths` of files whose path holds it, with 2 when in the file name, else 1 */
  private readonly postings = new Map<string, { file: number; place: number }[]>();

  constructor(private readonly paths: readonly string[]) {
    paths.forEach((path, file) => {
      const parts = path.replace(/\.[^./]+$/, "").split("/");
      // `autodoc/__init__.py`, `billing/index.ts`, `parser/mod.rs` are named by their folder
      if (parts.length > 1 && MODULE_FILE_NAMES.has(parts.at(-1) ?? "")) parts.pop();
      const inName = new Set(codeTokens(parts.at(-1) ?? ""));
      const terms = new Set([...inName, ...codeTokens(parts.slice(0, -1).join("/"))]);
      for (const term of terms) {
        const list = this.postings.get(term);
        const entry = { file, place: inName.has(term) ? 2 : 1 };
        if (list) list.push(entry);
        else this.postings.set(term, [entry]);
      }
    });
  }

  /**
   * The `limit` best-matching paths for weighted query terms, best first (ties by path order). A query
   * word also meets a path word it extends by up to three letters (`mocked` → `mock.py`,
   * `formatting` → `format/`), at half weight.
   */
  rank(terms: ReadonlyMap<string, number>, limit: number): string[] {
    const total = this.paths.length;
    const scores = new Map<number, number>();
    const add = (term: string, weight: number) => {
      const list = this.postings.get(term);
      // a word in most paths (`src`, `lib`) tells nothing
      if (!list || list.length > Math.max(10, total / 4)) return;
      const idf = bm25Idf(total, list.length);
      for (const { file, place } of list) scores.set(file, (scores.get(file) ?? 0) + weight * idf * place);
    };
    for (const [term, weight] of terms) {
      add(term, weight);
      for (let cut = 1; cut <= 3 && term.length - cut >= 4; cut++) {
        const prefix = term.slice(0, -cut);
        if (!terms.has(prefix)) add(prefix, weight / 2);
      }
    }
    return [...scores]
      .sort(([a, x], [b, y]) => y - x || a - b)
      .slice(0, limit)
      .map(([file]) => this.paths[file] as string);
  }
}
