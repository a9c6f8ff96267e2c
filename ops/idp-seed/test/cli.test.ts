import { expect, test } from "bun:test";
import { join } from "node:path";
import { randomName } from "@svc/testkit";
import { LOCAL_USER_PASSWORD_DEFAULT } from "../index.ts";
import { deleteRealm, idp, passwordGrant } from "./helpers.ts";

const cli = join(import.meta.dir, "..", "src", "cli.ts");

function run(env: Record<string, string>) {
  const { PATH, HOME } = process.env;
  return Bun.spawnSync(["bun", "run", cli], { env: { PATH: PATH ?? "", HOME: HOME ?? "", ...env } });
}

test("a wrong admin password exits non-zero and prints IDP_ADMIN_AUTH_FAILED", () => {
  const result = run({
    IDP_URL: idp.url,
    IDP_REALM: randomName("seed-cli"),
    IDP_BOOTSTRAP_ADMIN_USER: idp.adminUser,
    IDP_BOOTSTRAP_ADMIN_PASSWORD: randomName("wrong"),
    IDP_LOCAL_USER_PASSWORD: "unused",
  });
  expect(result.exitCode).toBe(1);
  expect(result.stderr.toString()).toContain("[IDP_ADMIN_AUTH_FAILED]");
});

test("a missing user password for an IdP not on the local host exits non-zero and names the variable", () => {
  const result = run({ IDP_URL: "https://idp.example", IDP_BOOTSTRAP_ADMIN_PASSWORD: "x" });
  expect(result.exitCode).toBe(1);
  const stderr = result.stderr.toString();
  expect(stderr).toContain("IDP_LOCAL_USER_PASSWORD");
  expect(stderr).toContain("[IDP_SEED_CONFIG_INVALID]");
});

test("without IDP_LOCAL_USER_PASSWORD the local stack's IdP is seeded with the local default password", async () => {
  const realm = randomName("seed-cli");
  try {
    const result = run({
      SVC_STACK_IDP_URL: idp.url,
      IDP_REALM: realm,
      IDP_BOOTSTRAP_ADMIN_USER: idp.adminUser,
      IDP_BOOTSTRAP_ADMIN_PASSWORD: idp.adminPassword,
    });
    expect(result.stderr.toString()).toBe("");
    expect(result.exitCode).toBe(0);
    const grant = await passwordGrant(realm, "security", LOCAL_USER_PASSWORD_DEFAULT);
    expect(grant.status).toBe(200);
  } finally {
    await deleteRealm(realm);
  }
});
