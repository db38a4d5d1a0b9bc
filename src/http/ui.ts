import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The web UI's files (built by `npm run build` into dist/ui from ui/): `/` is its page, `/ui/...` its
 * scripts and styles. They are read from umbra's installation, never from a workspace, and a request
 * names one by letters, digits, dashes and slashes only (no dot but the extension's). Every answer carries the page's CSP:
 * scripts and styles from this origin only, no inline script, no eval, no connection elsewhere, frames
 * only of this origin (the eval report, itself sandboxed), and Trusted Types required, so that no
 * string can become HTML through innerHTML even by mistake.
 */

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** dist/ui, from this module's place: dist/http/ui.js, or src/http/ui.ts when tests run the sources. */
const UI_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "ui");

/** A served file: what it is and how to send it. */
export interface UiFile {
  body: Buffer;
  type: string;
}

const NAME = /^[a-z0-9-]+(\/[a-z0-9-]+)*\.(js|css|html)$/;

/** The UI file for a GET of `pathname`, or undefined when it is none of them (or dist/ui is not built). */
export async function uiFile(pathname: string): Promise<UiFile | undefined> {
  const name = pathname === "/" ? "index.html" : pathname.startsWith("/ui/") ? pathname.slice(4) : undefined;
  if (name === undefined || !NAME.test(name)) return undefined;
  const type = TYPES[name.slice(name.lastIndexOf(".") + 1)];
  if (!type) return undefined;
  try {
    return { body: await readFile(join(UI_DIR, name)), type };
  } catch {
    return undefined;
  }
}
