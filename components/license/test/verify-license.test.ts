import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KeyObject } from "node:crypto";
import { join } from "node:path";
import { rejectionOf } from "@svc/testkit";
import { exportPKCS8 } from "jose";
import { LicenseError, verifyLicense } from "../index.ts";
import { captureLogger, DAY, type Fixture, makeFixture, NOW, NOW_S } from "./support/license-fixture.ts";

let fx: Fixture;

beforeAll(async () => {
  fx = await makeFixture("ES256");
});

afterAll(() => fx?.remove());

const failure = (promise: Promise<unknown>) => rejectionOf(promise, LicenseError);

/** The fixture's private key as PEM of the given kind (what an operator might paste by mistake). */
function privatePem(key: CryptoKey, kind: "pkcs1" | "sec1" | "encrypted"): string {
  const object = KeyObject.from(key);
  if (kind === "encrypted") {
    return String(object.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: "license-test" }));
  }
  return String(object.export({ type: kind, format: "pem" }));
}

describe("verifyLicense", () => {
  test("a valid license far from expiry: subject, expiry, days left, no warning", async () => {
    const path = await fx.writeLicense("valid.jwt", { sub: "customer-1", exp: NOW_S + 90 * DAY, seats: 5 });
    const log = captureLogger();
    const license = await verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: log.logger });
    expect(license.subject).toBe("customer-1");
    expect(license.expiresAt.toISOString()).toBe("2025-04-01T00:00:00.000Z");
    expect(license.daysLeft).toBe(90);
    expect(license.claims.seats).toBe(5);
    expect(log.warnings()).toEqual([]);
    expect(log.lines.map((line) => line.event)).toEqual(["license_valid"]);
  });

  test("a license within 30 days logs a JSON warning with the days left", async () => {
    const path = await fx.writeLicense("soon.jwt", { sub: "customer-1", exp: NOW_S + 12 * DAY + 3600 });
    const log = captureLogger();
    const license = await verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: log.logger });
    expect(license.daysLeft).toBe(12);
    const [warning] = log.warnings();
    expect(warning).toMatchObject({ event: "license_expiring", daysLeft: 12, path });
    expect(warning?.msg).toContain("12 days");
  });

  test("warnDays changes the threshold", async () => {
    const path = await fx.writeLicense("warn.jwt", { exp: NOW_S + 40 * DAY });
    const log = captureLogger();
    await verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, warnDays: 45, logger: log.logger });
    expect(log.warnings()).toHaveLength(1);
  });

  test("the key may be a JWK or a PEM file", async () => {
    const path = await fx.writeLicense("jwk.jwt", { exp: NOW_S + 90 * DAY });
    const { logger } = captureLogger();
    expect((await verifyLicense({ path, publicKeyJwk: fx.publicKeyJwk, now: NOW, logger })).daysLeft).toBe(90);
    expect((await verifyLicense({ path, publicKeyFile: fx.publicKeyFile, now: NOW, logger })).daysLeft).toBe(90);
  });

  test.each(["RS256", "EdDSA"] as const)("%s licenses verify too", async (alg) => {
    const other = await makeFixture(alg);
    try {
      const path = await other.writeLicense("t.jwt", { exp: NOW_S + 90 * DAY });
      const license = await verifyLicense({
        path,
        publicKeyPem: other.publicKeyPem,
        now: NOW,
        logger: captureLogger().logger,
      });
      expect(license.daysLeft).toBe(90);
    } finally {
      other.remove();
    }
  });

  test("an expired license: LICENSE_EXPIRED", async () => {
    const path = await fx.writeLicense("expired.jwt", { exp: NOW_S - 60 });
    const error = await failure(
      verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_EXPIRED");
    expect(error.subject).toBe(path);
  });

  test("a license signed by another key: LICENSE_INVALID_SIGNATURE", async () => {
    const path = await fx.writeLicense("other.jwt", { exp: NOW_S + 90 * DAY });
    const error = await failure(
      verifyLicense({ path, publicKeyPem: fx.otherPublicKeyPem, now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_INVALID_SIGNATURE");
  });

  test("a license whose algorithm does not match the key type: LICENSE_INVALID_SIGNATURE", async () => {
    const rsa = await makeFixture("RS256");
    try {
      const path = await rsa.writeLicense("rsa.jwt", { exp: NOW_S + 90 * DAY });
      const error = await failure(
        verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: captureLogger().logger }),
      );
      expect(error.code).toBe("LICENSE_INVALID_SIGNATURE");
    } finally {
      rsa.remove();
    }
  });

  test("a tampered payload: LICENSE_INVALID_SIGNATURE", async () => {
    const path = await fx.writeLicense("tamper.jwt", { sub: "a", exp: NOW_S + 90 * DAY });
    const [header, , signature] = (await Bun.file(path).text()).trim().split(".");
    const forged = Buffer.from(JSON.stringify({ sub: "b", exp: NOW_S + 900 * DAY })).toString("base64url");
    const tampered = fx.write("tampered.jwt", `${header}.${forged}.${signature}`);
    const error = await failure(
      verifyLicense({ path: tampered, publicKeyPem: fx.publicKeyPem, now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_INVALID_SIGNATURE");
  });

  test("a missing file: LICENSE_UNREADABLE", async () => {
    const path = join(fx.dir, "missing.jwt");
    const error = await failure(verifyLicense({ path, publicKeyPem: fx.publicKeyPem, logger: captureLogger().logger }));
    expect(error.code).toBe("LICENSE_UNREADABLE");
    expect(error.subject).toBe(path);
  });

  test("a directory instead of a file: LICENSE_UNREADABLE", async () => {
    const error = await failure(
      verifyLicense({ path: fx.dir, publicKeyPem: fx.publicKeyPem, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_UNREADABLE");
  });

  test.each([
    ["empty", ""],
    ["not a JWT", "hello world"],
    ["bad base64 parts", "a.b.c"],
  ])("malformed (%s): LICENSE_MALFORMED", async (name, text) => {
    const path = fx.write(`${name.replaceAll(" ", "-")}.jwt`, text);
    const error = await failure(verifyLicense({ path, publicKeyPem: fx.publicKeyPem, logger: captureLogger().logger }));
    expect(error.code).toBe("LICENSE_MALFORMED");
  });

  test("a signed license without exp: LICENSE_MALFORMED", async () => {
    const path = await fx.writeLicense("noexp.jwt", { sub: "customer-1" });
    const error = await failure(
      verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_MALFORMED");
  });

  test("an exp that is not a number: LICENSE_MALFORMED", async () => {
    const path = await fx.writeLicense("strexp.jwt", { exp: String(NOW_S + 90 * DAY) as never });
    const error = await failure(
      verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_MALFORMED");
  });

  test("a license with nbf in the future: LICENSE_NOT_YET_VALID", async () => {
    const path = await fx.writeLicense("nbf.jwt", { nbf: NOW_S + DAY, exp: NOW_S + 90 * DAY });
    const error = await failure(
      verifyLicense({ path, publicKeyPem: fx.publicKeyPem, now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_NOT_YET_VALID");
  });

  test.each([
    ["no key", {}],
    ["two keys", { publicKeyPem: "x", publicKeyFile: "y" }],
    ["garbage PEM", { publicKeyPem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n" }],
    ["missing key file", { publicKeyFile: "/nonexistent/license.pub.pem" }],
  ])("key problem (%s): LICENSE_KEY_INVALID", async (_name, keyOptions) => {
    const path = await fx.writeLicense("k.jwt", { exp: NOW_S + 90 * DAY });
    const error = await failure(verifyLicense({ path, ...keyOptions, now: NOW, logger: captureLogger().logger }));
    expect(error.code).toBe("LICENSE_KEY_INVALID");
  });

  test("an unsupported key type (EC P-384): LICENSE_KEY_INVALID", async () => {
    const { generateKeyPair, exportSPKI } = await import("jose");
    const p384 = await generateKeyPair("ES384", { extractable: true });
    const path = await fx.writeLicense("p384.jwt", { exp: NOW_S + 90 * DAY });
    const error = await failure(
      verifyLicense({ path, publicKeyPem: await exportSPKI(p384.publicKey), now: NOW, logger: captureLogger().logger }),
    );
    expect(error.code).toBe("LICENSE_KEY_INVALID");
  });

  describe("the license PRIVATE key is refused as the verification key, even for a license it signed", () => {
    test("PKCS#8 PEM (BEGIN PRIVATE KEY), given as text or as the key file", async () => {
      const path = await fx.writeLicense("priv-pkcs8.jwt", { exp: NOW_S + 90 * DAY });
      const pem = await exportPKCS8(fx.privateKey);
      const { logger } = captureLogger();
      const asText = await failure(verifyLicense({ path, publicKeyPem: pem, now: NOW, logger }));
      expect(asText.code).toBe("LICENSE_KEY_INVALID");
      const keyFile = fx.write("license.key.pem", pem);
      const asFile = await failure(verifyLicense({ path, publicKeyFile: keyFile, now: NOW, logger }));
      expect(asFile.code).toBe("LICENSE_KEY_INVALID");
      expect(asFile.subject).toBe(keyFile);
    });

    test.each([
      ["RS256", "pkcs1"],
      ["ES256", "sec1"],
      ["ES256", "encrypted"],
    ] as const)("%s key as %s PEM (RSA / EC / ENCRYPTED PRIVATE KEY)", async (alg, kind) => {
      const own = await makeFixture(alg);
      try {
        const path = await own.writeLicense("priv.jwt", { exp: NOW_S + 90 * DAY });
        const pem = privatePem(own.privateKey, kind);
        expect(pem).toMatch(/-----BEGIN (RSA |EC |ENCRYPTED )PRIVATE KEY-----/);
        const error = await failure(
          verifyLicense({ path, publicKeyPem: pem, now: NOW, logger: captureLogger().logger }),
        );
        expect(error.code).toBe("LICENSE_KEY_INVALID");
      } finally {
        own.remove();
      }
    });

    test("a JWK with the private member d", async () => {
      expect(fx.privateKeyJwk.d).toBeDefined();
      const path = await fx.writeLicense("priv-jwk.jwt", { exp: NOW_S + 90 * DAY });
      const error = await failure(
        verifyLicense({ path, publicKeyJwk: fx.privateKeyJwk, now: NOW, logger: captureLogger().logger }),
      );
      expect(error.code).toBe("LICENSE_KEY_INVALID");
    });
  });
});
