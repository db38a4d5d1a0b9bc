/** A one-line progress display on a terminal's stderr; silent when stderr is not a terminal. */
export class ProgressLine {
  private last = 0;
  private shown = false;
  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = 100,
  ) {}

  get enabled(): boolean {
    return Boolean(this.stream.isTTY);
  }

  update(text: string): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < this.intervalMs) return;
    this.last = now;
    const width = this.stream.columns ?? 80;
    this.stream.write(`\r\x1b[K${text.slice(0, width - 1)}`);
    this.shown = true;
  }

  done(): void {
    if (this.shown) this.stream.write("\r\x1b[K");
    this.shown = false;
  }
}

/** Progress text such as `embed 120/4000 (3%)`. */
export function formatProgress(phase: string, done: number, total: number): string {
  if (total <= 0) return `${phase}…`;
  const whole = Math.floor(done);
  return `${phase} ${whole}/${total} (${Math.floor((100 * whole) / total)}%)`;
}
