import { get } from "./api.js";
import { fill, h } from "./dom.js";
import { connectEvents } from "./events.js";
import { errorBox, type View, type ViewContext } from "./view.js";
import { agentsView } from "./views/agents.js";
import { approvalsView } from "./views/approvals.js";
import { evalView } from "./views/eval.js";
import { reviewView } from "./views/review.js";
import { searchView } from "./views/search.js";
import type { Workspace } from "./wire.js";

/**
 * The web UI's shell: the workspace picker, the pages' links, the search box and the live-events light;
 * pages are routes of the location's hash (`#/review?branch=ID`), so reloading keeps the place.
 */

const VIEWS: Record<string, { title: string; view: View }> = {
  agents: { title: "Agents", view: agentsView },
  review: { title: "Review", view: reviewView },
  approvals: { title: "Approvals", view: approvalsView },
  eval: { title: "Eval", view: evalView },
  search: { title: "Search", view: searchView },
};

const main = h("main", { id: "main" });
const picker = h("select", { id: "workspace", "aria-label": "workspace" });
const light = h("span", { id: "live", class: "live off", title: "live events" }, "offline");
const query = h("input", {
  id: "search",
  type: "search",
  placeholder: "Search the workspace",
  "aria-label": "search",
});
const nav = h(
  "nav",
  {},
  Object.entries(VIEWS)
    .filter(([name]) => name !== "search")
    .map(([name, { title }]) => h("a", { href: `#/${name}`, "data-view": name }, title)),
);

let workspaces: Workspace[] = [];
let leave: (() => void) | undefined;

function route(): { name: string; params: URLSearchParams } {
  const hash = location.hash.replace(/^#\/?/, "");
  const [name = "", search = ""] = hash.split("?", 2);
  return { name: Object.hasOwn(VIEWS, name) ? name : "agents", params: new URLSearchParams(search) };
}

function go(target: string): void {
  location.hash = target;
}

function draw(): void {
  leave?.();
  leave = undefined;
  const { name, params } = route();
  for (const link of nav.querySelectorAll("a")) link.classList.toggle("here", link.dataset.view === name);
  const workspace = workspaces.find((each) => each.id === picker.value) ?? workspaces[0];
  if (!workspace) {
    fill(main, h("p", {}, "The engine has no workspace open: start it with umbra serve --http --root DIR."));
    return;
  }
  const page = VIEWS[name];
  if (!page) return;
  document.title = `umbra · ${page.title}`;
  fill(main);
  const context: ViewContext = { workspace, params, main, go };
  try {
    leave = page.view(context) ?? undefined;
  } catch (error) {
    fill(main, errorBox(error));
  }
}

async function start(): Promise<void> {
  const form = h(
    "form",
    {
      role: "search",
      on: {
        submit: (event) => {
          event.preventDefault();
          go(`#/search?${new URLSearchParams({ q: query.value })}`);
        },
      },
    },
    query,
  );
  document.body.append(
    h("header", {}, h("strong", { class: "brand" }, "umbra"), picker, nav, form, light),
    main,
  );
  connectEvents((connected) => {
    light.className = connected ? "live on" : "live off";
    light.textContent = connected ? "live" : "offline";
  });
  try {
    workspaces = (await get<{ workspaces: Workspace[] }>("/api/workspaces")).workspaces;
  } catch (error) {
    fill(main, errorBox(error));
    return;
  }
  fill(
    picker,
    workspaces.map((each) => h("option", { value: each.id }, each.root)),
  );
  const saved = sessionStorage.getItem("umbra.workspace");
  if (saved && workspaces.some((each) => each.id === saved)) picker.value = saved;
  picker.addEventListener("change", () => {
    sessionStorage.setItem("umbra.workspace", picker.value);
    draw();
  });
  window.addEventListener("hashchange", draw);
  draw();
}

void start();
