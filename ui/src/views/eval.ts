import { get, wsPath } from "../api.js";
import { fill, h } from "../dom.js";
import { errorBox, type View } from "../view.js";
import type { Comparison, EvalRun } from "../wire.js";

/**
 * The eval page: the workspace's stored runs; one run's HTML report in a sandboxed frame (no script, an
 * origin of its own: the report holds untrusted text, and the engine serves it with a CSP of its own
 * too), or the A/B comparison of two (pass rates per scope and McNemar's test) as a table.
 */

function runLabel(run: EvalRun): string {
  return `${run.id} · ${run.agent} / ${run.model} · ${run.passed}/${run.tasks} passed · ${new Date(run.createdAt).toLocaleString()}`;
}

function comparisonTable(comparison: Comparison): HTMLElement {
  const side = (label: string, run: Comparison["a"]) => `${label}: ${run.agent} / ${run.model}`;
  return h(
    "div",
    { id: "comparison" },
    h("p", {}, side("A", comparison.a), " — ", side("B", comparison.b)),
    h(
      "table",
      { class: "grid" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["scope", "paired", "A passed", "B passed", "B − A", "McNemar p"].map((title) =>
            h("th", {}, title),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        comparison.rows.map((row) =>
          h(
            "tr",
            {},
            h("td", {}, row.scope),
            h("td", {}, row.paired),
            h("td", {}, row.passA),
            h("td", {}, row.passB),
            h("td", {}, `${row.difference >= 0 ? "+" : ""}${(row.difference * 100).toFixed(1)} pts`),
            h("td", {}, `${row.test.p.toFixed(3)} (${row.test.method}, b=${row.test.b} c=${row.test.c})`),
          ),
        ),
      ),
    ),
    comparison.onlyInA.length + comparison.onlyInB.length > 0
      ? h(
          "p",
          { class: "muted" },
          `Not paired: ${comparison.onlyInA.length} task(s) only in A, ${comparison.onlyInB.length} only in B.`,
        )
      : null,
  );
}

export const evalView: View = ({ workspace, params, main, go }) => {
  const a = h("select", { id: "eval-a", "aria-label": "run" });
  const b = h("select", { id: "eval-b", "aria-label": "second run (A/B)" });
  const shown = h("div", { id: "eval-shown" });
  let gone = false;

  const pick = () => {
    const query = new URLSearchParams({ a: a.value });
    if (b.value) query.set("b", b.value);
    go(`#/eval?${query}`);
  };
  a.addEventListener("change", pick);
  b.addEventListener("change", pick);

  const show = async (first: string, second: string) => {
    if (!second) {
      fill(
        shown,
        h("iframe", {
          id: "report",
          sandbox: "",
          title: "eval report",
          referrerpolicy: "no-referrer",
          src: wsPath(workspace.id, "evals", first, "report"),
        }),
      );
      return;
    }
    const comparison = await get<Comparison>(wsPath(workspace.id, "evals", "compare"), {
      a: first,
      b: second,
    });
    if (!gone) fill(shown, comparisonTable(comparison));
  };

  fill(
    main,
    h("h1", {}, "Eval"),
    h("div", { class: "toolbar" }, h("label", {}, "Run ", a), h("label", {}, "compare with ", b)),
    shown,
  );
  get<{ runs: EvalRun[] }>(wsPath(workspace.id, "evals"))
    .then(async ({ runs }) => {
      if (gone) return;
      if (runs.length === 0) {
        fill(
          shown,
          h("p", { class: "muted" }, "No eval runs stored for this workspace (umbra eval writes them)."),
        );
        return;
      }
      fill(
        a,
        runs.map((run) => h("option", { value: run.id }, runLabel(run))),
      );
      fill(
        b,
        h("option", { value: "" }, "—"),
        runs.map((run) => h("option", { value: run.id }, runLabel(run))),
      );
      a.value = params.get("a") ?? runs[0]?.id ?? "";
      b.value = params.get("b") ?? "";
      await show(a.value, b.value);
    })
    .catch((error: unknown) => {
      if (!gone) fill(shown, errorBox(error));
    });
  return () => {
    gone = true;
  };
};
