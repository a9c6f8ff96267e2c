import { dutyCounter } from "@svc/component-runtime/metrics";

const keysLoaded = dutyCounter(
  "svc_shaper_keys_loaded_total",
  "Index keys received through LoadKeys (each load replaces the held keys; a new leader is given every key again)",
);

export interface HeldKey {
  keyId: string;
  material: string;
}

/** The keys of loaded indexes, in memory only (a new replica starts empty; the backend leader reloads them). */
export class KeyRing {
  private keys = new Map<string, HeldKey>();
  /** New at every start: the backend sees from it that a shaper must be given the keys again. */
  readonly incarnation = Bun.randomUUIDv7();

  replace(keys: readonly { indexName: string; keyId: string; material: string }[]): number {
    this.keys = new Map(keys.map((k) => [k.indexName, { keyId: k.keyId, material: k.material }]));
    keysLoaded.inc(this.keys.size);
    return this.keys.size;
  }

  get(indexName: string): HeldKey | undefined {
    return this.keys.get(indexName);
  }

  get size(): number {
    return this.keys.size;
  }
}
