import { type HunkNote, hunkNotes, placeLints } from "../annotate.js";
import { ApiError, get, send, wsPath } from "../api.js";
import { type DiffFile, type Hunk, parseDiff } from "../diff.js";
import { type Child, fill, h } from "../dom.js";
import { grammarFor, highlighted } from "../highlight.js";
import { errorBox, messageOf, type View } from "../view.js";
import type {
  AcceptAnswer,
  Branch,
  DiffAnswer,
  EngineEvent,
  LintsAnswer,
  Resolution,
  SessionDetail,
  SessionSummary,
  UndoAnswer,
} from "../wire.js";
import { conflictsBox } from "./conflicts.js";

/**
 * The review page: a branch's diff against its base, highlighted, with accept per file and per hunk
 * (the engine merges three ways with the user's folder and reports conflicts with their concurrent
 * edits, shown and settled here: conflicts.ts), rebase (bring those edits into the branch), and undo of
 * the last accept.
 */

function lineRow(line: Hunk["lines"][number], grammar: unknown): HTMLElement {
  const sign = line.kind === "add" ? "+" : line.kind === "remove" ? "-" : line.kind === "note" ? "" : " ";
  return h(
    "tr",
    { class: `line ${line.kind}` },
    h("td", { class: "num" }, line.oldLine ?? ""),
    h("td", { class: "num" }, line.newLine ?? ""),
    h("td", { class: "sign" }, sign),
    h("td", { class: "text" }, line.kind === "note" ? line.text : highlighted(line.text, grammar)),
  );
}

/** Paths as code, comma-separated. */
function pathList(paths: readonly string[]): Child[] {
  return paths.map((path, i) => [i > 0 ? ", " : "", h("code", {}, path)]);
}

/** A hunk's lint note: `errors` new errors (their messages in the title), or a note while there is no count. */
function lintNote(slot: HTMLElement, errors: number | undefined, title: string, note = ""): void {
  slot.className = errors === undefined ? "lint muted" : errors > 0 ? "lint bad" : "lint good";
  slot.title = title;
  fill(slot, errors === undefined ? note : errors > 0 ? `lint +${errors} error(s)` : "lint: no new errors");
}

/** The hunk's other notes, from the session that made the branch: whether a command ran after its last edit. */
function noteOf(note: HunkNote | undefined): HTMLElement | null {
  if (!note) return null;
  return h(
    "span",
    { class: "annotation" },
    note.ranAfter !== undefined
      ? h(
          "span",
          { class: "tested good", title: note.ranAfter },
          " · ran after the last edit: ",
          h("code", {}, note.ranAfter),
        )
      : note.untested
        ? h("span", { class: "tested bad" }, " · nothing ran after the last edit")
        : null,
  );
}

/** The events of the session that made `branch`, when one did (else none: the page has nothing to say). */
async function sessionEvents(workspace: string, branch: string): Promise<EngineEvent[]> {
  const { sessions } = await get<{ sessions: SessionSummary[] }>(wsPath(workspace, "sessions"));
  const maker = sessions.find((session) => session.branch === branch);
  if (!maker) return [];
  return (await get<SessionDetail>(wsPath(workspace, "sessions", maker.id))).events;
}

/** An accept's answer; `settle` accepts again with the resolutions the user chose for its conflicts. */
function resultBox(answer: AcceptAnswer, settle: (resolve: Resolution[]) => void): HTMLElement {
  return h(
    "div",
    { class: answer.written ? "result ok" : "result held", role: "status" },
    h("p", {}, answer.message),
    answer.applied.length > 0 ? h("p", { class: "applied" }, "written: ", pathList(answer.applied)) : null,
    answer.verification
      ? h(
          "div",
          { class: answer.verification.passed ? "verify good" : "verify bad" },
          h(
            "p",
            {},
            answer.verification.passed
              ? "Verified in a fresh branch"
              : "Not written: the check in a fresh branch failed",
            answer.verification.tests
              ? ` (${answer.verification.tests.command}: ${answer.verification.tests.passed ? "passed" : `exit ${answer.verification.tests.exitCode}`})`
              : "",
          ),
          answer.verification.problems.length > 0
            ? h(
                "ul",
                {},
                answer.verification.problems.map((problem) => h("li", {}, problem)),
              )
            : null,
        )
      : null,
    answer.conflicts.length > 0 ? conflictsBox(answer.conflicts, settle) : null,
    answer.refused.length > 0
      ? h(
          "ul",
          { class: "refused" },
          answer.refused.map((refusal) => h("li", {}, h("code", {}, refusal.path), ` — ${refusal.why}`)),
        )
      : null,
  );
}

