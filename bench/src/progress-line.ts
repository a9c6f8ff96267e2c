/** One progress line on stderr (rewritten in place on a terminal, one line every few seconds in a log). */
export class ProgressLine {
  private readonly tty = process.stderr.isTTY === true;
  private lastLogged = 0;
  private current = "";

  constructor(private readonly quiet = false) {}

  update(text: string): void {
    if (this.quiet) return;
    this.current = text;
    if (this.tty) {
      process.stderr.write(`\r\x1b[2K${text.slice(0, (process.stderr.columns ?? 120) - 1)}`);
    } else if (Date.now() - this.lastLogged >= 5_000) {
      this.lastLogged = Date.now();
      process.stderr.write(`${text}\n`);
    }
  }

  /** A line that stays (a finished step). */
  done(text: string): void {
    if (this.quiet) return;
    process.stderr.write(this.tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
    this.current = "";
    this.lastLogged = 0;
  }

  get text(): string {
    return this.current;
  }
}
