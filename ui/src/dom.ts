/**
 * The page's only way to make elements: text goes in as text nodes (`textContent`), never as HTML, so
 * nothing the workspace or an agent wrote can become markup or script. The page's CSP also requires
 * Trusted Types, so an `innerHTML` of a string would throw.
 */

export type Child = Node | string | number | false | null | undefined | readonly Child[];

type Handler = (event: Event) => void;

export interface Attrs {
  class?: string;
  /** Handlers: `on: { click: ... }`. */
  on?: Record<string, Handler>;
  /** Everything else is set as an attribute (never an `on*` one). */
  [name: string]: string | number | boolean | undefined | Record<string, Handler>;
}

function append(parent: Node, child: Child): void {
  if (child === false || child === null || child === undefined) return;
  if (Array.isArray(child)) {
    for (const each of child as readonly Child[]) append(parent, each);
    return;
  }
  parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
}

/** An element: `h("button", { on: { click } }, "Stop")`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "on") {
      for (const [type, handler] of Object.entries(value as Record<string, Handler>))
        element.addEventListener(type, handler);
    } else if (name.toLowerCase().startsWith("on")) {
      throw new Error(`h(): set handlers with on: {...}, not the attribute ${name}`);
    } else if (value === true) element.setAttribute(name, "");
    else if (value !== false && value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

/** Replaces what `parent` holds. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}