export const reviewView: View = ({ workspace, params, main, go }) => {
  const branchPicker = h("select", { "aria-label": "branch", id: "branch" });
  const verify = h("input", { type: "checkbox", id: "verify" });
  const result = h("div", { id: "result" });
  const body = h("div", { id: "diff" }, h("p", { class: "muted" }, "Loading…"));
  let branch = params.get("branch") ?? "";
  let gone = false;

  const show = (node: HTMLElement) => {
    if (!gone) fill(result, node);
  };

  const act = async (label: string, work: () => Promise<HTMLElement>) => {
    show(h("p", { class: "muted" }, `${label}…`));
    try {
      show(await work());
      await loadDiff();
    } catch (error) {
      show(errorBox(error));
    }
  };

  interface Selection {
    files?: string[];
    hunks?: number[];
  }
  const acceptAnswer = (selection: Selection, resolve?: Resolution[]) =>
    send<AcceptAnswer>("POST", wsPath(workspace.id, "branches", branch, "accept"), {
      ...selection,
      ...(resolve && resolve.length > 0 ? { resolve } : {}),
      ...(verify.checked ? { verify: true } : {}),
    });
  const accept = (selection: Selection, resolve?: Resolution[]): Promise<void> =>
    act("Accepting", async () => {
      // settling runs the same accept (the same files and hunks) with the choices made
      const drawn = (answer: AcceptAnswer) => resultBox(answer, (chosen) => void accept(selection, chosen));
      try {
        return drawn(await acceptAnswer(selection, resolve));
      } catch (error) {
        // the user's file changed since its conflict was shown: say so, and show the conflict as it is now
        if (!(resolve && error instanceof ApiError && error.code === "STALE")) throw error;
        return h("div", {}, errorBox(error), drawn(await acceptAnswer(selection)));
      }
    });

  /** Where each drawn file's lint notes go, filled when the branch's lints come (loadLints). */
  let lintSlots = new Map<string, { hunks: HTMLElement[]; outside: HTMLElement; notes: HunkNote[] }>();
  let drawn = 0;

  const fileBlock = (file: DiffFile, events: readonly EngineEvent[]): HTMLElement => {
    const grammar = grammarFor(file.path);
    const notes = hunkNotes(events, file.path, file.hunks);
    const slots = file.hunks.map(() => h("span", { class: "lint muted" }, "lint: checking…"));
    const outside = h("div", { class: "lint-outside" });
    lintSlots.set(file.path, { hunks: slots, outside, notes });
    return h(
      "section",
      { class: "file", "data-path": file.path },
      h(
        "div",
        { class: "file-head" },
        h("code", { class: "path" }, file.path),
        h(
          "button",
          { class: "accept-file", on: { click: () => void accept({ files: [file.path] }) } },
          "Accept file",
        ),
      ),
      file.notes.length > 0 ? h("pre", { class: "notes" }, file.notes.join("\n")) : null,
      outside,
      file.hunks.map((hunk) =>
        h(
          "div",
          { class: "hunk", "data-hunk": hunk.number },
          h(
            "div",
            { class: "hunk-head" },
            h("code", {}, hunk.header),
            h("span", { class: "stat" }, `+${hunk.added} −${hunk.removed}`),
            slots[hunk.number - 1] ?? null,
            noteOf(notes[hunk.number - 1]),
            h(
              "button",
              {
                class: "accept-hunk",
                on: { click: () => void accept({ files: [file.path], hunks: [hunk.number] }) },
              },
              `Accept hunk ${hunk.number}`,
            ),
          ),
          h(
            "table",
            { class: "lines" },
            h(
              "tbody",
              {},
              hunk.lines.map((line) => lineRow(line, grammar)),
            ),
          ),
        ),
      ),
    );
  };

  /**
   * The branch's lints as they are now (the language servers lint exactly its current version), placed
   * on the hunks; should they fail, what the session's own lints said of the edit that wrote each hunk.
   */
  async function loadLints(files: readonly DiffFile[], generation: number): Promise<void> {
    let answer: LintsAnswer | undefined;
    let failure = "";
    try {
      answer = await get<LintsAnswer>(wsPath(workspace.id, "branches", branch, "lints"));
    } catch (error) {
      failure = messageOf(error);
    }
    if (gone || generation !== drawn) return;
    const partial = answer?.partial ? ` (partly: ${answer.partialReasons.join("; ")})` : "";
    for (const file of files) {
      const slot = lintSlots.get(file.path);
      if (!slot) continue;
      if (!answer) {
        slot.hunks.forEach((each, i) => {
          lintNote(
            each,
            slot.notes[i]?.lintErrors,
            `the branch's lints failed: ${failure}`,
            "lint: unavailable",
          );
        });
        continue;
      }
      const placed = placeLints(answer.introduced, file.path, file.hunks);
      slot.hunks.forEach((each, i) => {
        const errors = placed.byHunk[i] ?? [];
        lintNote(each, errors.length, errors.map((e) => `${e.line}: ${e.message}`).join("\n") + partial);
      });
      fill(
        slot.outside,
        placed.outside.length > 0
          ? h(
              "p",
              { class: "lint bad" },
              `lint: ${placed.outside.length} new error(s) on lines these hunks do not show: `,
              placed.outside.map((e, i) => [i > 0 ? "; " : "", h("code", {}, `${e.line}`), ` ${e.message}`]),
            )
          : null,
      );
    }
  }

  async function loadDiff(): Promise<void> {
    if (!branch) {
      fill(body, h("p", { class: "muted" }, "No branch to review."));
      return;
    }
    try {
      const [answer, events] = await Promise.all([
        get<DiffAnswer>(wsPath(workspace.id, "branches", branch, "diff")),
        sessionEvents(workspace.id, branch).catch(() => []),
      ]);
      if (gone) return;
      const files = parseDiff(answer.diff);
      lintSlots = new Map();
      const generation = ++drawn;
      fill(
        body,
        files.length === 0
          ? h("p", { class: "muted" }, "The branch changes nothing.")
          : files.map((file) => fileBlock(file, events)),
        answer.unknownBases.length > 0
          ? h("p", { class: "warn" }, `Left out (their base is not known): ${answer.unknownBases.join(", ")}`)
          : null,
      );
      if (files.length > 0) void loadLints(files, generation);
    } catch (error) {
      if (!gone) fill(body, errorBox(error));
    }
  }

  const toolbar = h(
    "div",
    { class: "toolbar" },
    h("label", {}, "Branch ", branchPicker),
    h(
      "label",
      { title: "run the tests in a fresh branch holding the accepted change first" },
      verify,
      " verify before writing",
    ),
    h(
      "button",
      {
        id: "rebase",
        on: {
          click: () =>
            void act("Rebasing", async () => {
              const answer = await send<{ message?: string }>(
                "POST",
                wsPath(workspace.id, "branches", branch, "rebase"),
              );
              return h("div", { class: "result ok", role: "status" }, answer.message ?? "Rebased.");
            }),
        },
      },
      "Rebase onto my edits",
    ),
    h(
      "button",
      {
        id: "undo",
        on: {
          click: () =>
            void act("Undoing", async () => {
              const answer = await send<UndoAnswer>("POST", wsPath(workspace.id, "undo"));
              return h(
                "div",
                { class: answer.found ? "result ok" : "result held", role: "status" },
                h("p", {}, answer.message),
                answer.restored.length > 0
                  ? h("p", { class: "restored" }, "put back: ", pathList(answer.restored))
                  : null,
                answer.left.length > 0
                  ? h(
                      "ul",
                      {},
                      answer.left.map((left) => h("li", {}, h("code", {}, left.path), ` — ${left.why}`)),
                    )
                  : null,
              );
            }),
        },
      },
      "Undo last accept",
    ),
  );
  fill(main, h("h1", {}, "Review"), toolbar, result, body);

  get<{ branches: Branch[] }>(wsPath(workspace.id, "branches"))
    .then(({ branches }) => {
      if (gone) return;
      if (!branch || !branches.some((each) => each.id === branch)) branch = branches[0]?.id ?? branch;
      fill(
        branchPicker,
        branches.map((each) =>
          h("option", { value: each.id }, each.label ? `${each.label} (${each.id})` : each.id),
        ),
      );
      branchPicker.value = branch;
      branchPicker.addEventListener("change", () =>
        go(`#/review?branch=${encodeURIComponent(branchPicker.value)}`),
      );
      return loadDiff();
    })
    .catch((error: unknown) => {
      if (!gone) fill(body, h("p", { class: "error" }, messageOf(error)));
    });
  return () => {
    gone = true;
  };
};
