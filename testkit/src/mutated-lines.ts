import { seededRandom } from "./seeded-random.ts";

/** Bytes a mutation inserts or writes over, most of them JSON syntax (the rest: any byte). */
const ALPHABET = Buffer.from('{}[]":,.-+0123456789eE \t\\/ux"a');

/**
 * `count` lines, each one of `lines` with 0–2 random bytes deleted, inserted or overwritten: deterministic for a
 * `seed` (`seededRandom`), so a parser's fast path can be held against its reference on the same inputs every run.
 */
export function* mutatedLines(lines: readonly string[], count: number, seed: number): Generator<Buffer> {
  const next = seededRandom(seed);
  const random = (n: number) => Math.floor(next() * n);
  for (let i = 0; i < count; i += 1) {
    let mutated = Buffer.from(lines[random(lines.length)] as string);
    for (let m = 0, edits = random(3); m < edits; m += 1) {
      const at = random(mutated.length + 1);
      const op = random(3);
      const byte = random(4) === 0 ? random(256) : (ALPHABET[random(ALPHABET.length)] as number);
      if (op === 0) mutated = Buffer.concat([mutated.subarray(0, at), mutated.subarray(at + 1)]);
      else if (op === 1) mutated = Buffer.concat([mutated.subarray(0, at), Buffer.from([byte]), mutated.subarray(at)]);
      else if (at < mutated.length)
        mutated = Buffer.concat([mutated.subarray(0, at), Buffer.from([byte]), mutated.subarray(at + 1)]);
    }
    yield mutated;
  }
}
