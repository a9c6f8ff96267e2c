/**
 * A KRaft cluster id as `kafka-storage random-uuid` prints it: 16 random bytes, base64url without padding. Like
 * Kafka's own `Uuid.randomUuid`, an id starting with `-` is drawn again: command-line parsers take it for an option.
 */
export function kafkaClusterId(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  for (;;) {
    const id = Buffer.from(random(new Uint8Array(16))).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}
