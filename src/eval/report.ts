import type { EvalResults, TaskTiming } from "./runner.js";
import { CATEGORY_DESCRIPTIONS, type FailureCategory } from "./taxonomy.js";

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function toolTotals(results: EvalResults): [string, number][] {
  // a Map: the model names the tools, `constructor` or `__proto__` as well
  const totals = new Map<string, number>();
  for (const task of results.tasks)
    for (const [name, n] of Object.entries(task.toolCalls)) totals.set(name, (totals.get(name) ?? 0) + n);
  return [...totals].sort((a, b) => b[1] - a[1]);
}

/** The Markdown report: summary, pass rate by category, failure taxonomy, one row per task. */
export function markdownReport(results: EvalResults, timings: readonly TaskTiming[]): string {
  const s = results.summary;
  const wall = new Map(timings.map((t) => [t.id, t.wallMs]));
  const lines = [
    `# umbra eval: ${results.agent} (${results.model})`,
    "",
    `**${s.passed} of ${s.tasks} tasks passed the hidden tests (${pct(s.passRate)})**; ${s.visiblePassed} passed the visible tests.`,
    `Model calls: ${s.modelCalls}; tokens: ${s.inputTokens} in + ${s.outputTokens} out; median wall time per task: ${(median(timings.map((t) => t.wallMs)) / 1000).toFixed(2)} s.`,
    "",
    "## Pass rate by category",
    "",
    "| category | tasks | passed | rate |",
    "| --- | --: | --: | --: |",
    ...Object.entries(s.byCategory).map(
      ([c, e]) => `| ${c} | ${e.tasks} | ${e.passed} | ${pct(e.passRate)} |`,
    ),
    "",
    "## Failure taxonomy",
    "",
  ];
  const failures = Object.entries(s.failures) as [FailureCategory, number][];
  if (failures.length === 0) lines.push("No failures.");
  else {
    lines.push("| failure | tasks | rule |", "| --- | --: | --- |");
    for (const [category, n] of failures.sort((a, b) => b[1] - a[1]))
      lines.push(`| ${category} | ${n} | ${CATEGORY_DESCRIPTIONS[category]} |`);
  }
  const tools = toolTotals(results);
  if (tools.length > 0) {
    lines.push("", "## Tool calls by kind", "", "| tool | calls |", "| --- | --: |");
    for (const [name, n] of tools) lines.push(`| ${name} | ${n} |`);
  }
  lines.push(
    "",
    "## Tasks",
    "",
    "| task | category | hidden | visible | status | failure | model calls | tokens | wall s |",
    "| --- | --- | :-: | :-: | --- | --- | --: | --: | --: |",
    ...results.tasks.map(
      (t) =>
        `| ${t.id} | ${t.category} | ${t.passed ? "✓" : "✗"} | ${t.visiblePassed ? "✓" : "✗"} | ${t.status} | ${t.failure ?? ""} | ${t.modelCalls} | ${t.inputTokens + t.outputTokens} | ${((wall.get(t.id) ?? 0) / 1000).toFixed(2)} |`,
    ),
  );
  return `${lines.join("\n")}\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A horizontal bar chart as inline SVG (no scripts, no external resources). */
export function barChart(
  title: string,
  bars: { label: string; value: number; text: string }[],
  max?: number,
): string {
  const rowHeight = 22;
  const labelWidth = 190;
  const barWidth = 360;
  const top = max ?? Math.max(1, ...bars.map((b) => b.value));
  const height = bars.length * rowHeight + 34;
  const rows = bars
    .map((bar, i) => {
      const y = 28 + i * rowHeight;
      const w = Math.max(bar.value > 0 ? 2 : 0, Math.round((bar.value / top) * barWidth));
      return [
        `<text x="${labelWidth - 6}" y="${y + 14}" text-anchor="end">${escapeHtml(bar.label)}</text>`,
        `<rect x="${labelWidth}" y="${y + 2}" width="${w}" height="${rowHeight - 6}" fill="#4e79a7"/>`,
        `<text x="${labelWidth + w + 6}" y="${y + 14}">${escapeHtml(bar.text)}</text>`,
      ].join("");
    })
    .join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + barWidth + 110}" height="${height}" role="img" aria-label="${escapeHtml(title)}" font-family="sans-serif" font-size="12">
<text x="0" y="16" font-weight="bold" font-size="14">${escapeHtml(title)}</text>
${rows}
</svg>`;
}

/** A self-contained HTML report (inline CSS and SVG; opens offline). */
export function htmlReport(results: EvalResults, timings: readonly TaskTiming[]): string {
  const s = results.summary;
  const categories = Object.entries(s.byCategory).map(([label, e]) => ({
    label,
    value: e.passRate,
    text: `${pct(e.passRate)} (${e.passed}/${e.tasks})`,
  }));
  const calls = results.tasks.map((t) => ({ label: t.id, value: t.modelCalls, text: String(t.modelCalls) }));
  const failures = (Object.entries(s.failures) as [FailureCategory, number][])
    .sort((a, b) => b[1] - a[1])
    .map(([label, n]) => ({ label, value: n, text: String(n) }));
  const wall = new Map(timings.map((t) => [t.id, t.wallMs]));
  const rows = results.tasks
    .map(
      (t) =>
        `<tr><td>${escapeHtml(t.id)}</td><td>${escapeHtml(t.category)}</td><td class="${t.passed ? "ok" : "bad"}">${t.passed ? "pass" : "fail"}</td><td>${t.visiblePassed ? "pass" : "fail"}</td><td>${escapeHtml(t.status)}</td><td>${escapeHtml(t.failure ?? "")}</td><td>${t.modelCalls}</td><td>${t.inputTokens + t.outputTokens}</td><td>${((wall.get(t.id) ?? 0) / 1000).toFixed(2)}</td></tr>`,
    )
    .join("\n");
  const rules = (Object.entries(CATEGORY_DESCRIPTIONS) as [FailureCategory, string][])
    .map(([c, d]) => `<li><b>${c}</b>: ${escapeHtml(d)}</li>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>umbra eval: ${escapeHtml(results.agent)} (${escapeHtml(results.model)})</title>
<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}.ok{color:#176d2b}.bad{color:#b3261e}section{margin:1.5em 0}</style>
</head><body>
<h1>umbra eval: ${escapeHtml(results.agent)} (${escapeHtml(results.model)})</h1>
<p><b>${s.passed} of ${s.tasks} tasks passed the hidden tests (${pct(s.passRate)})</b>; ${s.visiblePassed} passed the visible tests. Model calls: ${s.modelCalls}; tokens: ${s.inputTokens} in + ${s.outputTokens} out.</p>
<section>${barChart("Pass rate by category", categories, 1)}</section>
<section>${barChart("Model calls per task", calls)}</section>
<section>${failures.length ? barChart("Failure taxonomy", failures) : "<p>No failures.</p>"}</section>
<section><h2>Tasks</h2><table><tr><th>task</th><th>category</th><th>hidden</th><th>visible</th><th>status</th><th>failure</th><th>model calls</th><th>tokens</th><th>wall s</th></tr>
${rows}
</table></section>
<section><h2>Failure rules</h2><ul>${rules}</ul></section>
</body></html>
`;
}
