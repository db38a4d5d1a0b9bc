/** Deterministic synthetic code corpora for the code-model tests and the training benchmark. */

/** A seeded pseudo-random generator (mulberry32): numbers in [0, 1), the same for the same seed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "ta",
  "po",
  "si",
  "ve",
  "zu",
  "ba",
  "do",
  "fi",
  "ga",
  "ho",
  "ju",
];
const KEYWORDS = [
  "const",
  "let",
  "return",
  "if",
  "else",
  "function",
  "this",
  "await",
  "new",
  "for",
  "of",
  "async",
];

export interface SyntheticCorpusOptions {
  chunks: number;
  seed?: number;
  /** Distinct sub-words (default 6000). */
  lexicon?: number;
  /** Topics; identifiers in a chunk mostly come from its topic (default 300). */
  topics?: number;
  /** Lines per chunk (default 25, about 1 000 characters). */
  lines?: number;
  /**
   * Distinct identifiers a repository declares (default 100 000), drawn with a Zipf law; 0 composes a
   * fresh identifier from sub-words at every use, which gives millions of distinct identifiers (a
   * pessimistic case for the tokenizer).
   */
  identifiers?: number;
}

/** Chunks that look like code: Zipf-distributed sub-words grouped by topic, camelCase identifiers. */
export function syntheticCodeCorpus(options: SyntheticCorpusOptions): string[] {
  const random = prng(options.seed ?? 7);
  const lexiconSize = options.lexicon ?? 6000;
  const topicCount = options.topics ?? 300;
  const lineCount = options.lines ?? 25;
  const words: string[] = [];
  const seen = new Set<string>();
  while (words.length < lexiconSize) {
    const n = 2 + Math.floor(random() * 3);
    let word = "";
    for (let i = 0; i < n; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  // Zipf over the lexicon: P(rank r) ∝ 1/(r+1).
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 0; r < lexiconSize; r++) {
    sum += 1 / (r + 1);
    cumulative.push(sum);
  }
  const zipfRank = (): number => {
    const x = random() * sum;
    let lo = 0;
    let hi = lexiconSize - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const zipf = (): string => words[zipfRank()] as string;
  const topics: string[][] = [];
  for (let t = 0; t < topicCount; t++) topics.push(Array.from({ length: 24 }, () => zipf()));
  const capital = (w: string): string => w[0]?.toUpperCase() + w.slice(1);
  const compose = (sub: () => string): string => {
    const n = 1 + Math.floor(random() * 3);
    let id = sub();
    for (let i = 1; i < n; i++) id += capital(sub());
    return id;
  };
  // A repository's declared identifiers: topic-flavoured compositions, used with a Zipf law.
  const declared: string[] = [];
  const declaredCount = options.identifiers ?? 100_000;
  for (let i = 0; i < declaredCount; i++) {
    const topic = topics[i % topicCount] as string[];
    declared.push(
      compose(() => (random() < 0.7 ? (topic[Math.floor(random() * topic.length)] as string) : zipf())),
    );
  }
  const chunks: string[] = [];
  for (let c = 0; c < options.chunks; c++) {
    const t = Math.floor(random() * topicCount);
    const topic = topics[t] as string[];
    const sub = (): string =>
      random() < 0.7 ? (topic[Math.floor(random() * topic.length)] as string) : zipf();
    const ident = (): string => {
      if (declaredCount === 0) return compose(sub);
      // Mostly identifiers of this chunk's topic, some from anywhere.
      if (random() < 0.6) {
        const rank = Math.floor(random() * Math.min(60, declaredCount / topicCount)) * topicCount + t;
        return declared[rank % declaredCount] as string;
      }
      // Zipf over all declared identifiers: rank ≈ e^(U·ln(N+1)) − 1.
      return declared[Math.floor(Math.exp(random() * Math.log(declaredCount + 1))) - 1] as string;
    };
    const lines: string[] = [];
    for (let l = 0; l < lineCount; l++) {
      const kind = Math.floor(random() * 5);
      const kw = KEYWORDS[Math.floor(random() * KEYWORDS.length)] as string;
      if (kind === 0) lines.push(`  const ${ident()} = ${ident()}.${ident()}(${ident()}, ${ident()});`);
      else if (kind === 1) lines.push(`  if (${ident()} > ${ident()}) { return ${ident()}; }`);
      else if (kind === 2) lines.push(`function ${ident()}(${ident()}, ${ident()}) {`);
      else if (kind === 3) lines.push(`  ${kw} ${ident()} = await this.${ident()}();`);
      else lines.push(`  // ${sub()} ${sub()} ${sub()} ${kw}`);
    }
    chunks.push(lines.join("\n"));
  }
  return chunks;
}
