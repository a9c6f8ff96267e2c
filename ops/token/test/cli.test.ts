import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_USER_PASSWORD_DEFAULT } from "@svc/idp-seed";
import { decodeClaims } from "../index.ts";
import { seedTestRealm, type TokenTestRealm } from "./helpers.ts";

const repoRoot = join(import.meta.dir, "..", "..", "..");
const cli = join(import.meta.dir, "..", "src", "cli.ts");
const dir = mkdtempSync(join(tmpdir(), "token-cli-"));
let seeded: TokenTestRealm | undefined;
let realm = "";
let password = "";
let client: TokenTestRealm["client"];

function run(args: string[], extraEnv: Record<string, string> = {}, stdin?: string) {
  const { PATH, HOME } = process.env;
  const result = Bun.spawnSync(["bun", "run", cli, ...args], {
    env: { PATH: PATH ?? "", HOME: HOME ?? "", IDP_URL: client.url, IDP_REALM: realm, ...extraEnv },
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** An offline refresh token of `ops`, issued through the CLI into a 0600 token file. */
function offlineRefreshToken(name: string): string {
  const path = join(dir, name);
  const issued = run(["issue", "--user", "ops", "--scope", "offline_access", "--out", path], {
    IDP_LOCAL_USER_PASSWORD: password,
  });
  expect(issued.code).toBe(0);
  return (JSON.parse(readFileSync(path, "utf8")) as { refresh_token: string }).refresh_token;
}

beforeAll(async () => {
  seeded = await seedTestRealm();
  ({ realm, password, client } = seeded);
}, 60_000);

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await seeded?.remove();
});

test("issue prints the access token of the user", () => {
  const result = run(["issue", "--user", "app"], { IDP_LOCAL_USER_PASSWORD: password });
  expect(result.code).toBe(0);
  expect(decodeClaims(result.stdout.trim()).preferred_username).toBe("app");
});

test("issue --out writes a 0600 token file that refresh --from renews into another 0600 file", () => {
  const first = join(dir, "ops.json");
  const issued = run(["issue", "--user", "ops", "--scope", "offline_access", "--out", first], {
    IDP_LOCAL_USER_PASSWORD: password,
  });
  expect(issued.code).toBe(0);
  expect(statSync(first).mode & 0o777).toBe(0o600);
  const saved = JSON.parse(readFileSync(first, "utf8")) as Record<string, unknown>;
  expect(Object.keys(saved)).toEqual(expect.arrayContaining(["access_token", "refresh_token", "expires_at"]));

  const second = join(dir, "ops-renewed.json");
  const renewed = run(["refresh", "--from", first, "--out", second]);
  expect(renewed.code).toBe(0);
  expect(statSync(second).mode & 0o777).toBe(0o600);
  const set = JSON.parse(readFileSync(second, "utf8")) as { access_token: string };
  expect(decodeClaims(set.access_token).preferred_username).toBe("ops");
});

test("a failure exits 1 with its code and the spec's advice", () => {
  const result = run(["issue", "--user", "app"], { IDP_LOCAL_USER_PASSWORD: "wrong" });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("[IDP_INVALID_CREDENTIALS]");
  expect(result.stderr).toContain("advice:");
});

test("issue from an IdP not on the local host without IDP_LOCAL_USER_PASSWORD, or refresh without a token, exits 1 with TOKEN_CONFIG_INVALID", () => {
  const issue = run(["issue", "--user", "app"], { IDP_URL: "https://idp.example" });
  expect(issue.code).toBe(1);
  expect(issue.stderr).toContain("[TOKEN_CONFIG_INVALID]");
  expect(issue.stderr).toContain("IDP_LOCAL_USER_PASSWORD");
  const refresh = run(["refresh"]);
  expect(refresh.code).toBe(1);
  expect(refresh.stderr).toContain("[TOKEN_CONFIG_INVALID]");
});

test("without IDP_LOCAL_USER_PASSWORD, issue tries the local stack's default password (wrong for this realm)", () => {
  const result = run(["issue", "--user", "app"]);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("[IDP_INVALID_CREDENTIALS]");
});

test("README: `bun run token issue --user security --scope audit:read` with only the stack's variables", async () => {
  // A realm of the test's own seeded as `ops/dev up` seeds `svc`: with the local default password.
  const local = await seedTestRealm(LOCAL_USER_PASSWORD_DEFAULT);
  try {
    const { PATH, HOME } = process.env;
    const stackVariables = Object.entries(process.env).filter(([key]) => key.startsWith("SVC_STACK_"));
    const result = Bun.spawnSync(["bun", "run", "token", "issue", "--user", "security", "--scope", "audit:read"], {
      cwd: repoRoot,
      env: { PATH: PATH ?? "", HOME: HOME ?? "", ...Object.fromEntries(stackVariables), IDP_REALM: local.realm },
    });
    expect(result.stderr.toString()).not.toContain("token:");
    expect(result.exitCode).toBe(0);
    const claims = decodeClaims(result.stdout.toString().trim());
    expect(claims.preferred_username).toBe("security");
    expect(String(claims.scope).split(" ")).toContain("audit:read");
  } finally {
    await local.remove();
  }
}, 60_000);

test("refresh --stdin reads the refresh token from standard input", () => {
  const refresh = offlineRefreshToken("stdin.json");
  const renewed = run(["refresh", "--stdin"], {}, `${refresh}\n`);
  expect(renewed.code).toBe(0);
  expect(decodeClaims(renewed.stdout.trim()).preferred_username).toBe("ops");
  const empty = run(["refresh", "--stdin"], {}, "");
  expect(empty.code).toBe(1);
  expect(empty.stderr).toContain("[TOKEN_CONFIG_INVALID]");
});

test("refresh takes the refresh token from SVC_REFRESH_TOKEN", () => {
  const renewed = run(["refresh"], { SVC_REFRESH_TOKEN: offlineRefreshToken("env.json") });
  expect(renewed.code).toBe(0);
  expect(decodeClaims(renewed.stdout.trim()).preferred_username).toBe("ops");
});

test("refresh no longer takes the refresh token as an argument (--refresh-token is an unknown option)", () => {
  const refresh = offlineRefreshToken("argv.json");
  const result = run(["refresh", "--refresh-token", refresh]);
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe("");
  expect(result.stderr).toContain("--refresh-token");
});
