import { get, send, wsPath } from "../api.js";
import { describeEvent } from "../describe.js";
import { fill, h } from "../dom.js";
import { onEvent } from "../events.js";
import { errorBox, timeOf, type View } from "../view.js";
import type { EngineEvent, SessionDetail, SessionSummary } from "../wire.js";

/**
 * The agents board: every session of the workspace (running and past), each a card with its state,
 * steps, tool calls, tokens, cost and time, and its events: what it did so far (GET .../sessions/ID),
 * then live (GET /api/events). Events are queued and drawn once per animation frame, each card keeps its
 * last LOG_LINES lines, and the summaries are fetched again at most every REFRESH_MS while events come,
 * so that many sessions streaming at once keep the page responsive.
 */

const LOG_LINES = 200;
const REFRESH_MS = 500;

interface Card {
  summary: SessionSummary;
  root: HTMLElement;
  state: HTMLElement;
  where: HTMLElement;
  facts: HTMLElement;
  log: HTMLOListElement;
  actions: HTMLElement;
  /**
   * Live events that came while its history was loading: drawn as they came; the history goes above them,
   * less what they already show.
   */
  early?: EngineEvent[];
  /**
   * The history's events (by keyOf) that no live event has matched yet: a live event that comes after the
   * history, late, may be one it already holds. Dropped at the first live event it does not hold of a
   * type histories hold (lints, notices and output are live only: they say nothing of it).
   */
  shown?: { keys: Set<string>; types: Set<string>; text: string };
  /** The log follows new lines (the user has not scrolled up in it). */
  follow: boolean;
}

