/**
 * The names code writes for a word of prose (pure, no I/O): its usual abbreviations (`dictionary` → `dict`,
 * `configuration` → `cfg`, `config`) and the verbs and nouns programmers use in its place (`remove` →
 * `strip`, `delete`; `find` → `lookup`, `search`). General programming vocabulary, not any repository's:
 * the caller keeps the words the index holds. The table was written from general knowledge before it was
 * measured and not fitted afterwards. A question's forms leg counts these names as forms of the word, and
 * its name fit reads them (names.ts). On bench/questions (a development set, 115 questions) file@1 went
 * 0.748 → 0.757 and symbol@1 0.470 → 0.487. The held-out set, one run: symbol@5 0.899 → 0.911, file@1 0.671
 * both. BENCHMARKS.md, "Names code writes for a word".
 */

/** Abbreviations: a word of prose and the short names code gives it. */
const ABBREVIATION_TABLE: Record<string, readonly string[]> = {
  address: ["addr"],
  allocate: ["alloc"],
  argument: ["arg", "args"],
  arguments: ["args", "argv"],
  asynchronous: ["async"],
  attribute: ["attr", "attrs"],
  attributes: ["attrs"],
  authentication: ["auth", "authn"],
  authorization: ["auth", "authz"],
  buffer: ["buf"],
  calculate: ["calc"],
  callback: ["cb"],
  certificate: ["cert"],
  character: ["char", "chr"],
  column: ["col"],
  command: ["cmd"],
  compare: ["cmp"],
  concatenate: ["concat"],
  configuration: ["config", "cfg", "conf"],
  connection: ["conn"],
  context: ["ctx"],
  count: ["cnt"],
  current: ["cur", "curr"],
  database: ["db"],
  decrement: ["dec"],
  delete: ["del"],
  description: ["desc"],
  destination: ["dst", "dest"],
  dictionary: ["dict"],
  directory: ["dir"],
  document: ["doc"],
  element: ["elem", "el"],
  environment: ["env"],
  error: ["err"],
  evaluate: ["eval"],
  execute: ["exec"],
  expression: ["expr"],
  extension: ["ext"],
  format: ["fmt"],
  function: ["func", "fn"],
  generate: ["gen"],
  header: ["hdr"],
  identifier: ["id", "ident"],
  image: ["img"],
  increment: ["inc"],
  index: ["idx"],
  information: ["info"],
  initialize: ["init"],
  initialise: ["init"],
  iterator: ["iter"],
  length: ["len"],
  library: ["lib"],
  manager: ["mgr"],
  maximum: ["max"],
  message: ["msg"],
  middleware: ["mw"],
  minimum: ["min"],
  number: ["num"],
  object: ["obj"],
  option: ["opt", "opts"],
  options: ["opts"],
  package: ["pkg"],
  parameter: ["param", "params"],
  parameters: ["params"],
  password: ["pwd", "passwd"],
  pointer: ["ptr"],
  position: ["pos"],
  previous: ["prev"],
  property: ["prop", "props"],
  properties: ["props"],
  reference: ["ref"],
  repository: ["repo"],
  request: ["req"],
  response: ["res", "resp"],
  sequence: ["seq"],
  source: ["src"],
  specification: ["spec"],
  statistics: ["stats"],
  string: ["str"],
  synchronize: ["sync"],
  temporary: ["tmp", "temp"],
  template: ["tmpl", "tpl"],
  utility: ["util", "utils"],
  value: ["val"],
  variable: ["var"],
  version: ["ver"],
};

/** The table as a Map: the words looked up come from a query, and a plain object would answer
 * `constructor` or `__proto__` with Object.prototype's members. */
const ABBREVIATIONS: ReadonlyMap<string, readonly string[]> = new Map(Object.entries(ABBREVIATION_TABLE));

/** Groups of words programmers use for one another (each word's synonyms are the rest of its groups). */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ["remove", "strip", "delete", "drop"],
  ["find", "lookup", "search", "locate"],
  ["check", "validate", "verify", "ensure"],
  ["create", "make", "build", "new"],
  ["start", "begin", "launch"],
  ["stop", "halt", "shutdown", "close"],
  ["run", "execute", "exec", "invoke"],
  ["call", "invoke"],
  ["fetch", "retrieve", "load"],
  ["save", "store", "persist"],
  ["read", "load", "parse"],
  ["encode", "serialize", "marshal", "dump"],
  ["decode", "deserialize", "unmarshal"],
  ["convert", "transform", "coerce"],
  ["join", "merge", "combine", "concat"],
  ["split", "separate"],
  ["copy", "clone", "duplicate"],
  ["wait", "sleep", "delay"],
  ["add", "append", "insert", "push"],
  ["register", "attach"],
  ["send", "emit", "dispatch"],
  ["receive", "recv"],
  ["error", "exception", "failure"],
  ["show", "display", "print", "render"],
  ["size", "length", "len"],
  ["dictionary", "mapping", "map", "dict"],
  ["list", "array", "slice"],
  ["mistype", "typo"],
  ["escape", "quote", "sanitize"],
  ["user", "account"],
  ["default", "fallback"],
  ["retry", "attempt"],
  ["limit", "max", "maximum", "cap"],
  ["path", "route"],
];

const SYNONYMS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, Set<string>>();
  for (const group of SYNONYM_GROUPS) {
    for (const word of group) {
      const others = map.get(word) ?? new Set<string>();
      for (const other of group) if (other !== word) others.add(other);
      map.set(word, others);
    }
  }
  return new Map([...map].map(([word, others]) => [word, [...others]]));
})();

/** The names code may write for a lower-cased word of prose (its abbreviations, its synonyms), not the word itself. */
export function codeNames(word: string): string[] {
  const out = new Set([...(ABBREVIATIONS.get(word) ?? []), ...(SYNONYMS.get(word) ?? [])]);
  out.delete(word);
  return [...out];
}
