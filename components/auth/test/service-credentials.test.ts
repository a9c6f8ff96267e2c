import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TempDir, tempDir, thrownBy } from "@svc/testkit";
import { AuthConfigError, DEFAULT_SERVICE_CLIENT_ID, parseAuthConfig, parseServiceCredentials } from "../index.ts";
import { DISABLED_ENV } from "./support/test-issuer.ts";

const AUTH = parseAuthConfig({ SVC_AUTH_ISSUER: "http://127.0.0.1:8082/realms/svc" });

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir("credentials");
});
afterAll(() => dir.remove());

function secretFile(name: string, content: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, content);
  return path;
}

const refused = (env: Record<string, string>) => thrownBy(() => parseServiceCredentials(env, AUTH), AuthConfigError);

test("auth disabled: no credentials, whatever the variables say", () => {
  expect(parseServiceCredentials({}, parseAuthConfig(DISABLED_ENV))).toBeUndefined();
  expect(
    parseServiceCredentials(
      { SVC_AUTH_CLIENT_SECRET: "s", SVC_AUTH_CLIENT_SECRET_FILE: "/nope" },
      parseAuthConfig(DISABLED_ENV),
    ),
  ).toBeUndefined();
});

test("the secret from SVC_AUTH_CLIENT_SECRET; the client id defaults to svc-components", () => {
  expect(parseServiceCredentials({ SVC_AUTH_CLIENT_SECRET: "s3cret" }, AUTH)).toEqual({
    clientId: "svc-components",
    clientSecret: "s3cret",
  });
  expect(DEFAULT_SERVICE_CLIENT_ID).toBe("svc-components");
  expect(parseServiceCredentials({ SVC_AUTH_CLIENT_ID: "other", SVC_AUTH_CLIENT_SECRET: "x" }, AUTH)?.clientId).toBe(
    "other",
  );
});

test("the secret from SVC_AUTH_CLIENT_SECRET_FILE, read at parse time, trailing newline trimmed", () => {
  const path = secretFile("secret", "from-file\n");
  expect(parseServiceCredentials({ SVC_AUTH_CLIENT_SECRET_FILE: path }, AUTH)?.clientSecret).toBe("from-file");
  const crlf = secretFile("secret-crlf", "from-file-2\r\n");
  expect(parseServiceCredentials({ SVC_AUTH_CLIENT_SECRET_FILE: crlf }, AUTH)?.clientSecret).toBe("from-file-2");
});

test("neither variable → AUTH_CONFIG_INVALID naming SVC_AUTH_CLIENT_SECRET (a blank value counts as unset)", () => {
  for (const env of [{}, { SVC_AUTH_CLIENT_SECRET: "  " }] as Record<string, string>[]) {
    const error = refused(env);
    expect(error.code).toBe("AUTH_CONFIG_INVALID");
    expect(error.subject).toBe("SVC_AUTH_CLIENT_SECRET");
    expect(error.message).toContain("SVC_AUTH_CLIENT_SECRET_FILE");
  }
});

test("both variables → AUTH_CONFIG_INVALID naming SVC_AUTH_CLIENT_SECRET_FILE; the secret is not in the message", () => {
  const error = refused({ SVC_AUTH_CLIENT_SECRET: "do-not-show", SVC_AUTH_CLIENT_SECRET_FILE: secretFile("b", "x") });
  expect(error.code).toBe("AUTH_CONFIG_INVALID");
  expect(error.subject).toBe("SVC_AUTH_CLIENT_SECRET_FILE");
  expect(error.message).not.toContain("do-not-show");
});

test("an empty secret file (or one holding only a newline) → AUTH_CONFIG_INVALID naming the file variable", () => {
  for (const content of ["", "\n"]) {
    const error = refused({ SVC_AUTH_CLIENT_SECRET_FILE: secretFile(`empty-${content.length}`, content) });
    expect(error.code).toBe("AUTH_CONFIG_INVALID");
    expect(error.subject).toBe("SVC_AUTH_CLIENT_SECRET_FILE");
    expect(error.message).toContain("empty");
  }
});

test("a missing or unreadable secret file → AUTH_CONFIG_INVALID naming the file variable and the reason", () => {
  const missing = refused({ SVC_AUTH_CLIENT_SECRET_FILE: join(dir.path, "absent") });
  expect(missing.subject).toBe("SVC_AUTH_CLIENT_SECRET_FILE");
  expect(missing.message).toContain("ENOENT");
  const directory = refused({ SVC_AUTH_CLIENT_SECRET_FILE: dir.path });
  expect(directory.subject).toBe("SVC_AUTH_CLIENT_SECRET_FILE");
  expect(directory.message).toContain("EISDIR");
  if (process.getuid?.() !== 0) {
    const locked = secretFile("locked", "x");
    chmodSync(locked, 0o000);
    expect(refused({ SVC_AUTH_CLIENT_SECRET_FILE: locked }).message).toContain("EACCES");
  }
});

test("a client id with whitespace → AUTH_CONFIG_INVALID naming SVC_AUTH_CLIENT_ID", () => {
  const error = refused({ SVC_AUTH_CLIENT_ID: "svc components", SVC_AUTH_CLIENT_SECRET: "s" });
  expect(error.code).toBe("AUTH_CONFIG_INVALID");
  expect(error.subject).toBe("SVC_AUTH_CLIENT_ID");
});
