import { h } from "../dom.js";
import type { AcceptAnswer, Resolution, ResolutionChoice } from "../wire.js";

/**
 * The conflicts of an accept's answer, settled in place: each conflicting file shows its regions (the
 * user's side beside the agent's) and the ways to settle it: keep mine, take the agent's, both with
 * markers, or (a text conflict) edit the merge by hand. "Accept with these choices" runs the same accept
 * again with them; each carries the version of the user's file shown here, so the engine writes nothing
 * if the file changed since.
 */

const CHOICES: readonly [ResolutionChoice, string, string][] = [
  ["ours", "Keep mine", "keep your side of each conflicting region (the agent's other changes still merge)"],
  ["theirs", "Take the agent's", "take the agent's side of each conflicting region (your other edits stay)"],
  ["markers", "Both, with markers", "write both sides between conflict markers, to edit afterwards"],
  ["edited", "Edit the merge", "edit the merged text here; exactly that is written"],
];

type Conflict = AcceptAnswer["conflicts"][number];

interface Chosen {
  choice: ResolutionChoice;
  editor?: HTMLTextAreaElement;
}

function regions(conflict: Conflict): HTMLElement[] {
  return conflict.hunks.map((hunk) =>
    h(
      "div",
      { class: "conflict-hunk" },
      h("p", { class: "muted" }, `your lines ${hunk.line}–${hunk.line + Math.max(hunk.lines - 1, 0)}`),
      h(
        "div",
        { class: "sides" },
        h("pre", { class: "yours" }, hunk.yours),
        h("pre", { class: "agent" }, hunk.agent),
      ),
    ),
  );
}

/** The conflicts, with their choices; `settle` is called with the resolutions chosen. */
export function conflictsBox(
  conflicts: AcceptAnswer["conflicts"],
  settle: (resolve: Resolution[]) => void,
): HTMLElement {
  const chosen = new Map<string, Chosen>();
  const submit = h(
    "button",
    {
      class: "settle",
      disabled: true,
      on: {
        click: () =>
          settle(
            conflicts.flatMap((conflict): Resolution[] => {
              const pick = chosen.get(conflict.path);
              if (!pick) return [];
              const base = { path: conflict.path, choice: pick.choice, yoursSha256: conflict.yoursSha256 };
              return [pick.editor ? { ...base, content: pick.editor.value } : base];
            }),
          ),
      },
    },
    "Accept with these choices",
  );

  const fileBox = (conflict: Conflict): HTMLElement => {
    const editSlot = h("div", { class: "edit-slot" });
    const buttons: HTMLButtonElement[] = [];
    const pick = (choice: ResolutionChoice) => {
      const editor =
        choice === "edited"
          ? h("textarea", {
              class: "merge-edit",
              "aria-label": `the merged text of ${conflict.path}`,
              spellcheck: "false",
              rows: Math.min(Math.max((conflict.markers ?? "").split("\n").length, 6), 24),
            })
          : undefined;
      if (editor) editor.value = conflict.markers ?? "";
      chosen.set(conflict.path, editor ? { choice, editor } : { choice });
      for (const button of buttons)
        button.setAttribute("aria-pressed", String(button.dataset.choice === choice));
      editSlot.replaceChildren(...(editor ? [editor] : []));
      submit.disabled = false;
      editor?.focus();
    };
    for (const [choice, label, title] of CHOICES) {
      // markers and edits need a text merge: a binary file, a link or a deletion is kept or taken whole
      if ((choice === "edited" || choice === "markers") && conflict.markers === undefined) continue;
      buttons.push(
        h(
          "button",
          {
            class: "choice",
            "data-choice": choice,
            "aria-pressed": "false",
            title,
            on: { click: () => pick(choice) },
          },
          label,
        ),
      );
    }
    return h(
      "div",
      { class: "conflict", "data-path": conflict.path },
      h("p", {}, h("code", {}, conflict.path), ` — ${conflict.why}`),
      regions(conflict),
      h("div", { class: "choices", role: "group", "aria-label": `settle ${conflict.path}` }, buttons),
      editSlot,
    );
  };

  return h(
    "div",
    { class: "conflicts" },
    h("h3", {}, "Conflicts with your edits"),
    conflicts.map(fileBox),
    h(
      "p",
      { class: "settle-row" },
      submit,
      h(
        "span",
        { class: "muted" },
        " Choose how to settle each file, then accept again (undo takes it back). Or rebase the branch onto your edits.",
      ),
    ),
  );
}
