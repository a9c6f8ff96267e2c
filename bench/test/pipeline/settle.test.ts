import { expect, test } from "bun:test";
import { stackEnv } from "@svc/testkit";
import { settle } from "../../src/pipeline/settle.ts";

test("settle checkpoints PostgreSQL, syncs and measures at least one idle window", async () => {
  const settled = await settle(stackEnv().postgresUrl, 5_000);
  expect(settled.ms).toBeGreaterThanOrEqual(500);
  expect(settled.idle).toBeGreaterThanOrEqual(0);
  expect(settled.idle).toBeLessThanOrEqual(1);
});

test("settle fails when it cannot log in to PostgreSQL for the CHECKPOINT (a bad password)", async () => {
  const url = new URL(stackEnv().postgresUrl);
  url.password = "not-the-password";
  await expect(settle(url.toString(), 5_000)).rejects.toThrow();
});
