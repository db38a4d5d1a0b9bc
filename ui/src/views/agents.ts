import { get, send, wsPath } from "../api.js";
import { describeEvent } from "../describe.js";
import { fill, h } from "../dom.js";
import { onEvent } from "../events.js";
import { errorBox, timeOf, type View } from "../view.js";
import type { EngineEvent, SessionSummary } from "../wire.js";

/**
 * The agents board: every session of the workspace (running and past), each a card with its state,
 * steps, tool calls, tokens, cost and time, and its live events (tool calls, lints, command output,
 * usage) as they come. Events are queued and drawn once per animation frame, and each card keeps its
 * last LOG_LINES lines, so that many sessions streaming at once keep the page responsive.
 */

const LOG_LINES = 200;

interface Card {
  summary: SessionSummary;
  root: HTMLElement;
  state: HTMLElement;
  facts: HTMLElement;
  log: HTMLOListElement;
  actions: HTMLElement;
}

function elapsed(summary: SessionSummary): string {
  if (!summary.startedAt) return "";
  const start = Date.parse(summary.startedAt);
  const end = summary.endedAt ? Date.parse(summary.endedAt) : Date.now();
  if (Number.isNaN(start) || Number.isNaN(end)) return "";
  const seconds = Math.max(0, Math.round((end - start) / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
}

function factsOf(summary: SessionSummary): string {
  const parts = [
    `${summary.steps ?? 0} steps`,
    `${summary.toolCalls ?? 0} tool calls`,
    `${summary.tokens?.input ?? 0} in / ${summary.tokens?.output ?? 0} out tokens`,
  ];
  if (typeof summary.cost === "number") parts.push(`$${summary.cost.toFixed(4)}`);
  const time = elapsed(summary);
  if (time) parts.push(time);
  return parts.join(" · ");
}

export const agentsView: View = ({ workspace, main }) => {
  const board = h("div", { class: "board", id: "board" });
  const note = h("div", { role: "status" });
  const cards = new Map<string, Card>();
  const pending: EngineEvent[] = [];
  let frame = 0;
  let gone = false;
  let reloading: Promise<void> | undefined;

  const control = async (card: Card, action: "stop" | "resume") => {
    try {
      await send("POST", wsPath(workspace.id, "sessions", card.summary.id, action));
    } catch (error) {
      fill(note, errorBox(error));
    }
  };

  const drawSummary = (card: Card) => {
    const { summary } = card;
    card.root.dataset.state = summary.state;
    card.state.textContent = summary.state;
    card.state.className = `badge state-${summary.state}`;
    card.facts.textContent = factsOf(summary);
    const live = summary.state === "running" || summary.state === "waiting";
    fill(
      card.actions,
      live
        ? h("button", { class: "stop danger", on: { click: () => void control(card, "stop") } }, "Stop")
        : h("button", { class: "resume", on: { click: () => void control(card, "resume") } }, "Resume"),
      summary.branch
        ? h("a", { href: `#/review?branch=${encodeURIComponent(summary.branch)}`, class: "button" }, "Review")
        : null,
    );
  };

  const cardFor = (summary: SessionSummary): Card => {
    const existing = cards.get(summary.id);
    if (existing) {
      existing.summary = { ...existing.summary, ...summary };
      drawSummary(existing);
      return existing;
    }
    const state = h("span", { class: "badge" });
    const facts = h("p", { class: "facts" });
    const log = h("ol", { class: "log" });
    const actions = h("div", { class: "actions" });
    const root = h(
      "article",
      { class: "session", "data-session": summary.id },
      h("div", { class: "session-head" }, state, h("h2", { class: "task" }, summary.task), actions),
      h(
        "p",
        { class: "muted" },
        `${summary.id}${summary.branch ? ` · branch ${summary.branch}` : ""} · ${timeOf(summary.startedAt)}`,
      ),
      facts,
      log,
    );
    const card: Card = { summary, root, state, facts, log, actions };
    cards.set(summary.id, card);
    board.prepend(root);
    drawSummary(card);
    return card;
  };

  const addLine = (card: Card, event: EngineEvent) => {
    const line = describeEvent(event);
    if (!line) return;
    card.log.append(
      h(
        "li",
        { class: "event", "data-type": event.type, "data-at": event.at ?? "" },
        h("span", { class: "when" }, timeOf(event.at)),
        " ",
        line,
      ),
    );
    while (card.log.childElementCount > LOG_LINES) card.log.firstElementChild?.remove();
  };

  const apply = (card: Card, event: EngineEvent) => {
    const summary = card.summary;
    if (event.type === "session" && typeof event.state === "string") {
      summary.state = event.state as SessionSummary["state"];
      if (typeof event.endedAt === "string") summary.endedAt = event.endedAt;
    }
    if (event.type === "usage") {
      const tokens = event.tokens as SessionSummary["tokens"] | undefined;
      if (tokens) summary.tokens = { ...summary.tokens, ...tokens };
      if (typeof event.cost === "number") summary.cost = event.cost;
      if (typeof event.steps === "number") summary.steps = event.steps;
    }
    if (event.type === "tool") summary.toolCalls = (summary.toolCalls ?? 0) + 1;
    addLine(card, event);
  };

  const flush = () => {
    frame = 0;
    const touched = new Set<Card>();
    let unknown = false;
    for (const event of pending.splice(0)) {
      const card = event.session ? cards.get(event.session) : undefined;
      if (!card) {
        unknown = true;
        continue;
      }
      apply(card, event);
      touched.add(card);
    }
    for (const card of touched) drawSummary(card);
    if (unknown) void reload();
  };

  async function reload(): Promise<void> {
    reloading ??= (async () => {
      try {
        const list = await get<SessionSummary[] | { sessions: SessionSummary[] }>(
          wsPath(workspace.id, "sessions"),
        );
        const sessions = Array.isArray(list) ? list : list.sessions;
        if (gone) return;
        for (const summary of [...sessions].reverse()) cardFor(summary);
        if (cards.size === 0) fill(note, h("p", { class: "muted" }, "No sessions yet."));
        else note.replaceChildren();
      } catch (error) {
        if (!gone) fill(note, errorBox(error));
      } finally {
        reloading = undefined;
      }
    })();
    return reloading;
  }

  const task = h("input", {
    name: "task",
    placeholder: "What should the agent do?",
    required: true,
    "aria-label": "task",
  });
  const cassette = h("input", {
    name: "cassette",
    placeholder: "cassette (replay; optional)",
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
            await send("POST", wsPath(workspace.id, "sessions"), {
              task: task.value,
              ...(cassette.value ? { cassette: cassette.value } : {}),
            });
            task.value = "";
            await reload();
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
    if (
      event.workspace !== undefined &&
      event.workspace !== workspace.id &&
      event.workspace !== workspace.root
    )
      return;
    if (!event.session) return;
    pending.push(event);
    frame ||= requestAnimationFrame(flush);
  });
  const clock = setInterval(() => {
    for (const card of cards.values())
      if (!card.summary.endedAt) card.facts.textContent = factsOf(card.summary);
  }, 1000);
  void reload();
  return () => {
    gone = true;
    stop();
    clearInterval(clock);
    if (frame) cancelAnimationFrame(frame);
  };
};
