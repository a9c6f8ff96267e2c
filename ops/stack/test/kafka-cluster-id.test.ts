import { expect, test } from "bun:test";
import { kafkaClusterId } from "../src/kafka-cluster-id.ts";

test("a cluster id is 22 base64url characters", () => {
  expect(kafkaClusterId()).toMatch(/^[A-Za-z0-9_-]{22}$/);
});

test("an id that would start with '-' is drawn again (kafka-storage read one as an option and failed)", () => {
  // 0xf8 encodes to a leading '-' in base64url; the second draw does not.
  const draws = [new Uint8Array(16).fill(0xf8), new Uint8Array(16).fill(0x01)];
  let calls = 0;
  const id = kafkaClusterId((bytes) => {
    bytes.set(draws[calls++] ?? bytes);
    return bytes;
  });
  expect(calls).toBe(2);
  expect(id.startsWith("-")).toBe(false);
  expect(Buffer.from(new Uint8Array(16).fill(0xf8)).toString("base64url").startsWith("-")).toBe(true);
});
