import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { thrownBy } from "@svc/testkit";
import { resolveClientOptions, SdkError } from "../index.ts";

function failure(input: unknown): SdkError {
  return thrownBy(() => resolveClientOptions(input), SdkError);
}

test("defaults: secure follows the token, kms_secure is true, client_id svc-cli, realm svc", () => {
  const withToken = resolveClientOptions({
    address: "127.0.0.1:50050",
    access_token: "t",
    kms_address: "kms.internal:50090",
    idp: { idp_url: "http://localhost:8082/" },
  });
  expect(withToken.main.secure).toBe(true);
  expect(withToken.kms?.secure).toBe(true);
  expect(withToken.clientId).toBe("svc-cli");
  expect(withToken.renewBeforeSeconds).toBe(60);
  expect(withToken.tokenEndpoint).toBe("http://localhost:8082/realms/svc/protocol/openid-connect/token");
  expect(resolveClientOptions({ address: "[::1]:50050" }).main.secure).toBe(false);
});

test("plain HTTP is accepted for every loopback IdP host, *.localhost included", () => {
  for (const idpUrl of ["http://127.0.0.2:8082", "http://[::1]:8082", "http://idp.localhost:8082"]) {
    const resolved = resolveClientOptions({ address: "127.0.0.1:50050", idp: { idp_url: idpUrl } });
    expect(resolved.tokenEndpoint).toBe(`${idpUrl}/realms/svc/protocol/openid-connect/token`);
  }
});

test.each([
  [{ address: "no-port" }, "address"],
  [{ address: "host:70000" }, "address"],
  [{ address: "127.0.0.1:50050", kms_address: "kms" }, "kms_address"],
  [{ address: "127.0.0.1:50050", secure: "yes" }, "secure"],
  [{ address: "127.0.0.1:50050", unknown_option: 1 }, "unknown_option"],
  [{ address: "127.0.0.1:50050", renew_before_seconds: -1 }, "renew_before_seconds"],
  [{ address: "127.0.0.1:50050", refresh_token: "r" }, "idp"],
  [{ address: "127.0.0.1:50050", idp: { token_endpoint: "x", idp_url: "y" } }, "idp"],
  [{ address: "127.0.0.1:50050", idp: { token_endpoint: "not a url" } }, "idp.token_endpoint"],
  [{ address: "127.0.0.1:50050", idp: { token_endpoint: "ftp://idp/t" } }, "idp.token_endpoint"],
  [{ address: "127.0.0.1:50050", idp: { idp_url: "http://idp.example.com" } }, "idp.idp_url"],
  [{ address: "127.0.0.1:50050", on_tokens_renewed: "nope" }, "on_tokens_renewed"],
  [null, "(options)"],
])("%j is rejected naming %s", (input, field) => {
  const error = failure(input);
  expect(error.code).toBe("SDK_CONFIG_INVALID");
  expect(error.subject).toBe(field);
});

test("an unreadable or non-PEM ca_cert / kms_ca_cert fails with SDK_CA_CERT_UNREADABLE", () => {
  const dir = mkdtempSync(join(tmpdir(), "sdk-ca-"));
  try {
    const notPem = join(dir, "not.pem");
    writeFileSync(notPem, "hello");
    const missing = failure({ address: "127.0.0.1:1", ca_cert: join(dir, "missing.pem") });
    expect([missing.code, missing.subject]).toEqual(["SDK_CA_CERT_UNREADABLE", "ca_cert"]);
    const garbage = failure({ address: "127.0.0.1:1", kms_address: "127.0.0.1:2", kms_ca_cert: notPem });
    expect([garbage.code, garbage.subject]).toEqual(["SDK_CA_CERT_UNREADABLE", "kms_ca_cert"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