function elapsed(summary: SessionSummary): string {
  const start = Date.parse(summary.startedAt);
  const end = summary.endedAt ? Date.parse(summary.endedAt) : Date.now();
  if (Number.isNaN(start) || Number.isNaN(end)) return "";
  const seconds = Math.max(0, Math.round((end - start) / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}

function factsOf(summary: SessionSummary): string {
  const parts = [
    `${summary.steps} steps`,
    `${summary.toolCalls} tool calls`,
    `${summary.tokens.input} in / ${summary.tokens.output} out tokens`,
  ];
  if (typeof summary.cost === "number") parts.push(`$${summary.cost.toFixed(4)}`);
  const time = elapsed(summary);
  if (time) parts.push(time);
  return parts.join(" · ");
}

/**
 * What an event of a session's history and the same event live have in common (not their id, nor their
 * time: the history's comes from the transcript).
 */
function keyOf(event: EngineEvent): string {
  return JSON.stringify([event.type, event.call, event.phase, event.state, event.text, event.message]);
}

/** The model's text comes live in pieces, in the history whole: consecutive pieces as one event. */
function joinedText(events: readonly EngineEvent[]): EngineEvent[] {
  const joined: EngineEvent[] = [];
  for (const event of events) {
    const last = joined.at(-1);
    if (event.type === "text" && last?.type === "text")
      joined[joined.length - 1] = { ...last, text: `${String(last.text ?? "")}${String(event.text ?? "")}` };
    else joined.push(event);
  }
  return joined;
}

/** Live events of sessions without a card yet, kept for the card that comes (the newest ORPHANS). */
const ORPHANS = 2000;

const isLive = (summary: SessionSummary) => summary.state === "running" || summary.state === "waiting";

export const agentsView: View = ({ workspace, main, go }) => {
  const board = h("div", { class: "board", id: "board" });
  const note = h("div", { role: "status" });
  const cards = new Map<string, Card>();
  const pending: EngineEvent[] = [];
  let orphans: EngineEvent[] = [];
  let frame = 0;
  let gone = false;
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

  const control = async (card: Card, action: "stop" | "resume") => {
    try {
      await send("POST", wsPath(workspace.id, "sessions", card.summary.id, action));
      await refresh();
    } catch (error) {
      fill(note, errorBox(error));
    }
  };

  const drawSummary = (card: Card) => {
    const { summary } = card;
    card.root.dataset.state = summary.state;
    card.state.textContent = summary.state;
    card.state.className = `badge state-${summary.state}`;
    card.where.textContent = [
      summary.id,
      summary.branch ? `branch ${summary.branch}` : "",
      summary.model,
      timeOf(summary.startedAt),
      summary.resumedFrom ? `resumes ${summary.resumedFrom}` : "",
      summary.message ?? "",
    ]
      .filter(Boolean)
      .join(" · ");
    card.facts.textContent = factsOf(summary);
    const controls = `${isLive(summary)} ${summary.branch}`;
    if (card.actions.dataset.controls === controls) return;
    card.actions.dataset.controls = controls;
    fill(
      card.actions,
      isLive(summary)
        ? h("button", { class: "stop danger", on: { click: () => void control(card, "stop") } }, "Stop")
        : h("button", { class: "resume", on: { click: () => void control(card, "resume") } }, "Resume"),
      summary.branch
        ? h(
            "button",
            {
              class: "review",
              on: { click: () => go(`#/review?branch=${encodeURIComponent(summary.branch)}`) },
            },
            "Review",
          )
        : null,
    );
  };

  /** Appends an event's line to `log`; the model's text comes in pieces: one line for consecutive pieces. */
  const appendLine = (log: Element, event: EngineEvent) => {
    const last = log.lastElementChild;
    if (event.type === "text" && last instanceof HTMLElement && last.dataset.type === "text") {
      last.append(typeof event.text === "string" ? event.text : "");
      return;
    }
    log.append(
      h(
        "li",
        { class: "event", "data-type": event.type, "data-at": event.at },
        h("span", { class: "when" }, timeOf(event.at)),
        " ",
        describeEvent(event),
      ),
    );
  };

  const trim = (card: Card) => {
    while (card.log.childElementCount > LOG_LINES) card.log.firstElementChild?.remove();
  };

  const addLine = (card: Card, event: EngineEvent) => {
    appendLine(card.log, event);
    trim(card);
  };

  /** A live event, unless the history drawn before it already holds it. */
  const addLive = (card: Card, event: EngineEvent) => {
    const key = keyOf(event);
    const shown = card.shown;
    if (shown?.keys.has(key)) {
      shown.keys.delete(key);
      return;
    }
    // a piece of a text the history holds whole (the history's last text, what of it no piece matched yet)
    const piece = event.type === "text" && typeof event.text === "string" ? event.text : "";
    if (shown && piece !== "" && shown.text.startsWith(piece)) {
      shown.text = shown.text.slice(piece.length);
      return;
    }
    if (shown?.types.has(event.type)) card.shown = undefined;
    addLine(card, event);
  };

  /**
   * The session's history, put above the live events drawn while it loaded (never holding them back: an
   * event is on the page as soon as it comes); those the history also holds are drawn once.
   */
  const loadHistory = async (card: Card) => {
    try {
      const detail = await get<SessionDetail>(wsPath(workspace.id, "sessions", card.summary.id));
      if (gone) return;
      const drawnLive = new Map<string, number>();
      for (const event of joinedText(card.early ?? []))
        drawnLive.set(keyOf(event), (drawnLive.get(keyOf(event)) ?? 0) + 1);
      const seen = new Set<string>();
      const older = document.createElement("ol");
      for (const event of detail.events.slice(-LOG_LINES)) {
        const key = keyOf(event);
        const live = drawnLive.get(key) ?? 0;
        if (live > 0) {
          drawnLive.set(key, live - 1);
          continue;
        }
        seen.add(key);
        appendLine(older, event);
      }
      card.log.prepend(...older.children);
      trim(card);
      const lastText = detail.events.findLast((event) => event.type === "text");
      card.shown = {
        keys: seen,
        types: new Set(detail.events.map((event) => event.type)),
        text: lastText && seen.has(keyOf(lastText)) && typeof lastText.text === "string" ? lastText.text : "",
      };
    } catch (error) {
      card.log.prepend(h("li", { class: "error" }, `history: ${String(error)}`));
    }
    card.early = undefined;
    if (card.follow) card.log.scrollTop = card.log.scrollHeight;
  };

  /** The card of a session (made the first time, with its history and the live events it missed). */
  const cardFor = (summary: SessionSummary): Card => {
    const existing = cards.get(summary.id);
    if (existing) {
      if (JSON.stringify(existing.summary) === JSON.stringify(summary)) return existing;
      existing.summary = summary;
      drawSummary(existing);
      return existing;
    }
    const state = h("span", { class: "badge" });
    const where = h("p", { class: "muted where" });
    const facts = h("p", { class: "facts" });
    const log = h("ol", { class: "log" });
    const actions = h("div", { class: "actions" });
    const root = h(
      "article",
      { class: "session", "data-session": summary.id },
      h("div", { class: "session-head" }, state, h("h2", { class: "task" }, summary.task), actions),
      where,
      facts,
      log,
    );
    const own = orphans.filter((event) => event.session === summary.id);
    orphans = orphans.filter((event) => event.session !== summary.id);
    const card: Card = { summary, root, state, where, facts, log, actions, early: own, follow: true };
    for (const event of own) addLine(card, event);
    log.addEventListener("scroll", () => {
      card.follow = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    });
    cards.set(summary.id, card);
    board.prepend(root);
    drawSummary(card);
    void loadHistory(card);
    return card;
  };

  /** The summaries again (steps, tokens, cost come from the engine, not counted here). */
  async function refresh(): Promise<void> {
    try {
      const { sessions } = await get<{ sessions: SessionSummary[] }>(wsPath(workspace.id, "sessions"));
      if (gone) return;
      // oldest first, so that prepending leaves the newest on top
      for (const summary of [...sessions].reverse()) cardFor(summary);
      if (cards.size === 0) fill(note, h("p", { class: "muted" }, "No sessions yet."));
      else note.replaceChildren();
    } catch (error) {
      if (!gone) fill(note, errorBox(error));
    }
  }

  // an event of a session the page has no card for: its summary at once (one listing at a time)
  let listing: Promise<void> | undefined;
  let listAgain = false;
  const refreshNow = () => {
    if (listing) {
      listAgain = true;
      return;
    }
    listing = refresh().finally(() => {
      listing = undefined;
      if (listAgain && !gone) {
        listAgain = false;
        refreshNow();
      }
    });
  };

  const refreshSoon = () => {
    refreshTimer ??= setTimeout(() => {
      refreshTimer = undefined;
      void refresh();
    }, REFRESH_MS);
  };

  const flush = () => {
    frame = 0;
    const touched = new Set<Card>();
    for (const event of pending.splice(0)) {
      const card = cards.get(event.session);
      if (!card) continue;
      touched.add(card);
      if (card.early) {
        card.early.push(event);
        addLine(card, event);
      } else addLive(card, event);
      if (event.type === "session" && typeof event.state === "string") {
        card.summary.state = event.state as SessionSummary["state"];
        if (typeof event.branch === "string") card.summary.branch = event.branch;
        drawSummary(card);
      }
    }
    for (const card of touched) if (card.follow) card.log.scrollTop = card.log.scrollHeight;
  };

  const task = h("input", {
    name: "task",
    placeholder: "What should the agent do?",
    required: true,
    "aria-label": "task",
  });
  const cassette = h("input", {
    name: "cassette",
    placeholder: "cassette to replay (optional)",
    "aria-label": "cassette",
  });
  const form = h(
    "form",
    {
      class: "new-session",
      on: {
        submit: async (event) => {
          event.preventDefault();
          try {
            const { id } = await send<{ id: string }>("POST", wsPath(workspace.id, "sessions"), {
              task: task.value,
              ...(cassette.value ? { cassette: cassette.value } : {}),
            });
            task.value = "";
            cassette.value = "";
            const { events: _events, ...summary } = await get<SessionDetail>(
              wsPath(workspace.id, "sessions", id),
            );
            if (!cards.has(id)) cardFor(summary);
            note.replaceChildren();
          } catch (error) {
            fill(note, errorBox(error));
          }
        },
      },
    },
    task,
    cassette,
    h("button", { type: "submit" }, "Start agent"),
  );

  fill(main, h("h1", {}, "Agents"), form, note, board);
  const stop = onEvent((event) => {
    if (event.workspace !== workspace.id) return;
    if (!cards.has(event.session)) {
      orphans.push(event);
      if (orphans.length > ORPHANS) orphans.splice(0, orphans.length - ORPHANS);
      refreshNow();
      return;
    }
    pending.push(event);
    frame ||= requestAnimationFrame(flush);
    if (event.type !== "output") refreshSoon();
  });
  const clock = setInterval(() => {
    for (const card of cards.values())
      if (isLive(card.summary)) card.facts.textContent = factsOf(card.summary);
  }, 1000);
  void refresh();
  return () => {
    gone = true;
    stop();
    clearInterval(clock);
    if (frame) cancelAnimationFrame(frame);
    if (refreshTimer) clearTimeout(refreshTimer);
  };
};
