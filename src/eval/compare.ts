import type { EvalResults } from "./runner.js";

/** McNemar's test on paired outcomes: b = passed in A only, c = passed in B only. */
export interface McNemar {
  n: number;
  b: number;
  c: number;
  /** Two-sided p-value. */
  p: number;
  method: "exact" | "chi-square";
}

function logChoose(n: number, k: number): number {
  let sum = 0;
  for (let i = 1; i <= k; i++) sum += Math.log(n - k + i) - Math.log(i);
  return sum;
}

/** erfc by the Numerical Recipes rational approximation (relative error < 1.2e-7). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/**
 * McNemar's test: exact (two-sided binomial with p = 1/2 on the b + c discordant pairs) when there are at
 * most 25 of them, otherwise the chi-square statistic with continuity correction, (|b − c| − 1)² / (b + c).
 */
export function mcnemar(b: number, c: number): McNemar {
  const n = b + c;
  if (n === 0) return { n, b, c, p: 1, method: "exact" };
  if (n <= 25) {
    let tail = 0;
    for (let k = 0; k <= Math.min(b, c); k++) tail += Math.exp(logChoose(n, k) - n * Math.LN2);
    return { n, b, c, p: Math.min(1, 2 * tail), method: "exact" };
  }
  const chi = (Math.abs(b - c) - 1) ** 2 / n;
  return { n, b, c, p: erfc(Math.sqrt(chi / 2)), method: "chi-square" };
}

export interface ComparisonRow {
  scope: string;
  paired: number;
  passA: number;
  passB: number;
  /** B's pass rate minus A's, in points of the paired tasks. */
  difference: number;
  test: McNemar;
}

export interface Comparison {
  a: { agent: string; model: string };
  b: { agent: string; model: string };
  onlyInA: string[];
  onlyInB: string[];
  rows: ComparisonRow[];
}

function row(scope: string, pairs: [boolean, boolean][]): ComparisonRow {
  const passA = pairs.filter(([a]) => a).length;
  const passB = pairs.filter(([, b]) => b).length;
  const b = pairs.filter(([x, y]) => x && !y).length;
  const c = pairs.filter(([x, y]) => !x && y).length;
  return {
    scope,
    paired: pairs.length,
    passA,
    passB,
    difference: pairs.length === 0 ? 0 : (passB - passA) / pairs.length,
    test: mcnemar(b, c),
  };
}

/** Paired comparison of two results files over the tasks both ran: overall and per category. */
export function compareResults(a: EvalResults, b: EvalResults): Comparison {
  const inB = new Map(b.tasks.map((t) => [t.id, t]));
  const inA = new Set(a.tasks.map((t) => t.id));
  const pairs = a.tasks.flatMap((t) => {
    const other = inB.get(t.id);
    return other ? [{ category: t.category, pair: [t.passed, other.passed] as [boolean, boolean] }] : [];
  });
  const categories = [...new Set(pairs.map((p) => p.category))].sort();
  return {
    a: { agent: a.agent, model: a.model },
    b: { agent: b.agent, model: b.model },
    onlyInA: a.tasks.filter((t) => !inB.has(t.id)).map((t) => t.id),
    onlyInB: b.tasks.filter((t) => !inA.has(t.id)).map((t) => t.id),
    rows: [
      row(
        "overall",
        pairs.map((p) => p.pair),
      ),
      ...categories.map((c) =>
        row(
          c,
          pairs.filter((p) => p.category === c).map((p) => p.pair),
        ),
      ),
    ],
  };
}

export function formatComparison(comparison: Comparison): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}`;
  const lines = [
    `A: ${comparison.a.agent} ${comparison.a.model}   B: ${comparison.b.agent} ${comparison.b.model}`,
    "",
    "| scope | paired | A passed | B passed | B − A (points) | A only | B only | McNemar p |",
    "| --- | --: | --: | --: | --: | --: | --: | --: |",
    ...comparison.rows.map(
      (r) =>
        `| ${r.scope} | ${r.paired} | ${r.passA} | ${r.passB} | ${r.difference >= 0 ? "+" : ""}${pct(r.difference)} | ${r.test.b} | ${r.test.c} | ${r.test.p < 0.0001 ? "<0.0001" : r.test.p.toFixed(4)} (${r.test.method}) |`,
    ),
  ];
  if (comparison.onlyInA.length || comparison.onlyInB.length)
    lines.push(
      "",
      `not paired: ${comparison.onlyInA.length} task(s) only in A, ${comparison.onlyInB.length} only in B`,
    );
  return `${lines.join("\n")}\n`;
}
