import { MultiBar, Presets, type SingleBar } from "cli-progress";

/** One install or start task: a bar on a terminal, throttled lines in a log (CI). */
export interface ProgressTask {
  /** Moves the bar to `value` of its total; `text` says what is happening. */
  update(value: number, text?: string): void;
  setTotal(total: number): void;
  /** A line of tool output worth showing (shown at most every few seconds in a log). */
  note(text: string): void;
  done(text: string): void;
}

export interface Progress {
  task(name: string, total: number): ProgressTask;
  stop(): void;
}

const NOTE_INTERVAL_MS = 10_000;

function clip(text: string, width: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

class TerminalProgress implements Progress {
  private readonly bars = new MultiBar(
    {
      format: " {name} [{bar}] {value}/{total} {duration}s {text}",
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      barsize: 24,
    },
    Presets.shades_classic,
  );

  task(name: string, total: number): ProgressTask {
    const bar: SingleBar = this.bars.create(total, 0, { name: name.padEnd(15), text: "" });
    return {
      update: (value, text) => bar.update(value, text === undefined ? {} : { text: clip(text, 60) }),
      setTotal: (t) => bar.setTotal(t),
      note: (text) => bar.update({ text: clip(text, 60) }),
      done: (text) => bar.update(bar.getTotal(), { text: clip(text, 60) }),
    };
  }

  stop(): void {
    this.bars.stop();
  }
}

class LogProgress implements Progress {
  constructor(private readonly write: (line: string) => void) {}

  task(name: string, initialTotal: number): ProgressTask {
    const started = Date.now();
    let total = initialTotal;
    let lastNote = Number.NEGATIVE_INFINITY;
    const say = (text: string) =>
      this.write(`[${name}] ${Math.round((Date.now() - started) / 1000)}s ${clip(text, 160)}`);
    const throttled = (text: string) => {
      if (Date.now() - lastNote < NOTE_INTERVAL_MS) return;
      lastNote = Date.now();
      say(text);
    };
    return {
      update: (value, text) => throttled(`${value}/${total}${text ? ` ${text}` : ""}`),
      setTotal: (t) => {
        total = t;
      },
      note: throttled,
      done: (text) => say(`done: ${text}`),
    };
  }

  stop(): void {}
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (stream.isTTY) return new TerminalProgress();
  return new LogProgress((line) => stream.write(`${line}\n`));
}

/** For callers (tests) that want no output. */
export const silentProgress: Progress = {
  task: () => ({ update() {}, setTotal() {}, note() {}, done() {} }),
  stop() {},
};
