import { send, wsPath } from "../api.js";
import { fill, h } from "../dom.js";
import { grammarFor, highlighted } from "../highlight.js";
import { errorBox, type View } from "../view.js";
import type { SearchHit } from "../wire.js";

/** The search page: the header's box asks the engine's search (it builds the index when there is none). */
export const searchView: View = ({ workspace, params, main }) => {
  const query = params.get("q")?.trim() ?? "";
  const box = document.getElementById("search");
  if (box instanceof HTMLInputElement) box.value = query;
  const results = h("ol", { class: "hits" });
  const status = h(
    "p",
    { class: "muted" },
    query ? "Searching…" : "Type a question or a name in the search box.",
  );
  fill(main, h("h1", {}, "Search"), status, results);
  if (!query) return undefined;
  let gone = false;
  send<{ hits: SearchHit[]; intent?: string }>("POST", wsPath(workspace.id, "search"), {
    query,
    limit: 20,
    build: true,
  })
    .then((answer) => {
      if (gone) return;
      status.textContent = `${answer.hits.length} hit(s) for “${query}”${answer.intent ? ` (read as ${answer.intent})` : ""}`;
      fill(
        results,
        answer.hits.map((hit) =>
          h(
            "li",
            { class: "hit" },
            h(
              "div",
              { class: "where" },
              h("code", {}, `${hit.path}:${hit.startLine}-${hit.endLine}`),
              hit.symbol ? h("span", { class: "symbol" }, hit.symbol) : null,
              hit.stale ? h("span", { class: "badge warn" }, "changed since indexed") : null,
            ),
            h("pre", { class: "code" }, h("code", {}, highlighted(hit.preview, grammarFor(hit.path)))),
          ),
        ),
      );
    })
    .catch((error: unknown) => {
      if (!gone) fill(main, h("h1", {}, "Search"), errorBox(error));
    });
  return () => {
    gone = true;
  };
};
