import { get, wsPath } from "../api.js";
import { fill, h } from "../dom.js";
import { errorBox, type View } from "../view.js";
import type { EvalRun } from "../wire.js";

/**
 * The eval page: the stored runs of the workspace; one run's HTML report, or the A/B comparison of two,
 * shown in a sandboxed frame (no scripts, an origin of its own: the report holds untrusted text, and the
 * engine serves it with a strict CSP of its own too).
 */

function runLabel(run: EvalRun): string {
  const parts = [run.id];
  for (const key of ["name", "suite", "model", "startedAt", "createdAt"]) {
    const value = run[key];
    if (typeof value === "string" && value) parts.push(value);
  }
  return parts.join(" · ");
}

export const evalView: View = ({ workspace, params, main, go }) => {
  const a = h("select", { id: "eval-a", "aria-label": "run" });
  const b = h("select", { id: "eval-b", "aria-label": "second run (A/B)" });
  const frame = h("iframe", {
    id: "report",
    sandbox: "",
    title: "eval report",
    referrerpolicy: "no-referrer",
  });
  let gone = false;

  const shown = () => {
    const first = params.get("a") ?? "";
    const second = params.get("b") ?? "";
    if (first && second)
      frame.src = `${wsPath(workspace.id, "evals", "compare")}?${new URLSearchParams({ a: first, b: second })}`;
    else if (first) frame.src = wsPath(workspace.id, "evals", first, "report");
  };

  const pick = () => {
    const query = new URLSearchParams({ a: a.value });
    if (b.value) query.set("b", b.value);
    go(`#/eval?${query}`);
  };
  a.addEventListener("change", pick);
  b.addEventListener("change", pick);
  fill(
    main,
    h("h1", {}, "Eval"),
    h("div", { class: "toolbar" }, h("label", {}, "Run ", a), h("label", {}, "compare with ", b)),
    frame,
  );
  get<EvalRun[] | { runs: EvalRun[] }>(wsPath(workspace.id, "evals"))
    .then((answer) => {
      if (gone) return;
      const runs = Array.isArray(answer) ? answer : answer.runs;
      if (runs.length === 0) {
        fill(
          main,
          h("h1", {}, "Eval"),
          h("p", { class: "muted" }, "No eval runs stored for this workspace (umbra eval)."),
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
      if (!params.get("a")) params.set("a", a.value);
      shown();
    })
    .catch((error: unknown) => {
      if (!gone) fill(main, h("h1", {}, "Eval"), errorBox(error));
    });
  return () => {
    gone = true;
  };
};
