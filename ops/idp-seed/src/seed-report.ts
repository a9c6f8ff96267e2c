export type SeedAction = "created" | "updated" | "unchanged";

export interface SeedItem {
  /** e.g. `realm`, `client`, `role`, `user`, `password`, `client-scope`, `protocol-mapper`, `user-profile`. */
  kind: string;
  name: string;
  action: SeedAction;
}

export interface SeedReport {
  realm: string;
  items: SeedItem[];
  /** `<kind> <name>` of each item, by action. */
  created: string[];
  updated: string[];
  unchanged: string[];
  /** True when the run changed anything. */
  changed: boolean;
}

/** Collects what a seed run did, item by item. */
export class SeedReporter {
  readonly items: SeedItem[] = [];

  record(kind: string, name: string, action: SeedAction): void {
    this.items.push({ kind, name, action });
  }

  report(realm: string): SeedReport {
    const by = (action: SeedAction) => this.items.filter((i) => i.action === action).map((i) => `${i.kind} ${i.name}`);
    const created = by("created");
    const updated = by("updated");
    return {
      realm,
      items: [...this.items],
      created,
      updated,
      unchanged: by("unchanged"),
      changed: created.length + updated.length > 0,
    };
  }
}

/** Human-readable lines of a report, as the CLI prints them. */
export function formatSeedReport(report: SeedReport): string {
  const lines = report.items.map((i) => `${i.action.padEnd(10)} ${i.kind.padEnd(16)} ${i.name}`);
  const summary = `realm ${report.realm}: ${report.created.length} created, ${report.updated.length} updated, ${report.unchanged.length} unchanged`;
  return [...lines, summary].join("\n");
}
