import Table from "cli-table3";

/** One measured figure: the number and its unit (`records/s`, `MB/s`, `ms`, `MB`, `objects/h`). */
export interface Figure {
  value: number;
  unit: string;
  /** Decimals to show, when the default rounding would hide what the goal compares (360.1 is above 360). */
  digits?: number;
  /** The lowest and highest over the run's rounds (`--rounds`), shown after the value. */
  range?: [number, number] | undefined;
}

/** One row of the bench table: ours beside kcat (the limit) and rsyslog (the usual shipper), and the goal. */
export interface BenchRow {
  section: string;
  measure: string;
  ours?: Figure | undefined;
  kcat?: Figure | undefined;
  rsyslog?: Figure | undefined;
  /** The goal, in words (`≥ 50 % of kcat -P`). */
  goal?: string | undefined;
  /** Whether the goal was met; undefined when the row has no goal or a figure is missing. */
  met?: boolean | undefined;
  note?: string | undefined;
}

/** `12,345` for large numbers, 3 significant digits for small ones. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs === 0) return "0";
  return value.toPrecision(3).replace(/\.?0+$/, "");
}

export function formatFigure(figure: Figure | undefined): string {
  if (figure === undefined) return "–";
  const format = (value: number) => (figure.digits === undefined ? formatNumber(value) : value.toFixed(figure.digits));
  const range = figure.range ? ` [${format(figure.range[0])}–${format(figure.range[1])}]` : "";
  return `${format(figure.value)} ${figure.unit}${range}`;
}

function verdict(row: BenchRow): string {
  if (row.met === undefined) return row.goal ? "?" : "";
  return row.met ? "yes" : "NO";
}

/** The table as text (cli-table3, no colours so it pastes into Markdown notes and logs). */
export function renderTable(rows: readonly BenchRow[]): string {
  const table = new Table({
    head: ["section", "measure", "ours", "kcat", "rsyslog", "goal", "met"],
    style: { head: [], border: [] },
  });
  for (const row of rows) {
    table.push([
      row.section,
      row.note ? `${row.measure} (${row.note})` : row.measure,
      formatFigure(row.ours),
      formatFigure(row.kcat),
      formatFigure(row.rsyslog),
      row.goal ?? "",
      verdict(row),
    ]);
  }
  return table.toString();
}

/** The same table as Markdown (for bench/README.md). */
export function renderMarkdown(rows: readonly BenchRow[]): string {
  const lines = [
    "| section | measure | ours | kcat | rsyslog | goal | met |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const measure = row.note ? `${row.measure} (${row.note})` : row.measure;
    const cells = [row.section, measure, formatFigure(row.ours), formatFigure(row.kcat), formatFigure(row.rsyslog)];
    lines.push(`| ${[...cells, row.goal ?? "", verdict(row)].join(" | ")} |`);
  }
  return lines.join("\n");
}

/** `value ≤ limit` (or ≥ with `atLeastLimit`), undefined when missing. */
export function within(value: Figure | undefined, limit: number, atLeastLimit = false): boolean | undefined {
  if (value === undefined) return undefined;
  return atLeastLimit ? value.value >= limit : value.value <= limit;
}
