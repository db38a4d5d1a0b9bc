import { ApiError } from "./api.js";
import { h } from "./dom.js";
import type { Workspace } from "./wire.js";

/** What a page (agents, review, ...) is given: the workspace, the route's parameters, where to draw. */
export interface ViewContext {
  workspace: Workspace;
  params: URLSearchParams;
  main: HTMLElement;
  /** Go to another route (`#/review?branch=...`). */
  go(route: string): void;
}

/** A page: draws into `main`; what it returns is called when the user leaves it. */
export type View = (context: ViewContext) => undefined | (() => void);

/** A failure as one line for the page. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export function errorBox(error: unknown): HTMLElement {
  return h("p", { class: "error", role: "alert" }, messageOf(error));
}

/** A time as the page shows it (local, to the second); "" when absent or not a time. */
export function timeOf(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleTimeString();
}
