/** A `window/showMessage` or `window/logMessage` from a server. */
export interface ServerMessage {
  /** LSP MessageType: 1 error, 2 warning, 3 info, 4 log. */
  type: number;
  text: string;
}

const ERROR = 1;
const MAX_CHARS = 300;

/**
 * One line of a server's message: without gopls' leading timestamp and trailing `key=value` lines,
 * whitespace collapsed, at most 300 characters.
 */
export function messageLine(text: string): string {
  const kept = text
    .split("\n")
    .filter((line) => !/^\s*\w+=\S*\s*$/.test(line))
    .join(" ")
    .replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d(\.\d+)? /, "")
    .replace(/\s+/g, " ")
    .trim();
  return kept.length > MAX_CHARS ? `${kept.slice(0, MAX_CHARS - 1)}…` : kept;
}

/**
 * Whether a message says the server could not load the project: an error shown to the user, or a
 * message matching the language's `loadErrors` (gopls logs "errors loading workspace" on every
 * snapshot it cannot load, and shows "Error loading packages" as information).
 */
export function isLoadFailure(message: ServerMessage, pattern: RegExp | undefined, shown: boolean): boolean {
  if (shown && message.type === ERROR) return true;
  return pattern !== undefined && message.type <= 3 && pattern.test(message.text);
}

/** What a server reported about loading the project, since the last look. */
export class LoadProblems {
  private pending: string[] = [];

  constructor(private readonly pattern: RegExp | undefined) {}

  /** Records a message if it reports a load failure (`shown`: it came as `window/showMessage`). */
  record(message: ServerMessage, shown: boolean): void {
    if (!isLoadFailure(message, this.pattern, shown)) return;
    const line = messageLine(message.text);
    if (line && !this.pending.includes(line)) this.pending.push(line);
  }

  /** The problems recorded since the last call (each once), and forgets them. */
  take(): string[] {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  clear(): void {
    this.pending = [];
  }
}
