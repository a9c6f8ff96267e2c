import { describe, expect, test } from "bun:test";
import {
  type BenchRow,
  formatFigure,
  formatNumber,
  renderMarkdown,
  renderTable,
  within,
} from "../../src/pipeline/table.ts";

const rows: BenchRow[] = [
  {
    section: "agent",
    measure: "file → topic",
    ours: { value: 250_000.4, unit: "rec/s" },
    kcat: { value: 400_000, unit: "rec/s" },
    rsyslog: { value: 175_000, unit: "rec/s" },
    goal: "≥ 50 % of kcat -P",
    met: true,
  },
  {
    section: "agent",
    measure: "peak RSS",
    ours: { value: 91.5, unit: "MB" },
    goal: "≤ 80 MB",
    met: false,
    note: "50k/s",
  },
  { section: "peers", measure: "kcat -C", kcat: { value: 1.234, unit: "s" } },
];

describe("bench table", () => {
  test("shows ours beside kcat and rsyslog, with the goal and whether it was met", () => {
    const text = renderTable(rows);
    expect(text).toContain("250,000 rec/s");
    expect(text).toContain("400,000 rec/s");
    expect(text).toContain("175,000 rec/s");
    expect(text).toContain("≥ 50 % of kcat -P");
    expect(text).toContain("peak RSS (50k/s)");
    expect(text).toContain("NO");
    expect(text).toContain("1.23 s");
    expect(text).not.toContain("\x1b["); // no colours
  });

  test("as Markdown has one line per row under the header", () => {
    const lines = renderMarkdown(rows).split("\n");
    expect(lines.length).toBe(2 + rows.length);
    expect(lines[2]).toBe(
      "| agent | file → topic | 250,000 rec/s | 400,000 rec/s | 175,000 rec/s | ≥ 50 % of kcat -P | yes |",
    );
    expect(lines[4]).toContain("| – |");
  });
});

describe("number formatting and goal checks", () => {
  test("a figure with digits shows them (360.1 obj/h is above a 360 goal)", () => {
    expect(formatFigure({ value: 360.06, unit: "obj/h", digits: 1 })).toBe("360.1 obj/h");
    expect(formatFigure({ value: 360.06, unit: "obj/h" })).toBe("360 obj/h");
  });

  test("a figure with a range shows it after the unit, formatted as the value", () => {
    expect(formatFigure({ value: 389_208.4, unit: "rec/s", range: [361_740, 437_986.6] })).toBe(
      "389,208 rec/s [361,740–437,987]",
    );
    expect(formatFigure({ value: 2.5, unit: "µs/rec", range: [2.22, 2.52] })).toBe("2.5 µs/rec [2.22–2.52]");
  });

  test("formatNumber", () => {
    expect(formatNumber(1_234_567.8)).toBe("1,234,568");
    expect(formatNumber(123.4)).toBe("123");
    expect(formatNumber(12.34)).toBe("12.3");
    expect(formatNumber(0.5)).toBe("0.5");
    expect(formatNumber(0)).toBe("0");
  });

  test("within", () => {
    expect(within({ value: 80, unit: "MB" }, 80)).toBe(true);
    expect(within({ value: 81, unit: "MB" }, 80)).toBe(false);
    expect(within({ value: 99_000, unit: "" }, 100_000, true)).toBe(false);
    expect(within(undefined, 1)).toBeUndefined();
  });
});
