import { get, send } from "../api.js";
import { fill, h } from "../dom.js";
import { onEvent } from "../events.js";
import { errorBox, timeOf, type View } from "../view.js";
import type { Approval, Rule } from "../wire.js";

/**
 * The approvals queue: every agent's network and permission requests in one list, with the command,
 * the agent's reason and the rule it would need; approve once, for this repository (a rule saved on the
 * user's side), or deny. Below, the saved rules, each removable. Redrawn on every approval event.
 */

type Decision = "once" | "repository" | "deny";

export const approvalsView: View = ({ main }) => {
  const queue = h("div", { id: "queue" }, h("p", { class: "muted" }, "Loading…"));
  const rules = h("div", { id: "rules" });
  const note = h("div", { role: "status" });
  let gone = false;

  const decide = async (approval: Approval, decision: Decision) => {
    try {
      await send("POST", `/api/approvals/${encodeURIComponent(approval.id)}`, { decision });
      note.textContent = `${decision === "deny" ? "Denied" : "Approved"}: ${approval.command}`;
    } catch (error) {
      fill(note, errorBox(error));
    }
    await load();
  };

  const item = (approval: Approval): HTMLElement =>
    h(
      "article",
      { class: "approval", "data-id": approval.id },
      h("pre", { class: "command" }, approval.command),
      approval.reason ? h("p", {}, h("span", { class: "muted" }, "reason: "), approval.reason) : null,
      approval.rule
        ? h("p", {}, h("span", { class: "muted" }, "rule it needs: "), h("code", {}, approval.rule))
        : null,
      h(
        "p",
        { class: "muted" },
        [approval.root, `session ${approval.session}`, `branch ${approval.branch}`, timeOf(approval.askedAt)]
          .filter(Boolean)
          .join(" · "),
      ),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          { class: "approve-once", on: { click: () => void decide(approval, "once") } },
          "Approve once",
        ),
        // no rule is offered for a command with control characters (it is shown escaped): once or deny only
        approval.rule
          ? h(
              "button",
              { class: "approve-repo", on: { click: () => void decide(approval, "repository") } },
              "Approve for this repository",
            )
          : null,
        h("button", { class: "deny danger", on: { click: () => void decide(approval, "deny") } }, "Deny"),
      ),
    );

  const ruleRow = (rule: Rule): HTMLElement =>
    h(
      "li",
      { class: "rule", "data-id": rule.id },
      h("code", {}, rule.rule),
      h("span", { class: "muted" }, ` in ${rule.root} · saved ${new Date(rule.createdAt).toLocaleString()}`),
      h(
        "button",
        {
          class: "remove-rule danger",
          on: {
            click: async () => {
              try {
                await send("DELETE", `/api/rules/${encodeURIComponent(rule.id)}`);
              } catch (error) {
                fill(note, errorBox(error));
              }
              await load();
            },
          },
        },
        "Remove",
      ),
    );

  async function load(): Promise<void> {
    try {
      const [{ approvals: pending }, { rules: saved }] = await Promise.all([
        get<{ approvals: Approval[] }>("/api/approvals"),
        get<{ rules: Rule[] }>("/api/rules"),
      ]);
      if (gone) return;
      fill(
        queue,
        pending.length === 0
          ? h("p", { class: "muted", id: "queue-empty" }, "Nothing is waiting.")
          : pending.map(item),
      );
      fill(
        rules,
        saved.length === 0 ? h("p", { class: "muted" }, "No saved rules.") : h("ul", {}, saved.map(ruleRow)),
      );
    } catch (error) {
      if (!gone) fill(queue, errorBox(error));
    }
  }

  fill(main, h("h1", {}, "Approvals"), note, queue, h("h2", {}, "Saved rules"), rules);
  const stop = onEvent((event) => {
    if (event.type === "approval") void load();
  });
  void load();
  return () => {
    gone = true;
    stop();
  };
};
